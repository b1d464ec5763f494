package bench

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"concbench/harness"
	"concbench/internal/testenv"
	"concbench/report"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestBenchBanner checks what bench prints after a run: a mostly invalid
// run (the synthetic one: netpoll open 0.90 has no valid point) gets the
// report's banner before the summary line; a mostly valid run does not;
// rendered, the report's path follows. The rendered run is the synthetic
// run's points that were not measured (its failed and its unavailable
// one), mostly invalid too: what is checked is what finish prints in
// what order, and a run with nothing to draw checks it without drawing
// every figure in every format (TestFigures and the plots package check
// the figures).
func TestBenchBanner(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	for _, tc := range []struct {
		name       string
		valid      bool // make every point valid
		unmeasured bool // keep only the points that were not measured
		banner     bool
		figures    bool
	}{
		{name: "mostly invalid", banner: true},
		{name: "mostly valid", valid: true},
		{name: "mostly invalid, rendered", unmeasured: true, banner: true, figures: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := resultstest.WriteTemp(t, nil, func(p *results.Point) bool {
				if l := p.Load; tc.valid && l != nil {
					l.Valid, l.Reasons, l.Checks = true, []string{}, nil
				}
				return !tc.unmeasured || !p.Measured()
			})
			read, readPts, err := results.ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := report.Banner(read, readPts)
			if (want != "") != tc.banner {
				t.Fatalf("report.Banner = %q, want a banner: %v", want, tc.banner)
			}
			sum := &harness.Summary{Dir: dir, Points: len(readPts), OK: len(readPts)}
			var out bytes.Buffer
			if err := finish(&out, sum, tc.figures); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			line := sum.String() + "\nrun: " + dir + "\n"
			if tc.banner {
				line = want + "\n\n" + line
			}
			if !strings.HasPrefix(got, line) {
				t.Errorf("stdout:\n%s\nwant it to start with:\n%s", got, line)
			}
			if tc.figures != strings.Contains(got, "report: "+filepath.Join(dir, report.ReportHTML)) {
				t.Errorf("stdout:\n%s\nrendered: %v", got, tc.figures)
			}
		})
	}
}
