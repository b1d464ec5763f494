package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"concbench/plots"
	"concbench/results"
	"concbench/stats"
)

// WinnersAlpha is the level of each decision of the who-wins table in a
// run without a decision plan of its own (results.WinnersAlpha).
const WinnersAlpha = results.WinnersAlpha

// winnersTable is the report's opening table: a row per workload, a
// column per metric, each cell a decision — the winner, the leading
// group, or undecided with the repetitions a decision needs — and the
// statistics behind each cell in Details, numbered as the cells.
type winnersTable struct {
	Head    []string
	Rows    [][]string
	Details []string
	// Control says what the A/A control showed: whether any cell
	// separated the twin from its original ("" without a twin).
	Control string
	Note    string
	// Budget says what the run's budget bought: its extra rounds.
	Budget string
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

// winnerCell is one cell of the table: its place, and its decision
// (results.Cell), or the text of a cell without a test.
type winnerCell struct {
	row, col int
	text     string // the cell when it has no test
	results.Cell
}

// winners computes the who-wins table, or nil if the run has fewer than
// two configurations under every workload, or is a run of one workload
// without equal-load points (the default profile's fractions of each
// configuration's own capacity: its Answers rank the configurations, and
// a table of one capacity cell would say less).
func (a *analysis) winners() *winnersTable {
	ws := a.SuiteWorkloads()
	if !slices.ContainsFunc(ws, func(w plots.Workload) bool { return len(w.Runs) >= 2 }) {
		return nil
	}
	if len(ws) == 1 && a.EqualRate(&ws[0]) == 0 && ws[0].Objective == "" {
		return nil
	}
	// One objective for every workload names the column; several name
	// their rows.
	objective := ws[0].Objective
	for _, w := range ws[1:] {
		if w.Objective != objective {
			objective = ""
		}
	}
	t := &winnersTable{Head: []string{"workload", "equal load"}, byWorkload: map[string][]string{}}
	for _, c := range results.WinnerColumns {
		label := c.Label
		if !c.AtRate {
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
		rate := a.EqualRate(w)
		row := []string{w.Name, "none measured"}
		if objective == "" && w.Objective != "" {
			row[0] += " (" + w.Objective + ")"
		}
		if rate > 0 {
			row[1] = fmt.Sprintf("%.0f req/s", rate)
		}
		for j, col := range results.WinnerColumns {
			c := &winnerCell{row: i, col: 2 + j}
			c.Workload, c.Column = w.Name, col
			switch {
			case col.AtRate && rate == 0:
				c.text = "no equal-load point"
			case !col.AtRate && w.Objective == "":
				c.text = "no objective (no search)"
			default:
				c.Cell = results.DecideCell(a.Groups, w.Results(), col, rate, a.Run.Decisions)
				c.text = t.add(c)
				if c.Decision.Verdict != stats.NoTest {
					tested = append(tested, c)
				}
			}
			row = append(row, c.text)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Note = winnersNote(t, a.Run.Decisions)
	t.Budget = budgetNote(a.Run.Decisions)
	t.Control = controlNote(tested)
	return t
}

// controlNote says what the cells' A/A controls showed (results.Control):
// the twin, and whether any cell — by its decision or by a claim that
// holds — separated it from its original, naming those that did. The
// twin is in no answer; the control is how far the answers may be
// Trusted.
func controlNote(cells []*winnerCell) string {
	var with []*winnerCell
	for _, c := range cells {
		if c.Control != nil && c.Control.Decision.Verdict != stats.NoTest {
			with = append(with, c)
		}
	}
	if len(with) == 0 {
		return ""
	}
	ctl := with[0].Control
	head := fmt.Sprintf("A/A control: %s is %s measured again under another name (its own server processes, interleaved like the others, in no answer). Every cell was decided again with it as one more configuration", ctl.Twin, ctl.Of)
	var sep []string
	decided := 0
	for _, c := range with {
		if results.Decided(c.Control.Decision) {
			decided++
		}
		if c.Control.Separated {
			sep = append(sep, fmt.Sprintf("%s, %s: %s", c.Workload, c.Column.Label, c.Control.Why))
		}
	}
	if len(sep) == 0 {
		return head + fmt.Sprintf(": in none of the %d cells (%d of them decided with the twin) did a decision or a claim that holds separate the twin from its original.", len(with), decided)
	}
	return head + fmt.Sprintf(": **%d of %d cells separated them — a false decision, so this run's answers are less certain than their level says**: %s.", len(sep), len(with), strings.Join(sep, "; "))
}

// add records c's decision in the table — its detail line, numbered, and
// its workload's answer — and returns the cell's text: the answer, short,
// with the number of its detail line.
func (t *winnersTable) add(c *winnerCell) string {
	d := c.Decision
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
		text = fmt.Sprintf("**%s** (±%s)", strings.Join(d.Group, " ≈ "), pct(c.Column.Margin))
		if len(d.Rest) > 0 {
			text += fmt.Sprintf(", %s ahead", factorText(firstOf(d, d.Rest[0]).Ratio))
		}
	case stats.Near:
		text = nearText(d, c.Column.Margin)
	default:
		text = undecidedText(d, c.Column.Margin)
	}
	if d.Verdict != stats.Undecided {
		t.decided++
		t.byWorkload[c.Workload] = append(t.byWorkload[c.Workload], fmt.Sprintf("%s: %s", c.Column.Label, winnersPlain(text)))
		dc := decidedCell{workload: c.Workload, column: c.Column.Label, ref: n, best: d.Best, group: d.Group}
		if len(d.Rest) > 0 {
			dc.runnerUp = d.Rest[0]
		}
		t.decisions = append(t.decisions, dc)
	}
	t.Details = append(t.Details, fmt.Sprintf("[%d] %s, %s: %s", n, c.Workload, c.Column.Label, decisionDetail(c)))
	return text + ref
}

// nearText is a Near cell's text: the best, within the margin of the
// true best; the configurations not shown to be behind it, which may be
// within the margin too; how many are shown to be behind.
func nearText(d stats.Decision, margin float64) string {
	text := fmt.Sprintf("**%s**, within %s of the best", d.Best, pct(margin))
	var parts []string
	switch open := d.Group[1:]; {
	case len(open) > maxOpenListed:
		parts = append(parts, fmt.Sprintf("%d more may be", len(open)))
	case len(open) > 0:
		parts = append(parts, strings.Join(open, ", ")+" may be too")
	}
	if len(d.Rest) > 0 {
		parts = append(parts, fmt.Sprintf("%d behind", len(d.Rest)))
	}
	if len(parts) > 0 {
		text += " (" + strings.Join(parts, "; ") + ")"
	}
	return text
}

// maxOpenListed is how many undetermined rivals an undecided cell names
// before it only counts them.
const maxOpenListed = 2

// undecidedText is an undecided cell's text: what the cell did show —
// the best and those shown to be within the margin of it, how many are
// shown to be behind — the rivals still open, and the repetitions that
// would decide them. A cell left undecided by one rival at the margin's
// edge still says who leads and who is out of it.
func undecidedText(d stats.Decision, margin float64) string {
	// Only the claims that hold with Holm's adjustment within the cell
	// (stats.Rival.Held) are stated; the others count as open.
	lead := d.Best + " leads"
	var within []string
	var open []string
	behind := 0
	for _, r := range d.Rivals {
		switch {
		case r.Status == stats.Equivalent && r.Held:
			within = append(within, r.Name)
		case r.Status == stats.Behind && r.Held:
			behind++
		default:
			open = append(open, r.Name)
		}
	}
	if len(within) > 0 {
		lead = fmt.Sprintf("%s within ±%s", strings.Join(append([]string{d.Best}, within...), " ≈ "), pct(margin))
	}
	parts := []string{lead}
	switch {
	case len(open) > maxOpenListed:
		parts = append(parts, fmt.Sprintf("%d open", len(open)))
	case len(open) > 0:
		parts = append(parts, strings.Join(open, ", ")+" open")
	}
	if behind > 0 {
		parts = append(parts, fmt.Sprintf("%d behind", behind))
	}
	need := "too few valid repetitions to estimate what would decide"
	if d.Need > 0 {
		need = needText(d.Need, d.NeedLo, d.NeedHi)
	}
	return "undecided (" + strings.Join(append(parts, need), "; ") + ")"
}

// needText says how many repetitions would decide, n > 0, with the range
// lo–hi the spread's uncertainty gives (stats.Decide's estimates, capped
// at stats.MaxNeed).
func needText(n, lo, hi int) string {
	if n >= stats.MaxNeed {
		return fmt.Sprintf("%d or more repetitions would decide", stats.MaxNeed)
	}
	cap := func(k int) string {
		if k >= stats.MaxNeed {
			return fmt.Sprintf("%d+", stats.MaxNeed)
		}
		return fmt.Sprint(k)
	}
	if lo > 0 && hi > lo {
		return fmt.Sprintf("about %d (%d–%s) repetitions would decide", n, lo, cap(hi))
	}
	return fmt.Sprintf("about %d repetitions would decide", n)
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
	d := c.Decision
	var parts []string
	for _, r := range d.Rivals {
		how := "unpaired"
		if r.Paired {
			how = fmt.Sprintf("%d paired rounds", r.Rounds)
			if r.Pooled {
				how += fmt.Sprintf(", pooled spread (%g df)", r.DF)
			}
			if r.Dropped > 0 {
				how += fmt.Sprintf(", %d dropped (both bounds)", r.Dropped)
			}
			if r.Bounded > 0 {
				how += fmt.Sprintf(", %d with a bound", r.Bounded)
			}
		}
		m := pct(c.Column.Margin)
		status := r.Status
		if r.Status != stats.Undetermined && !r.Held {
			status += fmt.Sprintf(" per comparison only (Holm-adjusted p=%s)", fmtP(r.PHolm))
		}
		p := fmt.Sprintf("%s %s [%s, %s] (%s): p(behind by > %s)=%s, p(within ±%s)=%s → %s",
			r.Name, factorText(r.Ratio), plots.TrimFloat(r.Lo), plots.TrimFloat(r.Hi), how, m, fmtP(r.PBehind), m, fmtP(r.PEquiv), status)
		if math.IsNaN(r.Ratio) {
			p = fmt.Sprintf("%s: %s", r.Name, r.Why)
		} else if r.Why != "" && r.Bounded > 0 {
			p += " (" + r.Why + ")"
		}
		switch {
		case r.Status != stats.Undetermined, math.IsNaN(r.Ratio):
		case r.Need > 0:
			p += " (" + needText(r.Need, r.NeedLo, r.NeedHi) + ")"
		default:
			p += " (no estimate: " + r.Why + ")"
		}
		parts = append(parts, p)
	}
	text := fmt.Sprintf("best %s; %s", d.Best, strings.Join(parts, "; "))
	switch pl := d.Pool; {
	case pl.Used:
		text += fmt.Sprintf("; spread pooled over %d configurations (residual sd %.3g in log, %d df; Bartlett p=%s)", pl.Arms, pl.SD, pl.DF, fmtP(pl.BartlettP))
	case pl.Why != "":
		text += "; each comparison on its own pairs' spread: " + pl.Why
	}
	if c.Look == 2 {
		text = fmt.Sprintf("second look (every round, at %g): %s", c.Alpha, text)
	} else if c.Alpha < WinnersAlpha {
		text = fmt.Sprintf("first look (the planned repetitions, at %g): %s", c.Alpha, text)
	}
	if d.Bounds > 0 {
		text += fmt.Sprintf("; %d values were bounds (≥ a search capped by the generator's ceiling, < the lowest rate a search failed, or a 0 standing at its own configuration's worst)", d.Bounds)
	}
	var ex []string
	for _, n := range slices.Sorted(maps.Keys(c.Excluded)) {
		ex = append(ex, fmt.Sprintf("%s %d", n, len(c.Excluded[n])))
	}
	if len(ex) > 0 {
		text += fmt.Sprintf("; repetitions left out, spoiled by the generator or the machine (left out for both sides of every comparison): %s", strings.Join(ex, ", "))
	}
	if ctl := c.Control; ctl != nil && ctl.Decision.Verdict != stats.NoTest {
		verdict := "not separated"
		if ctl.Separated {
			verdict = "SEPARATED: " + ctl.Why
		}
		text += fmt.Sprintf("; A/A control (%s beside %s): %s, %s", ctl.Twin, ctl.Of, ctl.Decision, verdict)
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

// budgetNote says what a budgeted run did after its first look: the
// extra rounds, by workload, with the cells and configurations they
// were for; "" for a run without a budget.
func budgetNote(p *results.DecisionPlan) string {
	if p == nil || p.Looks < 2 {
		return ""
	}
	head := fmt.Sprintf("Budget and extra rounds: a budget of %v; after the %d planned repetitions the first look decided what it could", p.Budget, p.BaseRounds)
	if len(p.Extra) == 0 {
		return head + "; no extra round was measured: " + p.Why + "."
	}
	type span struct {
		from, to int
		cells    []string
		configs  []string
	}
	var order []string
	by := map[string]*span{}
	for _, e := range p.Extra {
		s := by[e.Workload]
		if s == nil {
			s = &span{from: e.Round, to: e.Round}
			by[e.Workload] = s
			order = append(order, e.Workload)
		}
		s.to = max(s.to, e.Round)
		for _, c := range e.Cells {
			if !slices.Contains(s.cells, c) {
				s.cells = append(s.cells, c)
			}
		}
		for _, c := range e.Configs {
			if !slices.Contains(s.configs, c) {
				s.configs = append(s.configs, c)
			}
		}
	}
	var parts []string
	for _, w := range order {
		s := by[w]
		rounds := fmt.Sprintf("round %d", s.from)
		if s.to > s.from {
			rounds = fmt.Sprintf("rounds %d–%d", s.from, s.to)
		}
		parts = append(parts, fmt.Sprintf("%s %s for %s (%s)", w, rounds, strings.Join(s.cells, ", "), strings.Join(s.configs, ", ")))
	}
	return head + fmt.Sprintf("; it spent the rest on %d extra rounds for the cells it left undecided: %s.", len(p.Extra), strings.Join(parts, "; "))
}

// winnersNote is the table's note: how to read a cell, how it was
// decided — the margins, the level, one look or two (plan) — and what
// stands behind a comparison.
func winnersNote(t *winnersTable, plan *results.DecisionPlan) string {
	var margins []string
	for _, c := range results.WinnerColumns {
		margins = append(margins, fmt.Sprintf("±%s for %s", pct(c.Margin), c.Label))
	}
	level := fmt.Sprintf("an intersection–union test at level %g", WinnersAlpha)
	if plan != nil {
		level = fmt.Sprintf("an intersection–union test at level %g", plan.Alpha)
		if plan.Looks > 1 {
			level += fmt.Sprintf(", made in %d looks at %g and %g (Bonferroni over the looks): first on the %d planned repetitions, then, for the cells still undecided, "+
				"on those and the extra rounds the run's time budget bought for them (Budget and extra rounds, below); a cell keeps its first decision",
				plan.Looks, plan.AlphaOf(1), plan.AlphaOf(2), plan.BaseRounds)
		}
	}
	return fmt.Sprintf("%d of %d cells decided. Each cell: the winner in bold, ahead of the runner-up by the factor shown; or the leading "+
		"group, every member shown to be within the column's margin of the best (%s) and ahead of the rest by the factor shown; or "+
		"the best in bold \"within the margin of the best\" — every other configuration shown not to be ahead of it by more than the margin, "+
		"each at the level over the number of configurations compared (an indifference-zone selection: Hsu's multiple comparisons with the "+
		"best, by Bonferroni's bound), so that it is the best or within the margin of it, with those it may share that with; or "+
		"undecided, with the claims that hold with Holm's adjustment over the cell's comparisons and the repetitions a decision would need "+
		"(t-based, 80 %% power for the whole cell, at the mean difference measured; the range spans the spread's 80 %% interval). A cell's claim is %s: the best "+
		"against every other configuration, one-sided for \"behind by more than the margin\" and by two one-sided tests for \"within "+
		"the margin\" (disjoint, so that no configuration can be shown to be both), on the logarithms of the values, paired by repetition "+
		"(repetitions are interleaved in a random order per round, so a round shares the machine's drift), with the residual spread pooled over "+
		"the cell's configurations (rounds as blocks) where Bartlett's test finds their spreads alike, else each pair's own. A repetition the "+
		"load generator or the machine spoiled is left out of every comparison it is in, for both sides, by criteria that do not depend on "+
		"its own value; a capacity capped by the generator's ceiling is a bound (≥), never equal to another; a search that met its "+
		"objective at no rate is below its lowest failing rate, and a round in which both sides are such bounds drops out. [n] is the "+
		"cell's line in Decisions in detail. The equal load is one absolute rate for every configuration of the workload (0.7 of the slowest "+
		"one's capacity in a suite run); the SLO capacity each configuration's own rate at which its percentile reaches the workload's objective.",
		t.decided, t.cells, strings.Join(margins, ", "), level)
}

// Markdown renders the table, its note, the reproducibility check and
// the details, as report.md shows them.
func (t *winnersTable) Markdown() string {
	var b strings.Builder
	mdTable(&b, t.Head, t.Rows)
	b.WriteString("\n" + t.Note + "\n")
	if t.Control != "" {
		b.WriteString("\n" + t.Control + "\n")
	}
	if t.Budget != "" {
		b.WriteString("\n" + t.Budget + "\n")
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
