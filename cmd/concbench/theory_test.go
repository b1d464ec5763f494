package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestTheory runs the command on a small simulation: the closed forms
// where they exist (Erlang C for the shared queue with exponential
// service, none for M/D/c), the ratios, and the crossover lines — none
// in pure queueing, where one shared queue is never worse, and one with a
// per-request overhead on the shared queue that costs it the low loads.
func TestTheory(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "pure queueing", args: []string{"--dist", "exp,const", "--rho", "0.3,0.7", "--requests", "20000"}, want: []string{
			"theory: c = 4 servers, mean service 100µs",
			"exp (SCV 1.00)", "const (SCV 0.00)",
			"(102.9) / ", // M/M/4's p50 at ρ 0.7: Erlang C
			"random ÷ shared: p50: shared wins at every ρ, no crossover; p99: shared wins at every ρ, no crossover",
			"100.0 (—) /", // M/D/4: no closed form
		}},
		{name: "overhead", args: []string{"--dist", "exp", "--rho", "0.1,0.5", "--overhead", "20us", "--requests", "20000"}, want: []string{
			"the shared queue pays 20µs per request",
			"random ÷ shared: p50: crossover between ρ 0.1 and 0.5 (shared wins above)",
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), append([]string{"theory"}, tc.args...), nil, &out, io.Discard); err != nil {
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

// TestTheoryFlagErrors: bad input is refused by name.
func TestTheoryFlagErrors(t *testing.T) {
	checkRefused(t, "theory", nil, []flagCase{
		{name: "servers", args: []string{"--servers", "0"}, want: "--servers 0 out of range"},
		{name: "rho", args: []string{"--rho", "1"}, want: "--rho 1 out of range"},
		{name: "rho list", args: []string{"--rho", "x"}, want: "--rho"},
		{name: "dist", args: []string{"--dist", "pareto"}, want: `service distribution "pareto" unknown`},
		{name: "requests", args: []string{"--requests", "10"}, want: "--requests 10 out of range"},
		{name: "mean", args: []string{"--mean", "0s"}, want: "--mean 0s"},
		{name: "stray argument", args: []string{"extra"}, want: `unexpected argument "extra"`},
	})
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
