package plots

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"concbench/results"
	"concbench/stats"
)

// WinnersAlpha is the level of each decision of the who-wins table: a
// cell's claim — a winner, or a leading group equivalent within the
// column's margin and ahead of the rest — is an intersection–union test
// at this level (stats.Decide).
const WinnersAlpha = 0.05

// winnersTable is the report's opening table: a row per workload, a
// column per metric, each cell a decision — the winner, the leading
// group, or undecided with the repetitions a decision needs — and the
// statistics behind each cell in Details, numbered as the cells.
type winnersTable struct {
	Head    []string
	Rows    [][]string
	Details []string
	// Repro says whether the decisions reproduce on halves of the
	// repetitions.
	Repro string
	Note  string
	// decided and cells count the cells with a decision and all cells
	// with a test.
	decided, cells int
	// byWorkload are each workload's decided cells, for the Answers.
	byWorkload map[string][]string
	// decisions are the decided cells, in the table's order, for the
	// Mechanisms table, which explains each.
	decisions []decidedCell
}

// decidedCell is one decided cell of the who-wins table: its workload,
// column and detail line, the configuration that leads it (with the
// group it leads, for a tie) and the first configuration behind it (""
// when every configuration is in the group).
type decidedCell struct {
	workload, column string
	ref              int
	best             string
	group            []string
	runnerUp         string
}

// winnerColumn is one metric of the table: the capacity at the
// workload's latency objective (its search's results), or a metric at
// the workload's equal absolute load, with the margin within which two
// configurations count as equivalent. Closed-loop capacity is not in the
// table: it is the search's upper bracket, not what a user can run at
// (the capacity figure and the Summary show it).
type winnerColumn struct {
	label  string
	metric results.Metric
	atRate bool    // the workload's equal-load group, else its SLO results
	margin float64 // equivalence margin, a ratio
}

