package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"concbench/stats"
)

// The who-wins table is a suite run's answer: per workload and metric, a
// decision among the workload's configurations (stats.Decide). It lives
// here, beside the points it reads, because two packages need it: the
// report words it (package report), and the harness decides it once in
// the middle of a run to spend the rest of the run's time budget on the
// cells it could not decide (harness: "Deciding within a budget").

// WinnerColumn is one metric of the who-wins table: the capacity at the
// workload's latency objective (its search's results), or a metric at
// the workload's equal absolute load, with the margin within which two
// configurations count as equivalent. Closed-loop capacity is not in
// the table: it is the search's upper bracket, not what a user can run
// at (the capacity figure and the Summary show it).
type WinnerColumn struct {
	Label  string
	Metric Metric
	AtRate bool    // the workload's equal-load group, else its SLO results
	Margin float64 // equivalence margin, a ratio
}

// WinnerColumns are the table's columns and their margins: ±10 % for
// rates and CPU time; ±25 % for a tail latency, which one stall of the
// machine moves by more than 10 % in a single window (the CI gate's
// minimum effect for p99 is 25 % too), and for context switches per
// request, which move by almost as much between windows of one binary at
// an equal load (docs/findings.md) and differ between the models'
// mechanisms by whole switches per
// request (a hand-off adds one): the gate's tolerance for them is 25 %
// (plus 0.1) for the same reason.
var WinnerColumns = []WinnerColumn{
	{"SLO capacity", SLOCapacity, false, 0.10},
	{"p99 at equal load", LatencyP99, true, 0.25},
	{"CPU per request", CPUPerReq, true, 0.10},
	{"context switches per request", CtxswPerReq, true, 0.25},
}

// SuiteWorkload is one workload of a run: its name and the run names of
// its configurations with their configuration names, in report order.
type SuiteWorkload struct {
	Name  string
	Runs  []string // run names (as in points)
	Names []string // configuration names, as the table shows them
	// Objective is the workload's latency objective ("p99 ≤ 1ms"), ""
	// if it has none (no search); BoundNs its bound.
	Objective string
	BoundNs   int64
	// Twin is the run name of the workload's A/A twin (the experiment's
	// Twin: a configuration measured a second time under another name),
	// TwinName its configuration name and Of the name of the
	// configuration it repeats (in Names); "" without one. The twin is in
	// no answer (Runs and Names leave it out); it is the control each
	// cell's decision is checked with (Cell.Control).
	Twin, TwinName, Of string
}

// SuiteWorkloads returns r's workloads from its experiment (harness's
// Experiment: configs and workloads, each workload with an optional list
// of the configurations it runs). A run whose experiment cannot be read
// is one workload ("all") of every configuration in groups.
func SuiteWorkloads(r *Run, groups []*Group) []SuiteWorkload {
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
		Twin *struct {
			Name string `json:"name"`
			Of   string `json:"of"`
		} `json:"twin"`
	}
	b, err := json.Marshal(r.Experiment)
	if err != nil || json.Unmarshal(b, &exp) != nil || len(exp.Configs) == 0 || len(exp.Workloads) == 0 {
		w := SuiteWorkload{Name: "all"}
		seen := map[string]bool{}
		for _, g := range groups {
			if !seen[g.Config.Name] {
				seen[g.Config.Name] = true
				w.Runs, w.Names = append(w.Runs, g.Config.Name), append(w.Names, g.Config.Name)
			}
		}
		return []SuiteWorkload{w}
	}
	var out []SuiteWorkload
	for _, w := range exp.Workloads {
		sw := SuiteWorkload{Name: w.Name}
		if sw.Name == "" {
			sw.Name = "all"
		}
		if w.SLO != nil {
			pct := w.SLO.Percentile
			pct = cmp.Or(pct, 99) // harness.DefaultSLOPercentile
			if b, err := time.ParseDuration(w.SLO.Bound); err == nil {
				sw.Objective, sw.BoundNs = ObjectiveText(pct, b), int64(b)
			}
			for _, o := range r.Objectives {
				if o.Workload == w.Name && o.BoundNs > 0 {
					// The bound the searches used (relative to the floor).
					sw.Objective, sw.BoundNs = ObjectiveText(pct, time.Duration(o.BoundNs).Round(time.Microsecond)), o.BoundNs
				}
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
			if exp.Twin != nil && c.Name == exp.Twin.Name {
				sw.Twin, sw.TwinName, sw.Of = run, c.Name, exp.Twin.Of
				continue
			}
			sw.Runs, sw.Names = append(sw.Runs, run), append(sw.Names, c.Name)
		}
		if !slices.Contains(sw.Names, sw.Of) {
			sw.Twin, sw.TwinName, sw.Of = "", "", ""
		}
		out = append(out, sw)
	}
	return out
}

