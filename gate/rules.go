package gate

import (
	"fmt"

	"concbench/results"
)

// Method is how a rule judges a metric.
type Method string

// The methods.
const (
	// Strict judges a near-deterministic metric (allocations, bytes per
	// request): the medians may differ by at most Abs in the bad
	// direction.
	Strict Method = "strict"
	// Tolerance judges a metric with a measured no-change spread
	// (context switches per request): the medians may differ by at most
	// Abs + Rel × |base median| in the bad direction.
	Tolerance Method = "tolerance"
	// UTest judges a timing metric (throughput, latency percentiles): a
	// regression needs both a significant Mann–Whitney U test (p < Alpha,
	// results.Compare, benchstat's test) and a change of the medians of
	// at least MinEffect (relative) in the bad direction, so that a
	// significant 1 % shift does not fail the build.
	UTest Method = "u-test"
)

// Rule is how one metric of one kind of point is judged.
type Rule struct {
	Metric results.Metric
	Kind   results.Kind
	Method Method
	// Abs and Rel bound a Strict (Abs only) or Tolerance rule's change of
	// the medians, in the metric's unit and relative to the base.
	Abs, Rel float64
	// MinEffect is a UTest rule's smallest relative change of the medians
	// that can fail the gate.
	MinEffect float64
	// Robust rules are also gated against a committed baseline measured
	// in another job (possibly on another machine of the same type); the
	// others are then reported, not gated.
	Robust bool
}

// lowerIsBetter reports whether a decrease of the metric is an
// improvement.
func (r *Rule) lowerIsBetter() bool { return !r.Metric.HigherIsBetter }

// threshold describes the rule's bound for the report.
func (r *Rule) threshold() string {
	switch r.Method {
	case Strict:
		return "±" + fmtValue(r.Metric, r.Abs)
	case Tolerance:
		if r.Rel == 0 {
			return "±" + fmtValue(r.Metric, r.Abs)
		}
		return fmt.Sprintf("±(%s + %.0f%%)", fmtValue(r.Metric, r.Abs), 100*r.Rel)
	}
	return fmt.Sprintf("≥%.0f%%", 100*r.MinEffect)
}

// Options are the gate's decision parameters.
type Options struct {
	Rules []Rule
	// MinSamples is the number of valid samples each side needs for a
	// gated row; fewer make the row undecided.
	MinSamples int
	// Alpha is the U test's significance level.
	Alpha float64
	// Baseline is set when the base is a committed baseline from another
	// job: only Robust rules gate; the others are reported as info.
	Baseline bool
}

// Decision parameters.
const (
	// DefaultMinSamples is the valid samples per side a gated row needs:
	// 3 of the gate profile's 6 repetitions, so that invalid
	// load-generator verdicts (the send lag of a disturbed generator: 1
	// open point in 7 on the VM) exclude their points without making the
	// gate undecided more than rarely. A U-test row also needs samples
	// large enough to reach p < Alpha at all (3+5, 4+4: minP), else it
	// is undecided rather than "~"; the minimum effect sizes keep small
	// samples from flagging every shift of the median (benchstat's
	// count=4 trap).
	DefaultMinSamples = 3
	// DefaultAlpha is benchstat's significance level.
	DefaultAlpha = 0.05
)

// The default thresholds, set from twelve no-change runs on the 2-vCPU
// VM this was written on (concbench gate --base HEAD with the same server
// code on both sides: 36 comparisons of every metric at every load; the
// package documentation has the table):
const (
	// DefaultAllocsAbs bounds the change of allocations per request: the
	// largest no-change change was 0.0017, so 0.05 (one allocation every
	// 20 requests) is 29× the noise.
	DefaultAllocsAbs = 0.05
	// DefaultBytesAbs bounds the change of bytes per request: the
	// largest no-change change was 0.40 B; 8 B is Go's smallest size
	// class, so a new allocation on every request exceeds it.
	DefaultBytesAbs = 8
	// DefaultCtxswAbs bounds the change of context switches per request:
	// the largest no-change change was 0.094 (Leader/Followers at
	// capacity, whose median over 6 repetitions wanders between 0.32 and
	// 0.44); 0.3 is 3.2× that, and a hand-off per request (one futex
	// wake-up) adds about 1.
	DefaultCtxswAbs = 0.3
	// DefaultCapacityEffect is throughput's minimum effect: no-change
	// changes stayed within -2.7 %..+3.6 %, none significant (p ≥ 0.065).
	DefaultCapacityEffect = 0.05
	// DefaultP50Effect is p50 latency's minimum effect: no-change changes
	// stayed within -7.0 %..+4.5 %; the largest significant one was
	// 4.5 % (p = 0.026).
	DefaultP50Effect = 0.10
	// DefaultP99Effect is p99 latency's minimum effect. The p99 of a 2 s
	// window at half of capacity is set by a few hundred requests, and
	// the VM's hiccups move it: no-change changes ranged from -56 % to
	// +46 %, and three of 36 were significant (-55.6 % at p = 0.041,
	// +39.1 % at p = 0.026, -19.7 % at p = 0.026). Only a doubling fails.
	DefaultP99Effect = 1.00
)

// DefaultRules returns the gate's rules: per capacity point throughput
// (U test and DefaultCapacityEffect), per open point p50 and p99
// latency (U test and DefaultP50Effect, DefaultP99Effect); per point of
// either kind allocations and bytes per request (strict:
// DefaultAllocsAbs, DefaultBytesAbs) and context switches per request
// (tolerance DefaultCtxswAbs). Allocations, bytes and context switches
// per request are robust: gated against a committed baseline too.
func DefaultRules() []Rule {
	var rs []Rule
	costs := func(k results.Kind) []Rule {
		return []Rule{
			{Metric: results.AllocsPerReq, Kind: k, Method: Strict, Abs: DefaultAllocsAbs, Robust: true},
			{Metric: results.BytesPerReq, Kind: k, Method: Strict, Abs: DefaultBytesAbs, Robust: true},
			{Metric: results.CtxswPerReq, Kind: k, Method: Tolerance, Abs: DefaultCtxswAbs, Robust: true},
		}
	}
	rs = append(rs, Rule{Metric: results.Capacity, Kind: results.KindCapacity, Method: UTest, MinEffect: DefaultCapacityEffect})
	rs = append(rs, costs(results.KindCapacity)...)
	rs = append(rs,
		Rule{Metric: results.LatencyP50, Kind: results.KindOpen, Method: UTest, MinEffect: DefaultP50Effect},
		Rule{Metric: results.LatencyP99, Kind: results.KindOpen, Method: UTest, MinEffect: DefaultP99Effect},
	)
	rs = append(rs, costs(results.KindOpen)...)
	return rs
}

// DefaultOptions returns the default rules and parameters for a
// same-job comparison.
func DefaultOptions() Options {
	return Options{Rules: DefaultRules(), MinSamples: DefaultMinSamples, Alpha: DefaultAlpha}
}

// Metrics returns the distinct metrics of rules, in order: what FromRun
// must keep.
func Metrics(rules []Rule) []results.Metric {
	var ms []results.Metric
	seen := map[string]bool{}
	for _, r := range rules {
		if !seen[r.Metric.Name] {
			seen[r.Metric.Name] = true
			ms = append(ms, r.Metric)
		}
	}
	return ms
}
