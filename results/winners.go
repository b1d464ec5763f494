package results

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"concbench/stats"
)

// The who-wins table is a suite run's answer: per workload and metric, a
// decision among the workload's configurations (stats.Decide). It lives
// here, beside the points it reads, because two packages need it: the
// report words it (package plots), and the harness decides it once in
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
	// if it has none (no search).
	Objective string
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
				sw.Objective = ObjectiveText(pct, b)
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
			sw.Runs, sw.Names = append(sw.Runs, run), append(sw.Names, c.Name)
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
	// Budget is the run's time budget; Extra the extra rounds it spent
	// what was left of it on, in order.
	Budget time.Duration `json:"budget_ns,omitempty"`
	Extra  []ExtraRound  `json:"extra,omitempty"`
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

// alphaPerLook is each look's level.
func (p *DecisionPlan) alphaPerLook() float64 {
	a := p.Alpha
	if a <= 0 {
		a = WinnersAlpha
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
	// or 2; the last look when undecided); Half are the decisions on the
	// even and on the odd repetitions apart (the reproducibility check).
	Arms     []stats.Arm
	Decision stats.Decision
	Look     int
	Half     [2]stats.Decision
	// Alpha is the level each look tested at.
	Alpha float64
}

// Decided reports whether d names a winner or an equivalent leading group.
func Decided(d stats.Decision) bool { return d.Verdict == stats.Winner || d.Verdict == stats.Group }

// DecideCell decides column col of workload w (its equal load rate, for
// an AtRate column) from groups, by plan (nil: one look at
// WinnersAlpha). A cell with nothing to compare has a NoTest decision.
func DecideCell(groups []*Group, w *SuiteWorkload, col WinnerColumn, rate float64, plan *DecisionPlan) Cell {
	if plan == nil {
		plan = &DecisionPlan{Alpha: WinnersAlpha, Looks: 1}
	}
	c := Cell{Workload: w.Name, Column: col, Rate: rate, Alpha: plan.alphaPerLook()}
	var halves [2][]stats.Arm
	for k, run := range w.Runs {
		var g *Group
		if col.AtRate {
			g = Find(groups, run, KindRate, rate)
		} else {
			g = Find(groups, run, KindSLO, 0)
		}
		if g == nil {
			continue
		}
		agg := g.Aggregate(col.Metric)
		if len(agg.Values) == 0 {
			continue
		}
		arm := stats.Arm{Name: w.Names[k], Values: map[int]float64{}}
		half := [2]stats.Arm{{Name: arm.Name, Values: map[int]float64{}}, {Name: arm.Name, Values: map[int]float64{}}}
		for i, v := range agg.Values {
			r := agg.Reps[i]
			arm.Values[r] = v
			if plan.Looks < 2 || r < plan.BaseRounds {
				half[r%2].Values[r] = v
			}
		}
		c.Arms = append(c.Arms, arm)
		for h := range halves {
			if len(half[h].Values) > 0 {
				halves[h] = append(halves[h], half[h])
			}
		}
	}
	opt := stats.DecideOptions{HigherIsBetter: col.Metric.HigherIsBetter, Margin: col.Margin, Alpha: c.Alpha}
	c.Look = 1
	if plan.Looks > 1 {
		c.Decision = stats.Decide(Rounds(c.Arms, plan.BaseRounds), opt)
		if Decided(c.Decision) {
			for h := range halves {
				c.Half[h] = stats.Decide(halves[h], opt)
			}
			return c
		}
		c.Look = 2
	}
	c.Decision = stats.Decide(c.Arms, opt)
	for h := range halves {
		c.Half[h] = stats.Decide(halves[h], opt)
	}
	return c
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
