package queueing

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestTheory runs a small simulation: the closed forms
// where they exist (Erlang C for the shared queue with exponential
// service, none for M/D/c), the ratios, and the crossover lines — none
// in pure queueing, where one shared queue is never worse, and one with a
// per-request overhead on the shared queue that costs it the low loads.
func TestTheory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(c *TheoryConfig)
		want   []string
	}{
		{name: "pure queueing", config: func(c *TheoryConfig) {
			c.Dists, c.Rhos, c.Requests = []string{"exp", "const"}, []float64{0.3, 0.7}, 20000
		}, want: []string{
			"theory: c = 4 servers, mean service 100µs",
			"exp (SCV 1.00)", "const (SCV 0.00)",
			"(102.9) / ", // M/M/4's p50 at ρ 0.7: Erlang C
			"random ÷ shared: p50: shared wins at every ρ, no crossover; p99: shared wins at every ρ, no crossover",
			"100.0 (—) /", // M/D/4: no closed form
		}},
		{name: "overhead", config: func(c *TheoryConfig) {
			c.Dists, c.Rhos, c.Overhead, c.Requests = []string{"exp"}, []float64{0.1, 0.5}, 20*time.Microsecond, 20000
		}, want: []string{
			"the shared queue pays 20µs per request",
			"random ÷ shared: p50: crossover between ρ 0.1 and 0.5 (shared wins above)",
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			c := DefaultTheory()
			tc.config(&c)
			var out bytes.Buffer
			if err := Theory(c, &out); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestCrossover checks the crossover's reading of a ratio series.
func TestCrossover(t *testing.T) {
	rho := []float64{0.1, 0.3, 0.5, 0.7}
	for _, tc := range []struct {
		ratio []float64
		want  string
	}{
		{ratio: []float64{1.5, 1.4, 1.3, 1.2}, want: "shared wins at every ρ, no crossover"},
		{ratio: []float64{0.8, 0.9, 0.95, 0.9}, want: "partitioned wins at every ρ, no crossover"},
		{ratio: []float64{0.8, 0.99, 1.2, 1.3}, want: "crossover between ρ 0.1 and 0.5 (shared wins above)"},
		{ratio: []float64{1.2, 0.9, 1.01, 1.1}, want: "crossover between ρ 0.1 and 0.3 (partitioned wins above), crossover between ρ 0.3 and 0.7 (shared wins above)"},
		{ratio: []float64{1.0, 1.01, 1.3, 1.3}, want: "shared wins or ties at every ρ, no crossover"},
		{ratio: []float64{1.0, 0.99, 1.01, 1.0}, want: "within ±2% at every ρ, no crossover"},
		{ratio: nil, want: "no stable point"},
	} {
		if got := crossover(rho[:len(tc.ratio)], tc.ratio); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.ratio, got, tc.want)
		}
	}
}
