package plots

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"concbench/results"
	"concbench/stats"
)

// WinnersAlpha is the who-wins table's family-wise error rate: Holm's
// step-down procedure over the table's cells keeps the probability of
// calling any one of them wrongly at most this.
const WinnersAlpha = 0.05

// winnersTable is the report's opening table: a row per workload, a
// column per metric, each cell the best configuration, its margin over
// the runner-up and whether that margin is significant.
type winnersTable struct {
	Head []string
	Rows [][]string
	Note string
}

// winnerColumn is one metric of the table: the capacity at the
// workload's latency objective (its search's results), or a metric at
// the workload's equal absolute load. Closed-loop capacity is not in the
// table: it is the search's upper bracket, not what a user can run at
// (the capacity figure and the Summary show it).
type winnerColumn struct {
	label  string
	metric results.Metric
	atRate bool // the workload's equal-load group, else its SLO results
}

var winnerColumns = []winnerColumn{
	{"SLO capacity", results.SLOCapacity, false},
	{"p99 at equal load", results.LatencyP99, true},
	{"CPU per request", results.CPUPerReq, true},
	{"context switches per request", results.CtxswPerReq, true},
}

// suiteWorkload is one workload of the run: its name and the run names
// of its configurations with their configuration names, in report order.
type suiteWorkload struct {
	name  string
	runs  []string // run names (as in points)
	names []string // configuration names, as the table shows them
	// objective is the workload's latency objective ("p99 ≤ 1ms"), ""
	// if it has none (no search).
	objective string
}

// workloadsOf returns the run's workloads from its experiment (harness's
// Experiment: configs and workloads, each workload with an optional list
// of the configurations it runs). A run whose experiment cannot be read
// is one workload of every configuration that has points.
func (a *analysis) workloadsOf() []suiteWorkload {
	var exp struct {
		Configs []struct {
			Name string `json:"name"`
		} `json:"configs"`
		Workloads []struct {
			Name    string   `json:"name"`
			Configs []string `json:"configs"`
			SLO     *struct {
				Percentile float64 `json:"percentile"`
				Bound      string  `json:"bound"`
			} `json:"slo"`
		} `json:"workloads"`
	}
	b, err := json.Marshal(a.run.Experiment)
	if err != nil || json.Unmarshal(b, &exp) != nil || len(exp.Configs) == 0 || len(exp.Workloads) == 0 {
		w := suiteWorkload{name: "all"}
		for _, c := range a.configs {
			w.runs, w.names = append(w.runs, c.Name), append(w.names, c.Name)
		}
		return []suiteWorkload{w}
	}
	var out []suiteWorkload
	for _, w := range exp.Workloads {
		sw := suiteWorkload{name: w.Name}
		if sw.name == "" {
			sw.name = "all"
		}
		if w.SLO != nil {
			pct := w.SLO.Percentile
			if pct == 0 {
				pct = 99 // harness.DefaultSLOPercentile
			}
			if b, err := time.ParseDuration(w.SLO.Bound); err == nil {
				sw.objective = results.ObjectiveText(pct, b)
			}
		}
		for _, c := range exp.Configs {
			if len(w.Configs) > 0 && !slices.Contains(w.Configs, c.Name) {
				continue
			}
			run := c.Name
			if len(exp.Workloads) > 1 {
				run += "/" + w.Name
			}
			sw.runs, sw.names = append(sw.runs, run), append(sw.names, c.Name)
		}
		out = append(out, sw)
	}
	return out
}

// equalRate returns the workload's equal-load rate: the highest
// absolute rate (results.KindRate) at which every configuration of the
// workload that has a rate point was measured; 0 if there is none.
func (a *analysis) equalRate(w *suiteWorkload) float64 {
	count := map[float64]int{}
	with := 0
	for _, run := range w.runs {
		has := false
		for _, g := range a.groups {
			if g.Config.Name == run && g.Kind == results.KindRate && len(g.Measured()) > 0 {
				count[g.RatePerS]++
				has = true
			}
		}
		if has {
			with++
		}
	}
	best := 0.0
	for r, n := range count {
		if n == with && r > best {
			best = r
		}
	}
	return best
}

// winnerCell is one cell before Holm's procedure decides it.
type winnerCell struct {
	row, col int
	text     string  // the cell when it has no test
	best     string  // the best configuration
	rivals   []rival // every other configuration, runner-up first
}