// EqualRate returns w's equal-load rate: the highest absolute rate
// (KindRate) at which every configuration of the workload that has a
// rate point was measured; 0 if there is none.
func EqualRate(groups []*Group, w *SuiteWorkload) float64 {
	count := map[float64]int{}
	with := 0
	for _, run := range w.Runs {
		has := false
		for _, g := range groups {
			if g.Config.Name == run && g.Kind == KindRate && len(g.Measured()) > 0 {
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

// DecisionPlan is how a run's who-wins cells are decided: at level Alpha
// each, in one look at every repetition, or — in a run with a time
// budget — in two looks at Alpha/2 each (Bonferroni over the looks):
// the first at the BaseRounds planned repetitions, the second at every
// repetition, the extra rounds the run measured for the cells the first
// look left undecided (Extra) included. A cell decided at the first look
// keeps that decision. Splitting Alpha keeps each cell's claim at level
// Alpha whatever the first look led the run to measure next.
type DecisionPlan struct {
	Alpha      float64 `json:"alpha"`
	Looks      int     `json:"looks"`
	BaseRounds int     `json:"base_rounds"`
	// Alphas, if set, are the looks' levels, one per look, summing to
	// Alpha (an uneven split: LookAlphas); else each look tests at
	// Alpha/Looks.
	Alphas []float64 `json:"alphas,omitempty"`
	// Budget is the run's time budget; Extra the extra rounds it spent
	// what was left of it on, in order.
	Budget time.Duration `json:"budget_ns,omitempty"`
	// Planned is the experiment's repetitions, of which the run measured
	// BaseRounds before the first look: as many as left ExtraShare of
	// the budget for the extra rounds at the time a round took on this
	// machine (at least MinBaseRounds). Planning is when the planned
	// points ended, from the run's start.
	Planned    int           `json:"planned,omitempty"`
	ExtraShare float64       `json:"extra_share,omitempty"`
	Planning   time.Duration `json:"planning_ns,omitempty"`
	Extra      []ExtraRound  `json:"extra,omitempty"`
	// Why says why the plan measured no extra round, if it did not.
	Why string `json:"why,omitempty"`
}

// ExtraRound is one extra round of a budgeted run: the repetition it was
// numbered, the workload, and the configurations measured, for the
// cells named.
type ExtraRound struct {
	Round    int      `json:"round"`
	Workload string   `json:"workload"`
	Cells    []string `json:"cells"`   // column labels
	Configs  []string `json:"configs"` // run names
	SLO      bool     `json:"slo"`     // capacity and search, not only the equal-load point
}

// MinBaseRounds is the fewest planned rounds a budgeted run measures
// before its first look, whatever the budget: a paired comparison needs 3.
const MinBaseRounds = 3

// ExtraShare is the share of a budgeted run's time budget that its
// planned points leave for the extra rounds: the run measures fewer
// planned rounds (not fewer than MinBaseRounds) when their time on this
// machine would take more, so that the adaptive part of the run, which
// spends its time on the cells still open, runs on a slow machine too.
const ExtraShare = 1.0 / 3

// LookAlphas are a budgeted run's two looks' levels: most of WinnersAlpha
// is kept for the second look, which sees every round (the extra ones
// included), so that its critical value is the lower one where most
// decisions are made; the first look, on the planned rounds, decides only
// clear cells. Any split of Alpha over the looks keeps each cell's claim
// at level Alpha, whatever the first look led the run to measure
// (Bonferroni: the union of the two looks' errors); an uneven one buys
// power where the data are.
var LookAlphas = []float64{0.01, 0.04}

// AlphaOf returns look k's level (1 or 2).
func (p *DecisionPlan) AlphaOf(k int) float64 {
	a := p.Alpha
	if a <= 0 {
		a = WinnersAlpha
	}
	if len(p.Alphas) == p.Looks && k >= 1 && k <= p.Looks {
		return p.Alphas[k-1]
	}
	if p.Looks > 1 {
		return a / float64(p.Looks)
	}
	return a
}

// WinnersAlpha is the level of each decision of the who-wins table in a
// run without a plan of its own: a cell's claim — a winner, or a leading
// group equivalent within the column's margin and ahead of the rest — is
// an intersection–union test at this level (stats.Decide).
const WinnersAlpha = 0.05

// Cell is one cell of the who-wins table: a workload's configurations
// compared on one column.
type Cell struct {
	Workload string
	Column   WinnerColumn
	// Rate is the workload's equal load (AtRate columns).
	Rate float64
	// Arms are the configurations' values by round (every repetition);
	// Decision is the cell's decision and Look the look that made it (1
	// or 2; the last look when undecided); Alpha the level that look
	// tested at. Excluded are the repetitions left out (Spoiled), by
	// configuration.
	Arms     []stats.Arm
	Decision stats.Decision
	Look     int
	Alpha    float64
	Excluded map[string][]string
	// Control is the cell decided again with the workload's A/A twin as
	// one more configuration; nil without a twin.
	Control *Control
}

// Control is a cell's A/A control: the same decision, made the same way,
// with the twin (a configuration measured a second time under another
// name) beside its original. The twin's truth is its original's, so a
// decision or a claim that puts one ahead of the other is false.
type Control struct {
	Twin, Of string // configuration names
	// Arm is the twin's values (the cell's Arms hold the others').
	Arm      stats.Arm
	Decision stats.Decision
	Look     int
	// Separated says the control's decision, or one of its claims that
	// holds (stats.Rival.Held: Holm's within the cell), put the twin and
	// its original apart: one leading (the best, or shown within the
	// margin of it) and the other shown behind; Why says how.
	Separated bool
	Why       string
}

// Decided reports whether d names a winner, an equivalent leading group,
// or a best shown to be within the margin of the true best (stats.Near).
func Decided(d stats.Decision) bool {
	return d.Verdict == stats.Winner || d.Verdict == stats.Group || d.Verdict == stats.Near
}

// DecideCell decides column col of workload w (its equal load rate, for
// an AtRate column) from groups, by plan (nil: one look at
// WinnersAlpha), and its A/A control if w has a twin. A cell with nothing
// to compare has a NoTest decision. The comparisons pool the cell's
// residual variance (stats.DecideOptions.Pool) and never fall back to an
// unpaired test: a repetition left out on one side is left out on both.
func DecideCell(groups []*Group, w *SuiteWorkload, col WinnerColumn, rate float64, plan *DecisionPlan) Cell {
	if plan == nil {
		plan = &DecisionPlan{Alpha: WinnersAlpha, Looks: 1}
	}
	c := Cell{Workload: w.Name, Column: col, Rate: rate, Excluded: map[string][]string{}}
	lag := LagBound(w)
	arm := func(run, name string) (stats.Arm, bool) {
		var g *Group
		if col.AtRate {
			g = Find(groups, run, KindRate, rate)
		} else {
			g = Find(groups, run, KindSLO, 0)
		}
		if g == nil {
			return stats.Arm{}, false
		}
		a, ex := CellArm(g, name, col.Metric, lag)
		if len(ex) > 0 {
			c.Excluded[name] = ex
		}
		return a, len(a.Values) > 0
	}
	for k, run := range w.Runs {
		if a, ok := arm(run, w.Names[k]); ok {
			c.Arms = append(c.Arms, a)
		}
	}
	var twin *stats.Arm
	if w.Twin != "" {
		if a, ok := arm(w.Twin, w.TwinName); ok {
			twin = &a
		}
	}
	c.decide(twin, w.Of, plan)
	return c
}

// decide decides c from its arms by plan, and its control with the twin
// arm beside its original of (none: twin nil).
func (c *Cell) decide(twin *stats.Arm, of string, plan *DecisionPlan) {
	c.Decision, c.Look, c.Alpha = decideLooks(c.Arms, c.Column, plan)
	if twin == nil {
		return
	}
	ctl := &Control{Twin: twin.Name, Of: of, Arm: *twin}
	ctl.Decision, ctl.Look, _ = decideLooks(append(slices.Clone(c.Arms), *twin), c.Column, plan)
	ctl.Separated, ctl.Why = separated(ctl.Decision, ctl.Twin, ctl.Of)
	c.Control = ctl
}

// CellRecord is a cell's data as a campaign keeps it (concbench
// aarate): its configurations' values by round, the twin's, and the
// column, enough to decide it again with another decision rule
// (DecideRecord) without the run folder it came from.
type CellRecord struct {
	Workload       string      `json:"workload"`
	Column         string      `json:"column"`
	HigherIsBetter bool        `json:"higher_is_better"`
	Margin         float64     `json:"margin"`
	Arms           []stats.Arm `json:"arms"`
	Twin           *stats.Arm  `json:"twin,omitempty"`
	Of             string      `json:"of,omitempty"`
}

// Record returns c's record.
func (c *Cell) Record() CellRecord {
	r := CellRecord{Workload: c.Workload, Column: c.Column.Label, HigherIsBetter: c.Column.Metric.HigherIsBetter, Margin: c.Column.Margin, Arms: c.Arms}
	if c.Control != nil {
		a := c.Control.Arm
		r.Twin, r.Of = &a, c.Control.Of
	}
	return r
}

// DecideRecord decides a recorded cell again, by plan (nil: one look).
func DecideRecord(r CellRecord, plan *DecisionPlan) Cell {
	if plan == nil {
		plan = &DecisionPlan{Alpha: WinnersAlpha, Looks: 1}
	}
	col := WinnerColumn{Label: r.Column, Metric: Metric{Name: r.Column, Label: r.Column, HigherIsBetter: r.HigherIsBetter}, Margin: r.Margin}
	c := Cell{Workload: r.Workload, Column: col, Arms: r.Arms}
	c.decide(r.Twin, r.Of, plan)
	return c
}

// decideLooks decides arms by plan: at the first look on the planned
// rounds, and — unless that named a winner or a group — at the second on
// every round, whose decision is kept unless it is weaker than the
// first's (a Near at the first look stands when the second decides
// nothing; each look's claims are at its own level, so any claim made is
// at their sum). It returns the decision, its look and that look's
// level.
func decideLooks(arms []stats.Arm, col WinnerColumn, plan *DecisionPlan) (stats.Decision, int, float64) {
	if plan == nil {
		plan = &DecisionPlan{Alpha: WinnersAlpha, Looks: 1}
	}
	opt := stats.DecideOptions{HigherIsBetter: col.Metric.HigherIsBetter, Margin: col.Margin, Pool: true}
	if plan.Looks > 1 {
		opt.Alpha = plan.AlphaOf(1)
		first := stats.Decide(Rounds(arms, plan.BaseRounds), opt)
		if Decided(first) && first.Verdict != stats.Near {
			return first, 1, opt.Alpha
		}
		opt.Alpha = plan.AlphaOf(2)
		if d := stats.Decide(arms, opt); Decided(d) || first.Verdict != stats.Near {
			return d, 2, opt.Alpha
		}
		return first, 1, plan.AlphaOf(1)
	}
	opt.Alpha = plan.AlphaOf(1)
	return stats.Decide(arms, opt), 1, opt.Alpha
}

// separated reports whether d puts configurations a and b apart — one
// leading (the best, or shown within the margin of it by a claim that
// holds), the other shown behind by one — and says how.
func separated(d stats.Decision, a, b string) (bool, string) {
	lead := func(n string) bool {
		if n == d.Best {
			return true
		}
		for _, r := range d.Rivals {
			if r.Name == n {
				return r.Status == stats.Equivalent && r.Held
			}
		}
		return false
	}
	behind := func(n string) (stats.Rival, bool) {
		for _, r := range d.Rivals {
			if r.Name == n && r.Status == stats.Behind && r.Held {
				return r, true
			}
		}
		return stats.Rival{}, false
	}
	for _, p := range [][2]string{{a, b}, {b, a}} {
		if r, ok := behind(p[1]); ok && lead(p[0]) {
			kind := "a claim that holds"
			if Decided(d) {
				kind = "the decision"
			}
			return true, fmt.Sprintf("%s puts %s ahead and %s behind by %.2f× [%.2f, %.2f]", kind, p[0], p[1], r.Ratio, r.Lo, r.Hi)
		}
	}
	return false, ""
}

// Rounds returns arms with the rounds below n only.
func Rounds(arms []stats.Arm, n int) []stats.Arm {
	out := make([]stats.Arm, 0, len(arms))
	for _, a := range arms {
		b := stats.Arm{Name: a.Name, Values: map[int]float64{}}
		for r, v := range a.Values {
			if r < n {
				b.Values[r] = v
			}
		}
		if len(b.Values) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// DecideCells decides every cell of r's who-wins table from groups (the
// run's points grouped): a row per workload, a column per WinnerColumns
// entry; a cell without its data (no equal-load point, no objective) is
// left out. The plan is r's (nil: one look).
func DecideCells(r *Run, groups []*Group) []Cell {
	var cells []Cell
	ws := SuiteWorkloads(r, groups)
	for i := range ws {
		w := &ws[i]
		rate := EqualRate(groups, w)
		for _, col := range WinnerColumns {
			if col.AtRate && rate == 0 || !col.AtRate && w.Objective == "" {
				continue
			}
			cells = append(cells, DecideCell(groups, w, col, rate, r.Decisions))
		}
	}
	return cells
}
