package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"concbench/results"
	"concbench/results/resultstest"
)

// writeRun writes the synthetic run to a new folder, after edit changes
// its points.
func writeRun(t *testing.T, edit func(p *results.Point)) string {
	t.Helper()
	return resultstest.WriteTemp(t, nil, func(p *results.Point) bool {
		if edit != nil {
			edit(p)
		}
		return true
	})
}

// TestCompare: a run against itself differs nowhere; against a copy in
// which one configuration's server spends twice the CPU per request, that
// row, and only rows of that metric and configuration, differ — B is 2×
// A, worse.
func TestCompare(t *testing.T) {
	t.Parallel()
	a := writeRun(t, nil)
	var out bytes.Buffer
	if err := Run(Config{A: a, B: a, Metrics: DefaultMetrics, JSON: "-"}, &out); err != nil {
		t.Fatal(err)
	}
	var same struct{ Rows []Row }
	if err := json.Unmarshal(out.Bytes(), &same); err != nil {
		t.Fatalf("--json -: %v\n%s", err, out.String())
	}
	if len(same.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range same.Rows {
		if r.Verdict != "no significant difference" && r.Verdict != "not comparable" {
			t.Errorf("a run against itself: %s %s %s: %s", r.Config, r.Load, r.Metric, r.Verdict)
		}
	}

	b := writeRun(t, func(p *results.Point) {
		if p.Config.Name == "halfsynchalfreactive" {
			p.Server.CPUNsPerRequest *= 2
		}
	})
	out.Reset()
	if err := Run(Config{A: a, B: b, Metrics: []string{"cpu", "p99"}}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"halfsynchalfreactive open 0.50 server CPU per request: B is 2× [", "A (p = 0.0022; worse)",
		"leaderfollowers/lifo open 0.50 server CPU per request: no significant difference", "B/A [95% CI]"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "p99 latency: B is") {
		t.Errorf("a p99 row differs, though only the CPU changed:\n%s", text)
	}
}

func TestCompareErrors(t *testing.T) {
	t.Parallel()
	a := writeRun(t, nil)
	for _, tc := range []struct {
		config Config
		want   string
	}{
		{config: Config{A: a, B: a, Metrics: []string{"speed"}}, want: `unknown metric "speed"`},
		{config: Config{A: a, B: "/nonexistent/run", Metrics: DefaultMetrics}, want: "run B"},
	} {
		err := Run(tc.config, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compare %+v: %v, want an error containing %q", tc.config, err, tc.want)
		}
	}
}
