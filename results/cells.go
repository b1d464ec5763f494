package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/stats"
)

// The who-wins table compares configurations on equal terms: what leaves
// a repetition out of a comparison, and what a value stands for, is
// judged the same way for every configuration of a cell.
//
//   - A point the load generator or the machine spoiled (Spoiled) is left
//     out, and the comparisons pair by round, so that a round spoiled for
//     one side of a comparison is left out for both. What spoils a point
//     never depends on its own value: the generator's own lateness counts
//     against a bound common to the workload (LagBound), not against the
//     point's own latency as the generator's verdict does (a fast
//     configuration's windows would be left out more often than a slow
//     one's for the same lateness).
//   - A point the server failed (over capacity, the rate missed, failed
//     responses) is not left out: its value is what the server did.
//   - A search capped by the generator's ceiling is a lower bound ("≥ x",
//     stats.AtLeast), and a search that met its objective at no rate an
//     upper bound (below its lowest failing rate, stats.AtMost): never a
//     value equal to another's.

// LagShareOfBound is the share of a workload's latency objective that the
// load generator's own lateness may add to a point's latency before the
// point counts as spoiled for the who-wins table (Spoiled): the
// generator's Limits.MaxLagShare, taken of the objective — one bound for
// every configuration of the workload — instead of the point's own
// percentile.
const LagShareOfBound = 0.5

// LagBound returns the bound on the load generator's own lateness of
// workload w's points: LagShareOfBound of its objective's bound, or 0 when
// it has none (the generator's own verdict then judges it).
func LagBound(w *SuiteWorkload) time.Duration {
	return time.Duration(LagShareOfBound * float64(w.BoundNs))
}

// Spoiled reports whether p's value of metric m says nothing of the
// server, and why: the point was not measured, or the load generator's
// verdict is invalid for its own reasons (its CPU, its timers, its
// ceiling), or its lateness added more than lag (LagBound) to a judged
// percentile of the latency (to m's, for a latency metric). With lag 0 the
// generator's own judgement of its lateness stands (relative to the
// point's percentiles). A point the server failed is not spoiled.
func Spoiled(p *Point, m Metric, lag time.Duration) (bool, string) {
	if p.SLO != nil && p.SLO.Invalid != "" {
		return true, p.SLO.Invalid
	}
	if p.Load == nil || !p.Measured() {
		return false, ""
	}
	lagOnly := !p.Load.Valid && len(p.Load.Checks) > 0 && !slices.ContainsFunc(p.Load.Checks, func(c loadgen.Check) bool { return c != loadgen.CheckBias })
	switch f := p.Fault(); {
	case f == GeneratorFault && !(lagOnly && lag > 0):
		return true, string(p.MainCheck())
	case f == ServerFault:
		return false, ""
	case f == HostFault:
		return true, fmt.Sprintf("%s while the hypervisor took %.1f%% of the server's CPUs (steal)", p.MainCheck(), 100*p.Server.StealFraction)
	}
	if lag <= 0 {
		if m.Percentile > 0 && !p.Load.Trusted(m.Percentile) {
			return true, fmt.Sprintf("p%v untrusted (generator-lag)", m.Percentile)
		}
		return false, ""
	}
	for _, s := range p.Load.LagShares {
		if !s.Judged || m.Percentile > 0 && s.Percentile != m.Percentile || m.Percentile == 0 && s.Percentile > 99 {
			continue
		}
		if d := time.Duration(s.LatencyNs - s.WithoutLagNs); d > lag {
			return true, fmt.Sprintf("generator-lag: %v of p%v is the generator's own lateness (bound %v)", d.Round(time.Microsecond), s.Percentile, lag)
		}
	}
	return false, ""
}

// Bound returns what p's value v of m stands for: stats.Exact, or for a
// latency-objective search's result a bound — stats.AtLeast for a search
// capped by the load generator's ceiling with no failing probe
// (SLOResult.Capped), stats.AtMost, at the lowest failing rate, for one
// that met the objective at no rate (v is then that rate). A result of
// 0 with no failing probe to bound it stays 0 (stats.Decide's worst).
func Bound(p *Point, m Metric, v float64) (float64, stats.Censor) {
	if m.Name != SLOCapacity.Name || p.SLO == nil {
		return v, stats.Exact
	}
	switch s := p.SLO; {
	case s.Capped():
		return v, stats.AtLeast
	case v <= 0 && s.HiPerS > 0 && s.HiPerS < s.CapacityPerS:
		return s.HiPerS, stats.AtMost
	}
	return v, stats.Exact
}

// Capped reports whether r is a lower bound: every probe passed, up to an
// upper bracket that the load generator's ceiling set (the closed-loop
// capacity was beyond what the generator measures). A record written
// before Censored existed says so in its Reason.
func (r *SLOResult) Capped() bool {
	if r.Censored {
		return true
	}
	return r.RatePerS > 0 && r.HiPerS >= r.CapacityPerS && strings.Contains(r.Reason, "beyond what the generator measures")
}

// CellArm returns configuration name's arm of a who-wins cell from g: its
// values of m by repetition, with their bounds (Bound), leaving out the
// spoiled points (Spoiled, with lag) — named in excluded, one line each —
// and the points without the metric.
func CellArm(g *Group, name string, m Metric, lag time.Duration) (arm stats.Arm, excluded []string) {
	arm = stats.Arm{Name: name, Values: map[int]float64{}, Censored: map[int]stats.Censor{}}
	for _, p := range g.Points {
		if bad, why := Spoiled(p, m, lag); bad {
			excluded = append(excluded, fmt.Sprintf("rep %d: %s", p.Repetition, why))
			continue
		}
		v, ok := m.Value(p)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		v, c := Bound(p, m, v)
		arm.Values[p.Repetition] = v
		if c != stats.Exact {
			arm.Censored[p.Repetition] = c
		}
	}
	return arm, excluded
}
