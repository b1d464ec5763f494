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

// noEstimateRounds are the extra rounds of a cell whose decision has no
// estimate of the repetitions it needs.
const noEstimateRounds = 3

// undecided returns the cells of the first look that it left undecided
// and that the extra rounds the budget has left (left) can decide —
// those whose own rounds fit in it, at the time a round of their
// contenders takes —, cheapest first. A cell that needs more is left
// undecided (its Need says so in the report) rather than take the
// budget from the others.
func (r *runner) undecided(cells []results.Cell, ws []results.SuiteWorkload, left time.Duration) []extraCell {
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
			if w.Twin != "" && n == w.Of {
				// The A/A twin is measured whenever its original is, like
				// any other configuration.
				runs = append(runs, w.Twin)
			}
		}
		more, penalty := d.Need-r.exp.Repetitions, 1
		if d.Need < 0 {
			// No estimate. Where rounds the machine spoiled left a rival
			// fewer shared rounds than a comparison needs, the rounds
			// missing are what it needs, as cheap as any; otherwise (the
			// best is not ahead on the rounds they share) a few rounds may
			// tell, after the cells with an estimate.
			short := 0
			for _, rv := range d.Rivals {
				if rv.Status == stats.Undetermined && rv.Rounds < results.MinBaseRounds {
					short = max(short, results.MinBaseRounds-rv.Rounds)
				}
			}
			more, penalty = noEstimateRounds, 4
			if short > 0 {
				more, penalty = short, 1
			}
		}
		more = max(more, 1)
		cost := time.Duration(more*len(runs)) * r.extraRoundTime(!c.Column.AtRate)
		if cost > left || len(runs) < 2 {
			continue
		}
		out = append(out, extraCell{workload: c.Workload, column: c.Column, runs: runs, rounds: more,
			cost: time.Duration(penalty) * cost})
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
	plan := r.run.Decisions
	if plan == nil {
		plan = r.newPlan()
		r.run.Decisions = plan
	}
	plan.BaseRounds, plan.Planning = r.exp.Repetitions, time.Since(r.begin)
	defer results.WriteRun(r.dir, r.run)
	_, pts, err := results.ReadRun(r.dir)
	if err != nil {
		plan.Why = fmt.Sprintf("the points could not be read back to decide on: %v", err)
		return nil
	}
	groups := results.GroupPoints(r.run, pts)
	ws := results.SuiteWorkloads(r.run, groups)
	deadline := r.deadline()
	todo := r.undecided(results.DecideCells(r.run, groups), ws, time.Until(deadline))
	if len(todo) == 0 {
		plan.Why = fmt.Sprintf("the first look left no cell undecided whose extra rounds, as many as it is estimated to need, fit in the %v the budget had left", time.Until(deadline).Round(time.Second))
		return nil
	}
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
	if r.exp.Shuffle {
		shuffled := make([]string, len(runs))
		for i, k := range r.order(rep, len(runs)) {
			shuffled[i] = runs[k]
		}
		runs = shuffled
	} else if rep%2 == 1 {
		slices.Reverse(runs)
	}
	if r.run.Orders == nil {
		r.run.Orders = map[int][]string{}
	}
	r.run.Orders[rep] = append(r.run.Orders[rep], runs...)
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

// newPlan returns a budgeted run's decision plan before its planned
// points: two looks at LookAlphas.
func (r *runner) newPlan() *results.DecisionPlan {
	return &results.DecisionPlan{Alpha: results.WinnersAlpha, Looks: 2, Alphas: slices.Clone(results.LookAlphas),
		BaseRounds: r.exp.Repetitions, Planned: r.exp.Repetitions, ExtraShare: results.ExtraShare, Budget: time.Duration(r.exp.Budget)}
}

// roundTimes returns the estimated time of one planned round of the run's
// points (Experiment.Estimate at one repetition): its capacity points and
// searches (slo), its equal-load points (rate), and its mechanisms points
// (mech, measured in the first Mechanisms rounds only).
func (r *runner) roundTimes() (slo, rate, mech time.Duration) {
	one := r.exp
	one.Repetitions, one.Mechanisms = 1, 0
	_, all := one.Estimate(r.timing)
	one.RatesFromSlowest = nil
	_, slo = one.Estimate(r.timing)
	withMech := r.exp
	withMech.Repetitions = 1
	_, m := withMech.Estimate(r.timing)
	return slo, all - slo, m - all
}

// enoughRounds reports, after the planned round rep of capacities and
// searches took took, whether the run should measure no more planned
// rounds: one more, and the equal-load rounds that go with them, would
// leave less than ExtraShare of the budget for the extra rounds. The
// equal-load and mechanisms rounds are estimated (roundTimes) scaled by
// how much longer than its estimate the round measured took. Never before
// MinBaseRounds rounds.
func (r *runner) enoughRounds(rep int, took time.Duration) bool {
	if r.exp.Budget <= 0 || rep+1 < results.MinBaseRounds || rep+1 >= r.exp.Repetitions {
		return false
	}
	slo, rate, mech := r.roundTimes()
	scale := 1.0
	if slo > 0 {
		scale = float64(took) / float64(slo)
	}
	est := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	next := took + time.Duration(rep+2)*est(rate) + est(mech)
	limit := time.Duration((1 - results.ExtraShare) * float64(r.exp.Budget))
	return time.Since(r.begin)+next > limit
}
