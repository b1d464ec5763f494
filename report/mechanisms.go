package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"concbench/plots"
	"concbench/results"
)

// mechanismsTable is the who-wins table's companion: per workload and
// configuration, the mechanisms that explain its costs, and for each
// decided cell of the who-wins table how its leader's mechanisms differ
// from the first configuration behind it.
type mechanismsTable struct {
	Head []string
	Rows [][]string
	Note string
	// NotCounted, if set, replaces the table: no mechanisms point of the
	// run was counted, and why ("Not counted: perf_event_open: …").
	NotCounted string
}

// mechExplains heads the Mechanisms table's column that explains the
// who-wins table's decided cells.
const mechExplains = "explains (who-wins cells)"

// mechanisms computes the Mechanisms table, explaining the decided
// cells of winners (nil: none); nil for a run without mechanisms points.
func (a *analysis) mechanisms(winners *winnersTable) *mechanismsTable {
	if !plots.HasMechanisms(a.Analysis) {
		return nil
	}
	rows := a.MechRows()
	t := &mechanismsTable{Head: []string{"workload", "configuration", "system calls / request", "by kind", "futex wake calls / request",
		"cross-CPU wake-ups (IPIs) / request", mechExplains}}
	notCounted := func(r plots.MechRow) bool { return strings.HasPrefix(r.Why, "not counted: ") }
	if i := slices.IndexFunc(rows, notCounted); i >= 0 && !slices.ContainsFunc(rows, func(r plots.MechRow) bool { return r.OK }) {
		// Said once, not in every row: the kernel refused them all
		// (the first's reason; a run has one kernel and one user).
		t.NotCounted = plots.Capitalize(rows[i].Why)
		return t
	}
	for i := range rows {
		r := &rows[i]
		cells := []string{r.Workload, r.Name, r.Why, "", "", "", explain(r, rows, winners)}
		if r.OK {
			cells[2] = fmt.Sprintf("%.2f", r.Total.Median)
			if r.N > 1 {
				cells[2] += fmt.Sprintf(" [%.2f, %.2f] (n=%d)", r.Total.Min, r.Total.Max, r.N)
			}
			cells[3], cells[4], cells[5] = r.TopKinds(), fmt.Sprintf("%.2f", r.Wakes), fmt.Sprintf("%.2f", r.IPIs)
			if r.IPIsWhy != "" {
				cells[5] = r.IPIsWhy
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	// A column that says nothing goes: the workload in a run of one, the
	// explanations in a run without decided cells.
	if !slices.ContainsFunc(t.Rows, func(row []string) bool { return row[6] != "" }) {
		t.dropColumn(6)
	}
	if len(a.SuiteWorkloads()) == 1 {
		t.dropColumn(0)
	}
	t.Note = "Counted in each configuration's mechanisms point: a short window at the workload's equal load right after its equal-load point, " +
		"on the same server, in the first repetition (bench --mechanisms), which measures nothing else: counting slows every system call. " +
		"Kernel tracepoints count the server threads' system calls by kind, their futex wake calls, and the IPIs other CPUs sent the server's CPUs " +
		"to run a thread woken there (cross-CPU wake-ups; per CPU, so whatever else runs there is in them). " +
		"Medians of the valid repetitions, [min, max] with more than one; in \"by kind\" the kinds of at least 0.05 per request, largest first."
	if slices.Contains(t.Head, mechExplains) {
		t.Note += " \"" + mechExplains + "\": for each decided cell [n] of the who-wins table, how the mechanisms of its leader differ from those of " +
			"the first configuration behind it. A mechanism explains a cost more directly than a latency, which queueing and wake-up order also make."
	}
	return t
}

// dropColumn removes column i from the table.
func (t *mechanismsTable) dropColumn(i int) {
	t.Head = slices.Delete(t.Head, i, i+1)
	for j := range t.Rows {
		t.Rows[j] = slices.Delete(t.Rows[j], i, i+1)
	}
}

// explain returns, for row r, its contrasts with the first configuration
// behind it in each decided cell of winners that it leads: "[3] CPU per
// request: against b, …", the cells with the same rival in one.
func explain(r *plots.MechRow, rows []plots.MechRow, winners *winnersTable) string {
	if winners == nil {
		return ""
	}
	type contrast struct {
		refs, columns []string
	}
	byRival := map[string]*contrast{}
	var rivals []string
	for _, d := range winners.decisions {
		if d.workload != r.Workload || d.best != r.Name {
			continue
		}
		c := byRival[d.runnerUp]
		if c == nil {
			c = &contrast{}
			byRival[d.runnerUp] = c
			rivals = append(rivals, d.runnerUp)
		}
		c.refs, c.columns = append(c.refs, fmt.Sprintf("[%d]", d.ref)), append(c.columns, d.column)
	}
	var parts []string
	for _, rival := range rivals {
		c := byRival[rival]
		head := strings.Join(c.refs, "") + " " + strings.Join(c.columns, ", ")
		if rival == "" {
			parts = append(parts, head+": every configuration ties")
			continue
		}
		i := slices.IndexFunc(rows, func(o plots.MechRow) bool { return o.Workload == r.Workload && o.Name == rival })
		if i < 0 {
			continue
		}
		parts = append(parts, head+": "+mechContrast(r, &rows[i]))
	}
	return strings.Join(parts, "; ")
}

// mechContrast says how x's mechanisms differ from y's, per request: the
// system calls and the kinds that differ most, the futex wake calls and
// the cross-CPU wake-ups.
func mechContrast(x, y *plots.MechRow) string {
	switch {
	case !x.OK:
		return "no mechanisms of " + x.Name + " (" + x.Why + ")"
	case !y.OK:
		return "against " + y.Name + ", whose mechanisms are missing (" + y.Why + ")"
	}
	kinds := results.SyscallKindNames()
	diff := func(k string) float64 { return x.Kinds[k] - y.Kinds[k] }
	slices.SortStableFunc(kinds, func(a, b string) int { return cmp.Compare(math.Abs(diff(b)), math.Abs(diff(a))) })
	var by []string
	for _, k := range kinds[:2] {
		if math.Abs(diff(k)) >= 0.05 {
			by = append(by, fmt.Sprintf("%s %+.2f", k, diff(k)))
		}
	}
	s := fmt.Sprintf("against %s: system calls %.2f vs %.2f", y.Name, x.Total.Median, y.Total.Median)
	if len(by) > 0 {
		s += " (" + strings.Join(by, ", ") + ")"
	}
	s += fmt.Sprintf(", futex wakes %.2f vs %.2f", x.Wakes, y.Wakes)
	if x.IPIsWhy == "" && y.IPIsWhy == "" {
		s += fmt.Sprintf(", cross-CPU wake-ups %.2f vs %.2f", x.IPIs, y.IPIs)
	}
	return s
}

// Markdown renders the table and its note, or the reason there is none.
func (t *mechanismsTable) Markdown() string {
	if t.NotCounted != "" {
		return t.NotCounted + ".\n"
	}
	var b strings.Builder
	mdTable(&b, t.Head, t.Rows)
	b.WriteString("\n" + t.Note + "\n")
	return b.String()
}
