package report

import (
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/plots"
	"concbench/plots/plotstest"
	"concbench/results"
)

// TestClaimsWithinWorkload is the table's promise: under two workloads
// whose costs would give the opposite decisions if one workload's LF
// were set against the other's HS/HR, every row pairs the two
// configurations of its own workload (by name), in their default forms,
// and decides from them.
func TestClaimsWithinWorkload(t *testing.T) {
	costs := map[string]map[string]float64{
		// LF cheaper under cpu, dearer under block; across workloads
		// (cpu LF 1 vs block HS/HR 4, block LF 5 vs cpu HS/HR 2) the
		// decisions would flip.
		"cpu":   {"leaderfollowers/lifo": 1, "halfsynchalfreactive": 2},
		"block": {"leaderfollowers/lifo": 5, "halfsynchalfreactive": 4},
	}
	r, pts := plotstest.ClaimsRun(t, syntheticDir, []string{"cpu", "block"}, func(cfg, w string) float64 {
		if v, ok := costs[w][cfg]; ok {
			return v
		}
		return 3
	})
	a := analyze(r, pts, Options{})
	tab := a.claims()
	if tab == nil {
		t.Fatal("no claims table")
	}
	if len(tab.rows) != len(results.Claims)*2 || len(tab.Rows) != len(tab.rows) {
		t.Fatalf("%d rows (%d cells rows), want %d: a claim per workload", len(tab.rows), len(tab.Rows), len(results.Claims)*2)
	}
	want := map[string]string{"cpu": results.ClaimShown, "block": results.ClaimRefuted}
	seen := map[string]bool{}
	for i, row := range tab.rows {
		w := row.workload
		for _, run := range []string{row.lf, row.hs} {
			if a.WorkloadOf[run] != w || !strings.HasSuffix(run, "/"+w) {
				t.Errorf("row %d (%s, workload %s) pairs %s, of workload %q", i, row.claim.Short, w, run, a.WorkloadOf[run])
			}
		}
		if row.lf != "leaderfollowers/lifo/"+w || row.hs != "halfsynchalfreactive/"+w {
			t.Errorf("row %d pairs %s with %s, want the default configurations of %s", i, row.lf, row.hs, w)
		}
		cells := tab.Rows[i]
		if cells[1] != w || cells[2] != "leaderfollowers/lifo (n=6)" || cells[3] != "halfsynchalfreactive (n=6)" {
			t.Errorf("row %d reads %q, want workload %s and the configurations' names within it", i, cells, w)
		}
		if row.Decision != want[w] {
			t.Errorf("row %d (%s, %s): %s, want %s", i, row.claim.Short, w, row.Decision, want[w])
		}
		key := row.claim.Short + "/" + w
		if seen[key] {
			t.Errorf("claim %s tested twice under %s", row.claim.Short, w)
		}
		seen[key] = true
	}
	md := tab.Markdown()
	for _, unpaired := range []string{"leaderfollowers/fifo/cpu (promotion order fifo", "halfsynchalfreactive/pooled/block (not its model's default"} {
		if !strings.Contains(md, unpaired) {
			t.Errorf("the table does not say it left %s… unpaired:\n%s", unpaired, md)
		}
	}
}

// TestClaims: the decisions are computed from the numbers — the
// synthetic run shows the context-switch claim, LF made costlier
// refutes it, equal costs leave it undecided, one repetition is too few
// to test and the table says so, no HS/HR leaves nothing to test,
// and invalid repetitions are in no test.
func TestClaims(t *testing.T) {
	_, r, pts := synthetic(t)
	var one []results.Point
	for _, p := range pts {
		if p.Repetition < 1 {
			one = append(one, p)
		}
	}
	for _, tc := range []struct {
		name string
		pts  []results.Point
		want string // the context switches row's decision; "" for no row
		note string
	}{
		{name: "shown", pts: pts, want: results.ClaimShown},
		{name: "refuted", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Config.Model == plots.ModelLF {
				p.Server.CtxswPerRequest *= 1000
			}
		}), want: results.ClaimRefuted},
		{name: "undecided", pts: plotstest.Mutate(pts, func(p *results.Point) {
			// Every configuration's values the same distribution.
			p.Server.CtxswPerRequest = 2 + 0.01*float64(p.Repetition%3)
		}), want: results.ClaimUndecided},
		{name: "one repetition", pts: one, want: results.ClaimUntested, note: "too few valid repetitions to compare"},
		{name: "nothing to test", pts: plotstest.Mutate(pts, func(p *results.Point) {
			if p.Config.Model == plots.ModelHSHR {
				p.Status = results.StatusFailed
			}
		}), note: "Nothing to test"},
		{name: "invalid repetitions are not tested", pts: plotstest.Mutate(pts, func(p *results.Point) {
			// Two of LF's six repetitions at 0.50 become far costlier
			// than HS/HR's, and invalid: mixed in they would refute the
			// claim's certainty; excluded, the 4 valid ones show it.
			if p.Config.Model == plots.ModelLF && p.Kind == results.KindOpen && p.Fraction == 0.5 && p.Repetition < 2 {
				p.Server.CtxswPerRequest *= 1000
				p.Load.Valid, p.Load.Reasons, p.Load.Checks = false, []string{"send lag"}, []loadgen.Check{loadgen.CheckBias}
			}
		}), want: results.ClaimShown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := analyze(r, tc.pts, Options{}).claims()
			if tab == nil {
				t.Fatal("no claims table")
			}
			i := slices.IndexFunc(tab.rows, func(row claimRow) bool { return row.claim.Metric.Name == results.CtxswPerReq.Name })
			switch {
			case tc.want == "" && i >= 0:
				t.Errorf("a context switches row: %+v", tab.rows[i])
			case tc.want != "" && i < 0:
				t.Errorf("no context switches row in:\n%s", tab.Markdown())
			case tc.want != "" && tab.rows[i].Decision != tc.want:
				t.Errorf("decision %s, want %s:\n%s", tab.rows[i].Decision, tc.want, tab.Markdown())
			}
			if md := tab.Markdown(); !strings.Contains(md, tc.note) {
				t.Errorf("the table lacks %q:\n%s", tc.note, md)
			}
		})
	}
}

// TestClaimKey: an LF and an HS/HR configuration pair when their names
// within the workload differ only in the model and LF's promotion order
// (the suite's defaults; a thread sweep's equal counts).
func TestClaimKey(t *testing.T) {
	for _, tc := range []struct {
		lf, hs string
		pair   bool
	}{
		{lf: "leaderfollowers/lifo", hs: "halfsynchalfreactive", pair: true},
		{lf: "leaderfollowers/lifo/threads=4", hs: "halfsynchalfreactive/threads=4", pair: true},
		{lf: "leaderfollowers/lifo/threads=2", hs: "halfsynchalfreactive/threads=4", pair: false},
		{lf: "leaderfollowers/lifo", hs: "halfsynchalfreactive/pooled", pair: false},
	} {
		if got := claimKey(tc.lf, plots.ModelLF, orderLIFO) == claimKey(tc.hs, plots.ModelHSHR, ""); got != tc.pair {
			t.Errorf("%s and %s paired %t, want %t", tc.lf, tc.hs, got, tc.pair)
		}
	}
}
