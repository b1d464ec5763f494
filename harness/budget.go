package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"concbench/results"
	"concbench/stats"
)

// extraCell is a cell the first look left undecided: its workload, the
// run names of its contenders, and the extra rounds a decision is
// estimated to need.
type extraCell struct {
	workload string
	column   results.WinnerColumn
	runs     []string
	rounds   int
	cost     time.Duration // of all its rounds
}

// extraRoundTime is an extra round's time per contender, for ordering the
// cells: an equal-load point, or a capacity point and a search.
func (r *runner) extraRoundTime(slo bool) time.Duration {
	window := time.Duration(r.exp.Warmup+r.exp.Duration) + r.timing.PointOverhead
	d := window + r.timing.ServerStart
	if slo {
		d += window + time.Duration(r.exp.SLOProbes)*(time.Duration(r.exp.SLOWarmup+r.exp.SLODuration)+r.timing.PointOverhead)
	}
	return d
}

// maxExtraNeed bounds the rounds a cell may ask for: one that needs more
// is left undecided (its Need says so in the report) rather than take the
// whole budget.
const maxExtraNeed = 20

// noEstimateRounds are the extra rounds of a cell whose decision has no
// estimate of the repetitions it needs.
const noEstimateRounds = 3

// undecided returns the cells of the first look that it left undecided
// and that extra rounds can decide, cheapest first.
func (r *runner) undecided(cells []results.Cell, ws []results.SuiteWorkload) []extraCell {
	var out []extraCell
	for _, c := range cells {
		d := c.Decision
		w := workloadNamed(ws, c.Workload)
		if w == nil {
			continue
		}
		if r.opt.extraAll {
			out = append(out, extraCell{workload: c.Workload, column: c.Column, runs: w.Runs, rounds: 1})
			continue
		}
		if d.Verdict != stats.Undecided || d.Need == 0 {
			continue
		}
		names := []string{d.Best}
		for _, rv := range d.Rivals {
			if rv.Status == stats.Undetermined {
				names = append(names, rv.Name)
			}
		}
		var runs []string
		for _, n := range names {
			if i := slices.Index(w.Names, n); i >= 0 {
				runs = append(runs, w.Runs[i])
			}
		}
		more, penalty := d.Need-r.exp.Repetitions, 1
		if d.Need < 0 {
			// No estimate: too few valid repetitions to compare, or the
			// best by median is not ahead on average. A few rounds may
			// tell; they come after the cells with an estimate.
			more, penalty = noEstimateRounds, 4
		}
		if more > maxExtraNeed || len(runs) < 2 {
			continue
		}
		more = max(more, 1)
		out = append(out, extraCell{workload: c.Workload, column: c.Column, runs: runs, rounds: more,
			cost: time.Duration(penalty*more*len(runs)) * r.extraRoundTime(!c.Column.AtRate)})
	}
	slices.SortStableFunc(out, func(a, b extraCell) int { return cmp.Compare(a.cost, b.cost) })
	return out
}

// workloadNamed returns the workload of ws named name, or nil.
func workloadNamed(ws []results.SuiteWorkload, name string) *results.SuiteWorkload {
	for i := range ws {
		if ws[i].Name == name {
			return &ws[i]
		}
	}
	return nil
}

