package gate

import (
	"fmt"
	"slices"

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
	// Tolerance judges a count metric with a measured no-change spread
	// (context switches per request): the medians may differ by at most
	// Abs + Rel × |base median| in the bad direction, so that the bound
	// scales with the metric (far below one switch per request at
	// netpoll's capacity, a few where a model hands requests off); a
	// change beyond it fails only if a one-sided U test also finds a
	// shift (p < Alpha).
	Tolerance Method = "tolerance"
	// UTest judges a timing metric (throughput, CPU per request, latency
	// percentiles): a regression needs both a one-sided Mann–Whitney U
	// test for a change in the bad direction that is significant after
	// the Holm–Bonferroni correction over the run's U-test rows (a
	// family-wise rate of false regressions of Alpha) and a change of the
	// medians of at least MinEffect (relative) in the bad direction, so
	// that a significant 1 % shift does not fail the build.
	UTest Method = "u-test"
	// Failures judges the points the server itself failed: a failed point
	// (the server died), a response that failed verification, or an
	// invalid verdict that is the server's doing (over capacity, the rate
	// missed, requests never sent). Any more of them on the head side than
	// on the base side is a regression: at equal load a head that falls
	// behind or breaks is worse, not merely unmeasurable.
	Failures Method = "failures"
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
	// Fractions, if set, are the open-loop fractions the rule judges
	// (nil: every point of its Kind).
	Fractions []float64
	// TrimHighest, for a UTest rule, is how many of the highest values of
	// each side's sample are left out before the test, when the side has
	// that many more than MinSamples: a tail latency is what one stall of
	// the machine can multiply in a single repetition, while a regression
	// moves every repetition.
	TrimHighest int
	// MinRequests, if set, is the fewest requests the server must have
	// served in a point's window for the rule to read the point: below
	// it, the metric is too coarse (runtime/metrics counts allocations a
	// span at a time: tens to hundreds of objects). A group without such
	// points on either side is reported, not gated.
	MinRequests uint64
}

// applies reports whether r judges the points of kind and fraction.
func (r *Rule) applies(kind results.Kind, fraction float64) bool {
	return r.Kind == kind && (r.Fractions == nil || slices.Contains(r.Fractions, fraction))
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
	case Failures:
		return "> base"
	}
	return fmt.Sprintf("≥%.0f%%", 100*r.MinEffect)
}

// Options are the gate's decision parameters.
type Options struct {
	Rules []Rule
	// MinSamples is the number of valid samples each side needs for a
	// gated row; fewer make the row undecided.
	MinSamples int
	// Alpha is the family-wise error rate of the U-test rows of one run
	// (Holm–Bonferroni).
	Alpha float64
}

// ServerFailures is the pseudo-metric of the Failures rule: the points of a group
// that the server failed (results' metrics have no per-point count of it). A
// point whose rate was missed while the hypervisor took the server's CPUs
// (results.HostFault) is not one: it is left out, as on the other side.
var ServerFailures = results.Metric{Name: "server_failures", Label: "server failures", Unit: "points"}

// Decision parameters.
const (
	// DefaultMinSamples is the valid samples per side a gated row needs.
	// A point is left out of a sample when the load generator's verdict on
	// itself is invalid (a machine stall, its CPU taken); a side with
	// fewer left than this is undecided rather than judged on scraps.
	DefaultMinSamples = 5
	// DefaultAlpha is the family-wise error rate of one run's U-test rows.
	DefaultAlpha = 0.05
)

// The default thresholds; docs/findings.md ("The CI gate") has the
// no-change runs they were checked against and the false-positive rate
// measured out of sample.
const (
	// DefaultAllocsAbs bounds the change of allocations per request: one
	// allocation every 20 requests.
	DefaultAllocsAbs = 0.05
	// DefaultBytesAbs bounds the change of bytes per request: 8 B is Go's
	// smallest size class, so a new allocation on every request exceeds it.
	DefaultBytesAbs = 8
	// DefaultCtxswAbs and DefaultCtxswRel bound the change of context
	// switches per request: a quarter of the base's plus 0.1. A hand-off
	// per request adds about one switch; the no-change changes stayed
	// well inside (docs/findings.md).
	DefaultCtxswAbs = 0.1
	DefaultCtxswRel = 0.25
	// DefaultCapacityEffect is throughput's minimum effect, and
	// DefaultCPUEffect CPU per request's. 10 %, not 5 %: two builds of
	// identical server code (one changed only the harness, load generator
	// and gate) differed at capacity by more than 5 % in CI gate runs on
	// one machine, once significantly (docs/findings.md, "The CI gate"):
	// a binary's layout moves a server, and a gate that fails on that
	// blocks changes that did not touch the server. The injected cpu
	// regression still shows well beyond 10 % (docs/findings.md).
	DefaultCapacityEffect = 0.10
	DefaultCPUEffect      = 0.10
	// DefaultP50Effect is p50 latency's minimum effect.
	DefaultP50Effect = 0.10
	// DefaultP99Effect is p99 latency's minimum effect: a doubling. Two
	// builds whose servers' code was the same (only the report's code
	// differed) gave Half-Sync/Half-Reactive's p99 at 10 % load a
	// significant +30 % in one CI run, and across the committed no-change
	// campaign the p99 rows' medians moved by up to +78 %; the only
	// regression the p99 rows alone catch (the injected stall) moves them
	// by +195 % and more (docs/findings.md). At a 25 % minimum the gate
	// failed builds for the binary's layout and the VM's wake-ups.
	DefaultP99Effect = 1.0
	// DefaultAllocRequests is the fewest requests a window must hold for
	// the allocation rules to read it: runtime/metrics counts allocations
	// a span at a time, so over the few requests of the gate's 10 % point
	// no-change runs moved by more than the strict bound, while over
	// windows of this size and more they stay far within it
	// (docs/findings.md).
	DefaultAllocRequests = 20000
)