// rival is the comparison of a cell's best configuration with one other.
type rival struct {
	name   string
	factor string  // the runner-up only: the best's margin over it, "1.32× [1.20, 1.45]"
	p      float64 // the test's two-sided p-value; NaN: no test
	why    string  // why there is no test
	adj    float64 // Holm-adjusted p-value (set by holm)
	sig    bool    // significantly behind the best (set by holm)
}

// winners computes the who-wins table, or nil if the run has fewer than
// two configurations under every workload, or is a run of one workload
// without equal-load points (the default profile's fractions of each
// configuration's own capacity: its Answers rank the configurations, and
// a table of one capacity cell would say less).
func (a *analysis) winners() *winnersTable {
	ws := a.workloadsOf()
	if !slices.ContainsFunc(ws, func(w suiteWorkload) bool { return len(w.runs) >= 2 }) {
		return nil
	}
	if len(ws) == 1 && a.equalRate(&ws[0]) == 0 && ws[0].objective == "" {
		return nil
	}
	// One objective for every workload names the column; several name
	// their rows.
	objective := ws[0].objective
	for _, w := range ws[1:] {
		if w.objective != objective {
			objective = ""
		}
	}
	t := &winnersTable{Head: []string{"workload", "equal load"}}
	for _, c := range winnerColumns {
		label := c.label
		if !c.atRate {
			if objective != "" {
				label += " (" + objective + ")"
			} else {
				label += " (the workload's objective)"
			}
		}
		t.Head = append(t.Head, label)
	}
	var cells []*winnerCell
	for i := range ws {
		w := &ws[i]
		rate := a.equalRate(w)
		row := []string{w.name, "none measured"}
		if objective == "" && w.objective != "" {
			row[0] += " (" + w.objective + ")"
		}
		if rate > 0 {
			row[1] = fmt.Sprintf("%.0f req/s", rate)
		}
		for j, col := range winnerColumns {
			c := &winnerCell{row: i, col: 2 + j}
			cells = append(cells, c)
			row = append(row, "")
			if col.atRate && rate == 0 {
				c.text = "no equal-load point"
				continue
			}
			if !col.atRate && w.objective == "" {
				c.text = "no objective (no search)"
				continue
			}
			a.winnerCellOf(c, w, col, rate)
		}
		t.Rows = append(t.Rows, row)
	}
	holm(cells)
	for _, c := range cells {
		t.Rows[c.row][c.col] = c.text
	}
	t.Note = fmt.Sprintf("Each cell: the configuration with the best median over the valid repetitions, its margin over the runner-up "+
		"(the ratio, at least 1, with its 95%% distribution-free interval: stats.RatioCI), and the two-sided Welch t-test of the two "+
		"on the logarithms of their repetitions (the margin is a ratio). The best is tested so against every other configuration of "+
		"the workload, and the p-values are adjusted by Holm's step-down procedure over the table's %d tests (family-wise α %g). "+
		"A single winner (bold) is named only when every other configuration is significantly behind it; \"tie\" names the leading "+
		"group — the best and every configuration not significantly behind it — and those significantly behind; \"no significant "+
		"difference\" when nothing is: the configurations are then not told apart, whatever the medians say. The equal load is the highest absolute rate "+
		"(req/s) at which every configuration of the workload was measured, the same for all of them (derived from the slowest "+
		"configuration's capacity in a suite run). The SLO capacity is each configuration's own highest open-loop rate whose "+
		"percentile met the workload's latency objective (a user's statement, see harness's \"Capacity at a latency objective\"), "+
		"found in each repetition by a search of short probes bounded by its closed-loop capacity (higher is better; a repetition whose "+
		"search a probe's generator-invalid verdict spoiled is left out); closed-loop capacity is in the capacity figure and the Summary.",
		countTested(cells), WinnersAlpha)
	return t
}

func countTested(cells []*winnerCell) int {
	n := 0
	for _, c := range cells {
		for _, r := range c.rivals {
			if !math.IsNaN(r.p) {
				n++
			}
		}
	}
	return n
}