// The columns and their margins: ±10 % for rates and costs; ±25 % for a
// tail latency, which one stall of the machine moves by more than 10 %
// in a single window (the CI gate's minimum effect for p99 is 25 % too).
var winnerColumns = []winnerColumn{
	{"SLO capacity", results.SLOCapacity, false, 0.10},
	{"p99 at equal load", results.LatencyP99, true, 0.25},
	{"CPU per request", results.CPUPerReq, true, 0.10},
	{"context switches per request", results.CtxswPerReq, true, 0.10},
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

// winnerCell is one cell of the table.
type winnerCell struct {
	row, col int
	workload string
	column   winnerColumn
	text     string // the cell when it has no test
	// arms are the configurations' values by repetition; d their
	// decision, half[0] and half[1] the decisions on the even and the
	// odd repetitions.
	arms []stats.Arm
	d    stats.Decision
	half [2]stats.Decision
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
	t := &winnersTable{Head: []string{"workload", "equal load"}, byWorkload: map[string][]string{}}
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
	var tested []*winnerCell
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
			c := &winnerCell{row: i, col: 2 + j, workload: w.name, column: col}
			switch {
			case col.atRate && rate == 0:
				c.text = "no equal-load point"
			case !col.atRate && w.objective == "":
				c.text = "no objective (no search)"
			default:
				a.decideCell(c, w, rate)
				c.text = t.add(c)
				if c.d.Verdict != stats.NoTest {
					tested = append(tested, c)
				}
			}
			row = append(row, c.text)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Note = winnersNote(t)
	t.Repro = reproducibility(tested)
	return t
}

// reproducibility says how far the table's decisions reproduce: each
// cell decided again on the even and on the odd repetitions alone; a
// cell decided on both halves either names the same answer on both or
// differs, and the differing ones are named.
func reproducibility(cells []*winnerCell) string {
	decided := func(d stats.Decision) bool { return d.Verdict == stats.Winner || d.Verdict == stats.Group }
	both, agree := 0, 0
	var differ []string
	for _, c := range cells {
		if !decided(c.half[0]) || !decided(c.half[1]) {
			continue
		}
		both++
		if same(c.half[0], c.half[1]) {
			agree++
		} else {
			differ = append(differ, fmt.Sprintf("%s, %s (%s against %s)", c.workload, c.column.label, c.half[0], c.half[1]))
		}
	}
	if len(cells) == 0 {
		return ""
	}
	text := fmt.Sprintf("Reproducibility: decided again on the even and on the odd repetitions apart, %d of %d cells are decided on both halves", both, len(cells))
	switch {
	case both == 0:
		return text + " (halves of a few repetitions decide little)."
	case len(differ) == 0:
		return text + fmt.Sprintf(", and all %d name the same answer on both.", agree)
	}
	return text + fmt.Sprintf("; %d name the same answer, %d differ: %s.", agree, len(differ), strings.Join(differ, "; "))
}

// decideCell decides c for workload w: every configuration's valid
// repetitions by round, decided together (stats.Decide), and on the
// even and the odd rounds apart.
func (a *analysis) decideCell(c *winnerCell, w *suiteWorkload, rate float64) {
	var halves [2][]stats.Arm
	for k, run := range w.runs {
		var g *results.Group
		if c.column.atRate {
			g = results.Find(a.groups, run, results.KindRate, rate)
		} else {
			g = results.Find(a.groups, run, results.KindSLO, 0)
		}
		if g == nil {
			continue
		}
		agg := g.Aggregate(c.column.metric)
		if len(agg.Values) == 0 {
			continue
		}
		arm := stats.Arm{Name: w.names[k], Values: map[int]float64{}}
		half := [2]stats.Arm{{Name: arm.Name, Values: map[int]float64{}}, {Name: arm.Name, Values: map[int]float64{}}}
		for i, v := range agg.Values {
			r := agg.Reps[i]
			arm.Values[r], half[r%2].Values[r] = v, v
		}
		c.arms = append(c.arms, arm)
		for h := range halves {
			if len(half[h].Values) > 0 {
				halves[h] = append(halves[h], half[h])
			}
		}
	}
	opt := stats.DecideOptions{HigherIsBetter: c.column.metric.HigherIsBetter, Margin: c.column.margin, Alpha: WinnersAlpha}
	c.d = stats.Decide(c.arms, opt)
	for h := range halves {
		c.half[h] = stats.Decide(halves[h], opt)
	}
}

// add records c's decision in the table — its detail line, numbered, and
// its workload's answer — and returns the cell's text: the answer, short,
// with the number of its detail line.
func (t *winnersTable) add(c *winnerCell) string {
	d := c.d
	if d.Verdict == stats.NoTest {
		return d.Why
	}
	t.cells++
	n := len(t.Details) + 1
	ref := fmt.Sprintf(" [%d]", n)
	var text string
	switch d.Verdict {
	case stats.Winner:
		text = fmt.Sprintf("**%s**, %s ahead", d.Best, factorText(d.Rivals[0].Ratio))
	case stats.Group:
		text = fmt.Sprintf("**%s** (±%s)", strings.Join(d.Group, " ≈ "), pct(c.column.margin))
		if len(d.Rest) > 0 {
			text += fmt.Sprintf(", %s ahead", factorText(firstOf(d, d.Rest[0]).Ratio))
		}
	default:
		text = fmt.Sprintf("undecided (%s leads; too few valid repetitions to estimate what would decide)", d.Best)
		if d.Need > 0 {
			text = fmt.Sprintf("undecided (%s leads; about %d repetitions would decide)", d.Best, d.Need)
		}
	}
	if d.Verdict != stats.Undecided {
		t.decided++
		t.byWorkload[c.workload] = append(t.byWorkload[c.workload], fmt.Sprintf("%s: %s", c.column.label, winnersPlain(text)))
		dc := decidedCell{workload: c.workload, column: c.column.label, ref: n, best: d.Best, group: d.Group}
		if len(d.Rest) > 0 {
			dc.runnerUp = d.Rest[0]
		}
		t.decisions = append(t.decisions, dc)
	}
	t.Details = append(t.Details, fmt.Sprintf("[%d] %s, %s: %s", n, c.workload, c.column.label, decisionDetail(c)))
	return text + ref
}

// firstOf returns d's comparison with the configuration named name.
func firstOf(d stats.Decision, name string) stats.Rival {
	for _, r := range d.Rivals {
		if r.Name == name {
			return r
		}
	}
	return stats.Rival{}
}

// decisionDetail is the statistics behind a cell: the best, then each
// rival's ratio with its interval, its p-values and its status, how the
// comparison was made, and what stood for values of 0.
func decisionDetail(c *winnerCell) string {
	d := c.d
	var parts []string
	for _, r := range d.Rivals {
		how := "unpaired"
		if r.Paired {
			how = fmt.Sprintf("%d paired rounds", r.Rounds)
		}
		p := fmt.Sprintf("%s %s [%s, %s] (%s): p(behind)=%s, p(within ±%s)=%s → %s",
			r.Name, factorText(r.Ratio), trimFloat(r.Lo), trimFloat(r.Hi), how, fmtP(r.PBehind), pct(c.column.margin), fmtP(r.PEquiv), r.Status)
		if math.IsNaN(r.Ratio) {
			p = fmt.Sprintf("%s: %s", r.Name, r.Why)
		}
		switch {
		case r.Status != stats.Undetermined, math.IsNaN(r.Ratio):
		case r.Need > 0:
			p += fmt.Sprintf(" (about %d repetitions would decide)", r.Need)
		default:
			p += " (no estimate: " + r.Why + ")"
		}
		parts = append(parts, p)
	}
	text := fmt.Sprintf("best %s; %s", d.Best, strings.Join(parts, "; "))
	if d.Floor > 0 {
		text += fmt.Sprintf("; a value of 0 (no rate met the objective) stood at %s, half the lowest measured", trimFloat(d.Floor))
	}
	return text
}

// fmtP formats a p-value, "n/a" for none.
func fmtP(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	return fmt.Sprintf("%.2g", p)
}

// pct formats a margin as a percentage: "10 %".
func pct(m float64) string { return fmt.Sprintf("%g %%", math.Round(m*1000)/10) }

// same reports whether two decisions name the same answer: the same
// verdict and the same leading configuration or group.
func same(x, y stats.Decision) bool {
	gx, gy := slices.Sorted(slices.Values(x.Group)), slices.Sorted(slices.Values(y.Group))
	return x.Verdict == y.Verdict && slices.Equal(gx, gy)
}

// winnersNote is the table's note: how to read a cell, how it was
// decided, and how far the decisions reproduce on halves of the
// repetitions.
func winnersNote(t *winnersTable) string {
	return fmt.Sprintf("%d of %d cells decided. Each cell: the winner in bold, ahead of the runner-up by the factor shown; or the leading "+
		"group, every member shown to be within the column's margin of the best (±10 %%; ±25 %% for p99, which one stall of the "+
		"machine moves by more) and ahead of the rest by the factor shown; or undecided, with the repetitions a decision would need at "+
		"the spread measured (80 %% power). A cell's claim is an intersection–union test at level %g: the best against every other "+
		"configuration, one-sided for \"behind\" and by two one-sided tests for \"within the margin\", on the logarithms of the "+
		"values, paired by repetition (repetitions are interleaved, so a round shares the machine's drift); a value of 0 (no rate met "+
		"the objective) stands at half the lowest measured, behind every other. [n] is the cell's line in Decisions in detail. The "+
		"equal load is one absolute rate for every configuration of the workload (0.7 of the slowest one's capacity in a suite run); "+
		"the SLO capacity each configuration's own highest open-loop rate whose percentile met the workload's objective.",
		t.decided, t.cells, WinnersAlpha)
}

// Markdown renders the table, its note, the reproducibility check and
// the details, as report.md shows them.
func (t *winnersTable) Markdown() string {
	var b strings.Builder
	mdTable(&b, t.Head, t.Rows)
	b.WriteString("\n" + t.Note + "\n")
	if t.Repro != "" {
		b.WriteString("\n" + t.Repro + "\n")
	}
	if len(t.Details) > 0 {
		b.WriteString("\n<details><summary>Decisions in detail</summary>\n\n")
		for _, d := range t.Details {
			b.WriteString("- " + mdCell(d) + "\n")
		}
		b.WriteString("\n</details>\n")
	}
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
