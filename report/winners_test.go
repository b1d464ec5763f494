package report

import (
	"path/filepath"
	"strings"
	"testing"

	"concbench/plots/plotstest"
	"concbench/results"
	"concbench/results/resultstest"
	"concbench/stats"
)

// TestWinnersGolden: the who-wins table of a suite run with a known
// winner in every cell but one — under "cpu" a wins capacity and CPU, c
// the p99, and a and b have the same context switches (a tie, both ahead
// of c); under "block" b wins capacity and p99, c the costs.
func TestWinnersGolden(t *testing.T) {
	r, pts := plotstest.WinnersRun(t, syntheticDir, map[string][4][3]float64{
		//        capacity (req/s)         p99 (µs)        CPU (µs/req)    ctxsw/req
		"cpu":   {{90000, 50000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	a := analyze(r, pts, Options{})
	tab := a.winners()
	if tab == nil {
		t.Fatal("no table")
	}
	md := tab.Markdown()
	resultstest.GoldenFile(t, filepath.Join("golden", "winners.md"), []byte(md))
	for _, tc := range []struct {
		name       string
		row, col   int
		wantPrefix string
	}{
		{"cpu SLO capacity", 0, 2, "**a**, 1.8× ahead [1]"},
		{"cpu p99", 0, 3, "**c**, 2× ahead [2]"},
		{"cpu cpu", 0, 4, "**a**, 1.5× ahead [3]"},
		{"cpu ctxsw", 0, 5, "**a ≈ b** (±25 %), 2× ahead [4]"},
		{"block SLO capacity", 1, 2, "**b**, 2× ahead"},
		{"block p99", 1, 3, "**b**, 2× ahead"},
		{"block cpu", 1, 4, "**c**, 2× ahead"},
		{"block ctxsw", 1, 5, "**c**, 4× ahead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tab.Rows[tc.row][tc.col]; !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("cell %q, want it to start with %q", got, tc.wantPrefix)
			}
		})
	}
	// Without open-loop points, the costs figures and the summary use each
	// configuration's equal-load point.
	if g := a.AtLoad("a/cpu"); !a.Equal || g == nil || g.Kind != results.KindRate || g.RatePerS != 1000 {
		t.Errorf("chosen load: equal %t, group %+v; want the rate point at 1000 req/s", a.Equal, g)
	}
	if got := tab.Rows[0][1]; got != "1000 req/s" {
		t.Errorf("equal load %q, want 1000 req/s", got)
	}
	var rep report
	rep.summary(a)
	if len(rep.SummaryHead) < 3 || rep.SummaryHead[2] != "SLO capacity (req/s)" || !strings.HasPrefix(rep.SummaryRows[0][2], "72") {
		t.Errorf("summary head %q, first row %q: want a's SLO capacity (median 72 000 req/s) in the third column", rep.SummaryHead, rep.SummaryRows[0])
	}
	if h, r := tab.Head[2], tab.Rows[1][0]; h != "SLO capacity (the workload's objective)" || r != "block (p99 ≤ 2ms)" {
		t.Errorf("SLO column %q, row %q: want the objective per workload", h, r)
	}
}

// TestAnswersLeftOutAcrossWorkloads: a run of several workloads ranks no
// configuration of one workload against another's; its answers are each
// workload's decided cells, and say why.
func TestAnswersLeftOutAcrossWorkloads(t *testing.T) {
	r, pts := plotstest.WinnersRun(t, syntheticDir, map[string][4][3]float64{
		"cpu":   {{90000, 50000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	var rep report
	a := analyze(r, pts, Options{})
	rep.Winners = a.winners()
	rep.answers(a)
	if len(rep.Answers) != 2 || rep.Answers[0].Metric != "cpu" || !strings.HasPrefix(rep.Answers[0].Text, "SLO capacity: a, 1.8× ahead") ||
		!strings.Contains(rep.AnswerNote, "This run has 2 workloads") {
		t.Errorf("answers %+v, note %q: want a line per workload of its decided cells, and a note naming the 2 workloads", rep.Answers, rep.AnswerNote)
	}
}

// TestWinnersUndecided: cells whose configurations cannot be told apart
// at the spread measured say so, with the repetitions a decision needs,
// and a search that met no rate (0) is behind, not left out.
func TestWinnersUndecided(t *testing.T) {
	r, pts := plotstest.WinnersRun(t, syntheticDir, map[string][4][3]float64{
		//        capacity (req/s)         p99 (µs)        CPU (µs/req)    ctxsw/req
		"cpu":   {{90000, 88000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1.5, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	for i := range pts {
		p := &pts[i]
		if p.Kind == results.KindSLO && p.Config.Name == "c/block" {
			p.SLO.RatePerS = 0 // no rate met the objective
		}
		if p.Kind == results.KindSLO && p.Config.Name == "b/cpu" {
			p.SLO.RatePerS *= []float64{1.4, 0.7, 1.2, 0.8, 1}[p.Repetition] // a wide spread
		}
	}
	tab := analyze(r, pts, Options{}).winners()
	if got := tab.Rows[0][2]; !strings.HasPrefix(got, "undecided (a leads; b open; 1 behind; about ") || !strings.Contains(got, "repetitions would decide)") {
		t.Errorf("cpu SLO capacity %q, want undecided with what it showed, the open rival and the repetitions it needs", got)
	}
	if got := tab.Rows[1][2]; !strings.HasPrefix(got, "**b**") {
		t.Errorf("block SLO capacity %q, want b ahead of c's zeros", got)
	}
	details := strings.Join(tab.Details, "\n")
	if !strings.Contains(details, "values were bounds") {
		t.Errorf("details %q: want the zeros' bounds named", details)
	}
	if !strings.Contains(tab.Note, "of 8 cells decided") {
		t.Errorf("note %q", tab.Note)
	}
}

// TestUndecidedText: an undecided cell says what it did show — the
// leading group, how many are behind — and which rivals are open, named
// up to maxOpenListed, counted beyond.
func TestUndecidedText(t *testing.T) {
	rival := func(name, status string) stats.Rival {
		return stats.Rival{Name: name, Status: status, Held: status != stats.Undetermined}
	}
	for _, tc := range []struct {
		d    stats.Decision
		want string
	}{
		{
			d: stats.Decision{Best: "a", Group: []string{"a", "b"}, Need: 72,
				Rivals: []stats.Rival{rival("b", stats.Equivalent), rival("c", stats.Undetermined), rival("d", stats.Behind), rival("e", stats.Behind)}},
			want: "undecided (a ≈ b within ±10 %; c open; 2 behind; about 72 repetitions would decide)",
		},
		{
			d: stats.Decision{Best: "a", Group: []string{"a"}, Need: -1,
				Rivals: []stats.Rival{rival("b", stats.Undetermined), rival("c", stats.Undetermined), rival("d", stats.Undetermined)}},
			want: "undecided (a leads; 3 open; too few valid repetitions to estimate what would decide)",
		},
		{
			d:    stats.Decision{Best: "a", Group: []string{"a"}, Need: stats.MaxNeed, Rivals: []stats.Rival{rival("b", stats.Undetermined)}},
			want: "undecided (a leads; b open; 1000 or more repetitions would decide)",
		},
	} {
		if got := undecidedText(tc.d, 0.10); got != tc.want {
			t.Errorf("undecidedText = %q, want %q", got, tc.want)
		}
	}
}

// TestNearText: a near best is named in bold with the margin, the
// configurations that may share it, named up to maxOpenListed, counted
// beyond, and how many are behind.
func TestNearText(t *testing.T) {
	for _, tc := range []struct {
		d    stats.Decision
		want string
	}{
		{d: stats.Decision{Verdict: stats.Near, Best: "a", Group: []string{"a", "b"}, Rest: []string{"c", "d"}},
			want: "**a**, within 10 % of the best (b may be too; 2 behind)"},
		{d: stats.Decision{Verdict: stats.Near, Best: "a", Group: []string{"a", "b", "c", "d"}},
			want: "**a**, within 10 % of the best (3 more may be)"},
		{d: stats.Decision{Verdict: stats.Near, Best: "a", Group: []string{"a"}, Rest: []string{"b"}},
			want: "**a**, within 10 % of the best (1 behind)"},
	} {
		if got := nearText(tc.d, 0.10); got != tc.want {
			t.Errorf("nearText = %q, want %q", got, tc.want)
		}
	}
}