// extraRounds decides the table's cells on the planned points (the first
// look) and spends the rest of the budget on extra rounds for the
// undecided ones, writing the plan into run.json.
func (r *runner) extraRounds(ctx context.Context) error {
	plan := &results.DecisionPlan{Alpha: results.WinnersAlpha, Looks: 2, BaseRounds: r.exp.Repetitions, Budget: time.Duration(r.exp.Budget)}
	r.run.Decisions = plan
	defer results.WriteRun(r.dir, r.run)
	_, pts, err := results.ReadRun(r.dir)
	if err != nil {
		plan.Why = fmt.Sprintf("the points could not be read back to decide on: %v", err)
		return nil
	}
	groups := results.GroupPoints(r.run, pts)
	ws := results.SuiteWorkloads(r.run, groups)
	todo := r.undecided(results.DecideCells(r.run, groups), ws)
	if len(todo) == 0 {
		plan.Why = "the first look left no cell undecided that extra rounds could decide (each needs at most " + fmt.Sprint(maxExtraNeed) + " more)"
		return nil
	}
	deadline := r.deadline()
	// Round k of every cell still wanting rounds, cheapest cells first;
	// a workload's cells share the round's equal-load points.
	for k := 0; ; k++ {
		byWorkload := map[string][]extraCell{}
		var order []string
		for _, c := range todo {
			if k >= c.rounds {
				continue
			}
			if _, ok := byWorkload[c.workload]; !ok {
				order = append(order, c.workload)
			}
			byWorkload[c.workload] = append(byWorkload[c.workload], c)
		}
		if len(order) == 0 {
			return nil
		}
		for _, wl := range order {
			done, err := r.extraRound(ctx, wl, byWorkload[wl], r.exp.Repetitions+k, deadline)
			if err != nil || !done {
				if err == nil && plan.Why == "" && len(plan.Extra) == 0 {
					plan.Why = "the budget was spent before the first extra round"
				}
				return err
			}
		}
	}
}

// extraRound measures round rep of workload wl for cells: every
// contender's equal-load point, and its capacity and search for an SLO
// cell, in alternating order round by round. It returns false when the
// budget or the run ends before the round is complete.
func (r *runner) extraRound(ctx context.Context, wl string, cells []extraCell, rep int, deadline time.Time) (bool, error) {
	var rate, slo []string
	var labels []string
	for _, c := range cells {
		labels = append(labels, c.column.Label)
		for _, run := range c.runs {
			if c.column.AtRate && !slices.Contains(rate, run) {
				rate = append(rate, run)
			}
			if !c.column.AtRate && !slices.Contains(slo, run) {
				slo = append(slo, run)
			}
		}
	}
	runs := append(slices.Clone(rate), slo...)
	slices.Sort(runs)
	runs = slices.Compact(runs)
	if rep%2 == 1 {
		slices.Reverse(runs)
	}
	need := time.Duration(len(rate))*r.extraRoundTime(false) + time.Duration(len(slo))*r.extraRoundTime(true)
	if time.Now().Add(need).After(deadline) {
		return false, nil
	}
	er := results.ExtraRound{Round: rep, Workload: wl, Cells: labels, Configs: runs, SLO: len(slo) > 0}
	for _, run := range runs {
		rc := r.configNamed(run)
		if rc == nil {
			continue
		}
		if slices.Contains(slo, run) {
			r.sum.Points++ // the capacity point the search starts from
			r.planSearches(1)
			if err := r.point(rc, pointLoad{kind: results.KindCapacity}, rep); err != nil {
				return false, err
			}
			if err := r.search(ctx, rc, rep); err != nil {
				return false, err
			}
		}
		if dr := r.exp.DerivedRates[rc.wl.Name]; slices.Contains(rate, run) && len(dr.Rates) > 0 {
			r.sum.Points++
			l := pointLoad{kind: results.KindRate, rate: dr.Rates[0], seedIdx: 1 + len(r.exp.Fractions) + len(r.exp.Rates)}
			if err := r.point(rc, l, rep); err != nil {
				return false, err
			}
		}
		r.stopServer()
		if ctx.Err() != nil {
			r.sum.Interrupted = true
			return false, nil
		}
	}
	r.run.Decisions.Extra = append(r.run.Decisions.Extra, er)
	return true, nil
}

// configNamed returns the configuration whose run name is name, or nil.
func (r *runner) configNamed(name string) *runConfig {
	for i := range r.cfgs {
		if r.cfgs[i].name == name {
			return &r.cfgs[i]
		}
	}
	return nil
}

// budgetText describes the run's plan for the progress output.
func budgetText(p *results.DecisionPlan) string {
	if p == nil {
		return ""
	}
	if len(p.Extra) == 0 {
		return "no extra rounds: " + p.Why
	}
	var parts []string
	for _, e := range p.Extra {
		parts = append(parts, fmt.Sprintf("%s round %d (%s)", e.Workload, e.Round, strings.Join(e.Cells, ", ")))
	}
	return fmt.Sprintf("%d extra rounds: %s", len(p.Extra), strings.Join(parts, "; "))
}