// winnerCellOf fills c for workload w and column col: the best and the
// runner-up configuration, the margin and the p-value of their test.
func (a *analysis) winnerCellOf(c *winnerCell, w *suiteWorkload, col winnerColumn, rate float64) {
	type cand struct {
		name   string
		values []float64
		median float64
	}
	var cs []cand
	for k, run := range w.runs {
		var g *results.Group
		if col.atRate {
			g = results.Find(a.groups, run, results.KindRate, rate)
		} else {
			g = results.Find(a.groups, run, results.KindSLO, 0)
		}
		if g == nil {
			continue
		}
		if st := g.Aggregate(col.metric).Stats; st.N > 0 {
			cs = append(cs, cand{w.names[k], st.Values, st.Median})
		}
	}
	if len(cs) < 2 {
		c.text = "fewer than two configurations with valid repetitions"
		return
	}
	higher := col.metric.HigherIsBetter
	slices.SortStableFunc(cs, func(x, y cand) int {
		if higher {
			return cmp.Compare(y.median, x.median)
		}
		return cmp.Compare(x.median, y.median)
	})
	b := cs[0]
	c.best = b.name
	for _, o := range cs[1:] {
		rv := rival{name: o.name}
		if len(c.rivals) == 0 { // the margin shown: over the runner-up
			num, den := b.values, o.values
			if !higher {
				num, den = o.values, b.values
			}
			r := stats.RatioCI(num, den, results.Confidence)
			switch {
			case r.OK:
				rv.factor = factorCI(r)
			case r.Est > 0:
				rv.factor = fmt.Sprintf("%s (no interval: %s)", factorText(r.Est), r.Why)
			default:
				rv.factor = "no ratio (" + r.Why + ")"
			}
		}
		t := stats.WelchLog(b.values, o.values, results.Confidence)
		rv.p, rv.why = t.P, t.Why
		c.rivals = append(c.rivals, rv)
	}
}

// holm decides the table's tests together — in every cell the best
// configuration against each other one — by Holm's step-down procedure
// (stats.Holm) at WinnersAlpha, and writes every cell's text. A cell
// names a single winner only when every other configuration is
// significantly behind it; otherwise it names the leading group (the
// best and every configuration not significantly behind it) and those
// significantly behind.
func holm(cells []*winnerCell) {
	var tests []*rival
	var ps []float64
	for _, c := range cells {
		for i := range c.rivals {
			tests, ps = append(tests, &c.rivals[i]), append(ps, c.rivals[i].p)
		}
	}
	adj, sig := stats.Holm(ps, WinnersAlpha)
	for i, r := range tests {
		r.adj, r.sig = adj[i], sig[i]
	}
	for _, c := range cells {
		if c.text != "" {
			continue
		}
		c.text = cellText(c)
	}
}

// cellText is a decided cell's text.
func cellText(c *winnerCell) string {
	ru := c.rivals[0]
	if math.IsNaN(ru.p) { // a winner by median alone is not claimed
		return fmt.Sprintf("no test (%s, then %s: %s; %s)", c.best, ru.name, ru.factor, ru.why)
	}
	var tied, behind []string
	worst := 0.0
	for _, r := range c.rivals {
		if r.sig {
			behind = append(behind, r.name)
			worst = math.Max(worst, r.adj)
		} else {
			tied = append(tied, r.name)
		}
	}
	if len(tied) == 0 {
		return fmt.Sprintf("**%s** by %s over %s (p=%.2g, Holm %.2g)", c.best, ru.factor, ru.name, ru.p, ru.adj)
	}
	lead := fmt.Sprintf("%s by %s over %s; p=%.2g, Holm %.2g", c.best, ru.factor, ru.name, ru.p, ru.adj)
	if len(behind) == 0 {
		return fmt.Sprintf("no significant difference (%s)", lead)
	}
	ahead := strings.Join(behind, ", ")
	if len(behind) > 3 {
		ahead = fmt.Sprintf("the other %d", len(behind))
	}
	return fmt.Sprintf("tie: **%s** (%s), ahead of %s (Holm ≤ %.2g)",
		strings.Join(append([]string{c.best}, tied...), " ≈ "), lead, ahead, worst)
}

// Markdown renders the table, and its note, as report.md shows them.
func (t *winnersTable) Markdown() string {
	var b strings.Builder
	mdTable(&b, t.Head, t.Rows)
	b.WriteString("\n" + t.Note + "\n")
	return b.String()
}

// mdTable writes a Markdown table of head and rows to b.
func mdTable(b *strings.Builder, head []string, rows [][]string) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(head)
	b.WriteString(strings.Repeat("|---", len(head)) + "|\n")
	for _, r := range rows {
		row(r)
	}
}

// winnersPlain strips the Markdown emphasis of a cell for HTML.
func winnersPlain(s string) string { return strings.ReplaceAll(s, "**", "") }
