package harness

import (
	"context"
	"fmt"
	"time"

	"concbench/results"
)

// MeasureCeilings measures the load generator's ceilings for exp on
// this machine (one per protocol of its workloads, as Run does at its
// start) and the run's own overheads (Timing), without a run folder:
// the thesis measures them once for its parts (Options.Ceilings) and
// estimates its duration from the timing.
func MeasureCeilings(ctx context.Context, exp Experiment, opt Options) ([]results.Ceiling, Timing, error) {
	exp = exp.WithDefaults()
	if err := exp.Validate(); err != nil {
		return nil, Timing{}, err
	}
	r := &runner{exp: exp, opt: opt, run: &results.Run{}}
	if err := r.resolve(); err != nil {
		return nil, Timing{}, err
	}
	restore, err := r.placeGenerator()
	if err != nil {
		return nil, Timing{}, err
	}
	defer restore()
	r.sp = newSpawner()
	defer r.sp.close()
	r.ceilings(ctx)
	for _, w := range r.run.Warnings {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "warning: %s\n", w)
		}
	}
	return r.run.Ceilings, r.timing, nil
}

// Estimate returns how many points a resolved experiment measures —
// capacity and every load point of every configuration under every
// workload in every repetition, its mechanisms points, and the most
// probes its searches may run — and how long that takes: their warm-ups and windows, t's
// PointOverhead for each, and t's ServerStart for each server the run
// starts (one per configuration, workload and repetition, two for the
// rates from the slowest, measured in repetitions of their own).
func (e *Experiment) Estimate(t Timing) (points int, d time.Duration) {
	loads := e.loads()
	window := time.Duration(e.Warmup + e.Duration)
	probe := time.Duration(e.SLOWarmup + e.SLODuration)
	searches := len(loads) > 0 && loads[0].kind == results.KindCapacity
	for _, w := range e.Workloads {
		for _, c := range e.Configs {
			if !w.runs(c.Name) {
				continue
			}
			n := len(loads) + len(e.RatesFromSlowest)
			points += e.Repetitions * n
			d += time.Duration(e.Repetitions) * (time.Duration(n)*(window+t.PointOverhead) + t.ServerStart)
			if m := e.Mechanisms * len(e.RatesFromSlowest); m > 0 {
				points += m
				d += time.Duration(m) * (time.Duration(e.MechanismsWarmup+e.MechanismsDuration) + t.PointOverhead)
			}
			if len(e.RatesFromSlowest) > 0 {
				d += time.Duration(e.Repetitions) * t.ServerStart
			}
			if searches && w.SLO != nil {
				points += e.Repetitions * (e.SLOProbes + 1) // and the search's result
				d += time.Duration(e.Repetitions*e.SLOProbes) * (probe + t.PointOverhead)
			}
		}
	}
	return points, d
}
