package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/plots"
	"concbench/plots/plotstest"
	"concbench/results"
)

// TestValidityTable checks the validity table of the synthetic run: a row
// per configuration, a column per load, "valid/total" cells with the
// most frequent main reason, and a legend of the reasons shown.
func TestValidityTable(t *testing.T) {
	_, r, pts := synthetic(t)
	v := newValidity(results.GroupPoints(r, pts))
	if got, want := v.header(), []string{"configuration", "capacity", "mechanisms 10000/s", "open 0.10", "open 0.50", "open 0.90"}; !slices.Equal(got, want) {
		t.Errorf("header %q, want %q", got, want)
	}
	want := [][]string{
		{"leaderfollowers/lifo", "5/6 — errors", "1/1", "6/6", "6/6", "6/6"},
		{"leaderfollowers/fifo", "6/6", "1/1", "6/6", "6/6", "5/6 — rate"},
		{"halfsynchalfreactive", "6/6", "1/1", "6/6", "6/6", "3/6 — over-capacity"},
		{"netpoll", "6/6", "1/1", "6/6", "3/6 — generator-lag", "0/6 — generator-lag"},
		{"proactor", "0/1 — unavailable", "—", "—", "—", "—"},
	}
	got := v.table()
	if len(got) != len(want) {
		t.Fatalf("table %q, want %q", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
	var codes []string
	for _, l := range v.legend() {
		codes = append(codes, l.Code)
		if l.Meaning == "" || strings.Contains(l.Meaning, "does not know") {
			t.Errorf("code %s has no meaning: %q", l.Code, l.Meaning)
		}
	}
	if want := []string{"errors", "rate", "over-capacity", "generator-lag", "unavailable"}; !slices.Equal(codes, want) {
		t.Errorf("legend codes %q, want %q", codes, want)
	}
	if !slices.Equal(v.empty, []string{"netpoll open 0.90"}) {
		t.Errorf("cells without a valid point %q, want netpoll open 0.90 only (proactor is unavailable, not invalid)", v.empty)
	}
}

// TestValidityCellReason checks a cell's main reason: the most frequent
// first check among its points that are not valid, failed and
// unavailable counted with those words, the first seen on a tie.
func TestValidityCellReason(t *testing.T) {
	invalid := func(checks ...loadgen.Check) results.Point {
		reasons := make([]string, len(checks))
		for i := range reasons {
			reasons[i] = "reason"
		}
		return results.Point{Status: results.StatusOK, Load: &loadgen.Result{Reasons: reasons, Checks: checks}}
	}
	valid := results.Point{Status: results.StatusOK, Load: &loadgen.Result{Valid: true}}
	failed := results.Point{Status: results.StatusFailed}
	tests := []struct {
		name string
		pts  []results.Point
		want string
	}{
		{name: "all valid", pts: []results.Point{valid, valid}, want: "2/2"},
		{name: "the first check counts", pts: []results.Point{invalid(loadgen.CheckRate, loadgen.CheckBias), invalid(loadgen.CheckBias), invalid(loadgen.CheckBias), valid},
			want: "1/4 — generator-lag"},
		{name: "failed counts as not valid", pts: []results.Point{failed, failed, invalid(loadgen.CheckRate), valid}, want: "1/4 — failed"},
		{name: "a tie: the first seen", pts: []results.Point{invalid(loadgen.CheckOverCapacity), failed, valid}, want: "1/3 — over-capacity"},
		{name: "no check recorded", pts: []results.Point{invalid(), valid}, want: "1/2 — unclassified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.pts {
				tc.pts[i].Config = results.ModelConfig{Name: "m", Model: "m"}
				tc.pts[i].Kind, tc.pts[i].Fraction, tc.pts[i].Repetition = results.KindOpen, 0.5, i
			}
			v := newValidity(results.GroupPoints(&results.Run{}, tc.pts))
			if got := v.table()[0][1]; got != tc.want {
				t.Errorf("cell %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBanner checks the rule of the mostly-invalid banner and what it
// says: a run with a configuration/load without any valid point, or with
// more than half of its measured points invalid, gets it, with the
// fraction valid, the main reason and what to do; a mostly valid run
// does not, and neither does an unavailable model.
func TestBanner(t *testing.T) {
	_, r, pts := synthetic(t)
	markInvalid := func(p *results.Point, c loadgen.Check) {
		p.Load.Valid, p.Load.Reasons, p.Load.Checks = false, []string{"reason"}, []loadgen.Check{c}
	}
	tests := []struct {
		name string
		pts  []results.Point
		want []string // substrings; none: no banner
	}{
		{name: "synthetic: one load without a valid point", pts: pts, want: []string{
			"Gaps in this run: 86 of 99 measured points (87%) have a valid load-generator verdict",
			"1 configuration/load pair has no valid point at all (netpoll open 0.90)",
			"Most frequent reason: generator-lag, 9 points (the load generator's own lateness moved a reported latency percentile). What to do: ",
			"make sure nothing else runs on the load generator's CPU (--load-cpus), and rerun",
		}},
		{name: "mostly valid", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Config.Name == "netpoll" && p.Fraction == 0.9 {
				p.Load.Valid, p.Load.Reasons, p.Load.Checks = true, nil, nil
			}
		})},
		{name: "all valid", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Load != nil {
				p.Load.Valid, p.Load.Reasons, p.Load.Checks = true, nil, nil
			}
		})},
		{name: "more than half invalid, every load with a valid point", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Load == nil {
				return
			}
			p.Load.Valid, p.Load.Reasons, p.Load.Checks = true, nil, nil
			if p.Repetition < 4 && p.Kind != results.KindMechanisms {
				markInvalid(p, loadgen.CheckOverCapacity)
			}
		}), want: []string{"35 of 99 measured points (35%)", "Most frequent reason: over-capacity, 64 points",
			"lower the fractions (--fractions)"}},
		{name: "half invalid is not mostly", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Load == nil {
				return
			}
			p.Load.Valid, p.Load.Reasons, p.Load.Checks = true, nil, nil
			if p.Repetition < 3 && p.Kind == results.KindOpen {
				markInvalid(p, loadgen.CheckRate)
			}
		})},
		{name: "every point of a load failed", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Load != nil {
				p.Load.Valid, p.Load.Reasons, p.Load.Checks = true, nil, nil
			}
			if p.Config.Name == "netpoll" && p.Kind == results.KindCapacity {
				p.Status, p.Load = results.StatusFailed, nil
			}
		}), want: []string{"(netpoll capacity)", "Most frequent reason: failed, 7 points", "fix the cause"}},
		{name: "no points", pts: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Banner(r, tc.pts)
			if len(tc.want) == 0 {
				if got != "" {
					t.Errorf("banner %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("banner %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestReportExcludesInvalid checks the report of the synthetic run: the
// banner opens it, the summary's cells are medians of the valid
// repetitions with the excluded ones counted, and a cell without a valid
// repetition has no number.
func TestReportExcludesInvalid(t *testing.T) {
	_, r, pts := synthetic(t)
	a := analyze(r, pts, Options{Load: 0.9})
	rep := newReport(a, nil, nil, nil)
	if !strings.HasPrefix(rep.Banner, "Gaps in this run:") {
		t.Errorf("banner %q", rep.Banner)
	}
	row := func(name string) []string {
		for _, row := range rep.SummaryRows {
			if row[0] == name {
				return row
			}
		}
		t.Fatalf("no summary row %s", name)
		return nil
	}
	// netpoll at 0.90: every repetition invalid.
	for i, cell := range row("netpoll") {
		if strings.HasSuffix(rep.SummaryHead[i], "at 0.90") {
			if cell != "no valid repetition (6 invalid excluded)" {
				t.Errorf("netpoll %s: %q, want no number", rep.SummaryHead[i], cell)
			}
		}
	}
	// leaderfollowers/lifo capacity: the median of the 5 valid runs.
	lifo := results.Find(a.Groups, "leaderfollowers/lifo", results.KindCapacity, 1)
	var valid []float64
	for _, p := range lifo.Valid() {
		valid = append(valid, p.Load.AchievedRatePerS)
	}
	st := results.Summarize(valid)
	want := fmt.Sprintf("%s [%s, %s] (1 invalid excluded)", plots.TrimFloat(st.Median), plots.TrimFloat(st.Min), plots.TrimFloat(st.Max))
	if got := row("leaderfollowers/lifo")[1]; got != want {
		t.Errorf("leaderfollowers/lifo capacity %q, want %q", got, want)
	}
}