// DefaultRules returns the gate's rules. Per capacity point: throughput
// and the server's user CPU per request (U test; DefaultCapacityEffect,
// DefaultCPUEffect). Per open point (offered the same absolute rate on
// both sides): p99 latency (U test, DefaultP99Effect) — at the gate's 10 %
// point the base's p99 is a small fraction of its p99 at half load, so a
// tail regression shows there — and at 50 % also p50 latency and user CPU
// per request (U test;
// DefaultP50Effect, DefaultCPUEffect); latency rows leave out each side's
// highest repetition. User CPU rather than all CPU: the kernel's share
// (system calls, wake-ups, VM exits) moves with how the machine schedules
// (across the repetitions of one no-change run, by more than the user
// time did: docs/findings.md), and a kernel-side regression shows in
// throughput and context switches anyway. Per point of either kind:
// allocations and bytes per request (strict: DefaultAllocsAbs,
// DefaultBytesAbs; on windows of DefaultAllocRequests requests or more),
// context switches per request (tolerance DefaultCtxswAbs +
// DefaultCtxswRel of the base), and the server's failures. Fewer U tests
// make Holm's correction less strict: 18 of them, with 7 repetitions a
// side, can each still decide with up to two points of a side lost.
func DefaultRules() []Rule {
	half := []float64{0.5}
	return []Rule{
		{Metric: results.Capacity, Kind: results.KindCapacity, Method: UTest, MinEffect: DefaultCapacityEffect},
		{Metric: results.UserCPUPerReq, Kind: results.KindCapacity, Method: UTest, MinEffect: DefaultCPUEffect},
		{Metric: results.AllocsPerReq, Kind: results.KindCapacity, Method: Strict, Abs: DefaultAllocsAbs, MinRequests: DefaultAllocRequests},
		{Metric: results.BytesPerReq, Kind: results.KindCapacity, Method: Strict, Abs: DefaultBytesAbs, MinRequests: DefaultAllocRequests},
		{Metric: results.CtxswPerReq, Kind: results.KindCapacity, Method: Tolerance, Abs: DefaultCtxswAbs, Rel: DefaultCtxswRel},
		{Metric: ServerFailures, Kind: results.KindCapacity, Method: Failures},

		{Metric: results.LatencyP50, Kind: results.KindOpen, Method: UTest, MinEffect: DefaultP50Effect, Fractions: half, TrimHighest: 1},
		{Metric: results.LatencyP99, Kind: results.KindOpen, Method: UTest, MinEffect: DefaultP99Effect, TrimHighest: 1},
		{Metric: results.UserCPUPerReq, Kind: results.KindOpen, Method: UTest, MinEffect: DefaultCPUEffect, Fractions: half},
		{Metric: results.AllocsPerReq, Kind: results.KindOpen, Method: Strict, Abs: DefaultAllocsAbs, MinRequests: DefaultAllocRequests},
		{Metric: results.BytesPerReq, Kind: results.KindOpen, Method: Strict, Abs: DefaultBytesAbs, MinRequests: DefaultAllocRequests},
		{Metric: results.CtxswPerReq, Kind: results.KindOpen, Method: Tolerance, Abs: DefaultCtxswAbs, Rel: DefaultCtxswRel},
		{Metric: ServerFailures, Kind: results.KindOpen, Method: Failures},
	}
}

// DefaultOptions returns the default rules and parameters.
func DefaultOptions() Options {
	return Options{Rules: DefaultRules(), MinSamples: DefaultMinSamples, Alpha: DefaultAlpha}
}

// Metrics returns the distinct metrics of rules that points carry, in
// order: what FromRun must keep (ServerFailures is counted from the
// points themselves).
func Metrics(rules []Rule) []results.Metric {
	var ms []results.Metric
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Method != Failures && !seen[r.Metric.Name] {
			seen[r.Metric.Name] = true
			ms = append(ms, r.Metric)
		}
	}
	return ms
}
