package loadgen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// judgedForValidity is the highest percentile whose lag share decides
// the run's validity; beyond it a percentile that exceeds its bound is
// merely untrusted.
const judgedForValidity = 99

// lagWarnShare is the share of a percentile the generator's lateness may
// account for before the result warns.
const lagWarnShare = 0.10

// Trusted reports whether the reported percentile p (50, 90, 99, 99.9,
// 99.99) of r's latency can be trusted: r is valid, and the generator's
// own lateness does not account for more than Limits.MaxLagShare of it.
// Reports leave an untrusted percentile out of their aggregates.
func (r *Result) Trusted(p float64) bool {
	if !r.Valid {
		return false
	}
	for _, s := range r.LagShares {
		if s.Percentile == p && s.Exceeded {
			return false
		}
	}
	return true
}

// minTail is the number of responses that must lie beyond a percentile
// for the verdict to judge the generator's share of it.
const minTail = 5

// maxGapDistance is the smallest distortion of the send process the
// verdict fails a run for, besides significance: a Kolmogorov–Smirnov
// distance (a tenth of the gaps out of place at some length) or a lag-1
// rank correlation of that size. A machine that stalls the generator now
// and then (interrupts, the hypervisor) moves a few percent of the gaps,
// detectably over 2 000 of them and harmlessly; a broken pacer moves
// many more.
const maxGapDistance = 0.10

// trendZ is the one-sided Mann–Kendall score above which a growth is a
// trend (p < 0.001).
const trendZ = 3.09

// Limits of the verdict's other checks.
const (
	// minAchieved is the share of the scheduled requests that must be
	// sent and answered inside the window.
	minAchieved = 0.99
	// growthFactor is how much later slices' mean latency must exceed the
	// first ones' for a latency trend to be reported, and
	// minBacklogGrowth how much of the window's scheduled requests the
	// requests in flight must grow by for a backlog trend to count.
	growthFactor     = 2.0
	minBacklogGrowth = 0.01
	// stallWarning is the share of the window in machine stalls above
	// which the result warns.
	stallWarning = 0.05
)

// judge sets r.Valid, r.Reasons, r.Checks and r.OverCapacity (and adds
// warnings) from r's numbers and the run's own failures (interruption,
// an unreachable server), which are reasons as given. It is pure, so the
// rules are testable on their own. Reasons come in order of importance:
// the first is the main one.
func judge(r *Result, failures ...string) {
	lim := r.Config.Limits.withDefaults()
	var v verdict
	for _, f := range failures {
		v.fails = append(v.fails, failure{CheckAborted, f})
	}
	v.judgeLoad(r)
	v.judgeLag(r, lim)
	v.judgeGenerator(r, lim)
	v.judgeCounts(r, lim)
	v.warnings(r, lim)

	slices.SortStableFunc(v.fails, func(a, b failure) int { return checkOrder(a.check) - checkOrder(b.check) })
	r.Valid = len(v.fails) == 0
	r.Reasons, r.Checks = []string{}, []Check{}
	for _, f := range v.fails {
		r.Reasons = append(r.Reasons, f.text)
		r.Checks = append(r.Checks, f.check)
	}
	r.Warnings = append(r.Warnings, v.warns...)
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
}

// verdict is a verdict as judge writes it: the failed checks with their
// reasons, and the warnings, in the order they are found.
type verdict struct {
	fails []failure
	warns []string
}

// failure is a failed check and its reason.
type failure struct {
	check Check
	text  string
}

// fail adds a failure of check ch.
func (v *verdict) fail(ch Check, format string, args ...any) {
	v.fails = append(v.fails, failure{ch, fmt.Sprintf(format, args...)})
}

// warn adds a warning.
func (v *verdict) warn(format string, args ...any) {
	v.warns = append(v.warns, fmt.Sprintf(format, args...))
}

// judgeLoad judges what the server did with the load: whether it
// answered, kept up with the offered rate (and sets r.OverCapacity), and
// let the window's requests be sent and answered in it.
func (v *verdict) judgeLoad(r *Result) {
	open := !r.Config.Closed
	if r.Requests.OK == 0 {
		v.fail(CheckNoResponses, "no successful responses were measured")
	}
	r.OverCapacity = false
	if t := r.Trend; open && t != nil {
		if why := overCapacity(r, t); why != "" {
			r.OverCapacity = true
			v.fail(CheckOverCapacity, "over capacity: the server fell behind the offered %.0f req/s: %s", r.TargetRatePerS, why)
		} else if w := latencyGrowth(t); w != "" {
			v.warn("%s", w)
		}
	}
	if open && r.Requests.Scheduled > 0 && float64(r.Requests.InWindow) < minAchieved*float64(r.Requests.Scheduled) {
		v.fail(CheckRate, "achieved %.0f req/s is below %.0f%% of the %.0f req/s scheduled (target %.0f): %d of %d scheduled requests were sent and answered inside the window",
			r.AchievedRatePerS, 100*minAchieved, r.ScheduledRatePerS, r.TargetRatePerS, r.Requests.InWindow, r.Requests.Scheduled)
	}
}

// judgeLag judges the generator's own lateness at each reported
// percentile (and sets each LagShare's Exceeded): it fails the run where
// it may account for a percentile that decides validity, and warns where
// it may account for a higher one or for a noticeable share of one.
func (v *verdict) judgeLag(r *Result, lim Limits) {
	var moved, untrusted, noted []string
	for i := range r.LagShares {
		s := &r.LagShares[i]
		diff := s.LatencyNs - s.WithoutLagNs
		text := fmt.Sprintf("p%s by %s (%s with it, %s without; %.0f%%)", fmtPercentile(s.Percentile),
			FormatNs(diff), FormatNs(s.LatencyNs), FormatNs(s.WithoutLagNs), 100*s.Share)
		s.Exceeded = s.Judged && diff > s.BoundNs
		switch {
		case s.Exceeded && s.Percentile <= judgedForValidity:
			moved = append(moved, text)
		case s.Exceeded:
			untrusted = append(untrusted, text)
		case s.Judged && s.Share > lagWarnShare:
			noted = append(noted, text)
		}
	}
	if len(moved) > 0 {
		v.fail(CheckBias, "the generator's own lateness may account for %s: more than %.0f%% of each, so the number says more about the generator than about the server (send lag p99 %s, max %s)",
			strings.Join(moved, ", "), 100*lim.MaxLagShare, FormatNs(r.SendLag.P99Ns), FormatNs(r.SendLag.MaxNs))
	}
	if len(untrusted) > 0 {
		v.warn("not to be trusted, left out of reports' aggregates: the generator's own lateness may account for %s, more than %.0f%% of each (a stall of the generator's CPU moves the few slowest requests)",
			strings.Join(untrusted, ", "), 100*lim.MaxLagShare)
	}
	if len(noted) > 0 {
		v.warn("the generator's own lateness may account for %s: the latency without it is the lower bound of what an on-time generator would have measured",
			strings.Join(noted, ", "))
	}
}

// judgeGenerator judges the generator's health: how busy its workers
// were, whether they waited for their CPUs or lost them to the
// hypervisor, and whether the requests left as the schedule meant.
func (v *verdict) judgeGenerator(r *Result, lim Limits) {
	g := &r.Generator
	if g.BusyFraction > lim.MaxBusy {
		v.fail(CheckBusy, "the generator's workers were busy %.0f%% of the time (at most %.0f%%): the generator itself was near saturation; give it more workers and CPUs",
			100*g.BusyFraction, 100*lim.MaxBusy)
	}
	if g.RunQueueFraction > lim.MaxRunQueue {
		v.fail(CheckCPU, "the generator's threads waited %s for a CPU, %.1f%% of their time (at most %.0f%%; %d involuntary context switches): something else runs on the generator's CPUs",
			FormatNs(g.WorkerRunQueueNs), 100*g.RunQueueFraction, 100*lim.MaxRunQueue, g.WorkerInvoluntaryCtxsw)
	}
	if g.StealFraction > lim.MaxSteal {
		v.fail(CheckCPU, "the hypervisor took %s (%.1f%%, at most %.0f%%) of the generator's CPUs during the window (steal time)",
			FormatNs(g.StealNs), 100*g.StealFraction, 100*lim.MaxSteal)
	}
	if sp := &r.SendProcess; sp.Applicable && sp.Judged {
		a := lim.SendProcessAlpha
		z := zTwoSided(a)
		if sp.KSP < a && sp.PlannedKSP >= a && sp.KSD > maxGapDistance {
			v.fail(CheckSendProcess, "the gaps between the requests as sent are not exponential (Kolmogorov–Smirnov D %.3f, p %.2g over %d gaps) although the schedule's are (p %.2g): the generator bunched or spaced its sends",
				sp.KSD, sp.KSP, sp.Gaps, sp.PlannedKSP)
		}
		if math.Abs(sp.Lag1Z) > z && math.Abs(sp.PlannedLag1Z) <= z && math.Abs(sp.Lag1Rho) > maxGapDistance {
			v.fail(CheckSendProcess, "consecutive gaps between the requests as sent are correlated (lag-1 Spearman ρ %.3f, z %.1f; the schedule's z %.1f): late sends were followed by bursts",
				sp.Lag1Rho, sp.Lag1Z, sp.PlannedLag1Z)
		}
	}
}

// judgeCounts judges what the counts say was lost or distorted: requests
// never sent, errors, a short or failing warm-up, values outside the
// histograms, a stepped wall clock under the receive timestamps.
func (v *verdict) judgeCounts(r *Result, lim Limits) {
	if r.Requests.Unsent > 0 {
		v.fail(CheckUnsent, "%d scheduled requests were never sent (every connection stayed at its in-flight bound, or the run ended first): their latency, the worst of the run, is unknown",
			r.Requests.Unsent)
	}
	var bad []string
	for _, k := range sortedKeys(r.Errors) {
		if k != "interrupted" && !expectedStatuses[k] {
			bad = append(bad, fmt.Sprintf("%s %d", k, r.Errors[k]))
		}
	}
	if len(bad) > 0 {
		v.fail(CheckErrors, "errors: %s", strings.Join(bad, ", "))
	}
	if r.Requests.WarmupErrors > 0 {
		v.fail(CheckWarmup, "%d requests failed during warm-up", r.Requests.WarmupErrors)
	}
	if time.Duration(r.WarmupNs) < MinWarmup {
		v.fail(CheckWarmup, "warm-up %v is shorter than %v", time.Duration(r.WarmupNs), MinWarmup)
	}
	for _, h := range []struct {
		name string
		s    *Summary
	}{{"latency", &r.Latency}, {"uncorrected latency", &r.Uncorrected}, {"send lag", &r.SendLag}, {"held lag", &r.HeldLag}} {
		if h.s.OutOfRange > 0 {
			v.fail(CheckOutOfRange, "%d %s values fell outside the histogram range %s..%s and were clamped",
				h.s.OutOfRange, h.name, FormatNs(r.Histogram.LowestNs), FormatNs(r.Histogram.HighestNs))
		}
	}
	if tm := &r.Timing; tm.KernelStamped > 0 {
		step := tm.ClockStepNs
		if step < 0 {
			step = -step
		}
		if bound := int64(lim.MaxLagShare * float64(r.Latency.P50Ns)); step > max(bound, int64(r.Config.HistLowest)) {
			v.fail(CheckClock, "the wall clock was stepped by %s during the run: the kernel's receive timestamps (wall-clock times) are off by that much against the send times", FormatNs(step))
		}
	}
}

// warnings adds the warnings that fail no check: what the reader of the
// numbers should know about how they were measured.
func (v *verdict) warnings(r *Result, lim Limits) {
	c := &r.Config
	if r.Requests.Held > 0 {
		v.warn("%d requests (%.2f%%) waited for the in-flight bound (%d per connection) and left late (held lag p99 %s); their corrected latency includes the wait",
			r.Requests.Held, pct(r.Requests.Held, r.Requests.Sent), c.MaxInFlight, FormatNs(r.HeldLag.P99Ns))
	}
	if r.Generator.GCPauseNs > int64(time.Millisecond) {
		v.warn("the generator's GC paused %s during the run", FormatNs(r.Generator.GCPauseNs))
	}
	if tm := &r.Timing; tm.UserStamped > 0 {
		v.warn("%d of %d reads had no kernel receive timestamp: their responses were timestamped after the read, which adds the worker's own delay to their latency",
			tm.UserStamped, tm.UserStamped+tm.KernelStamped)
	}
	if tm := &r.Timing; tm.StalledFraction > stallWarning {
		v.warn("the machine stalled the generator's busy-polling thread for %.1f%% of the window (longest idle iteration %s, p99.9 %s): interrupts or the hypervisor; the server's CPU is likely stalled alike, and its latency includes it",
			100*tm.StalledFraction, FormatNs(tm.IdleIterations.MaxNs), FormatNs(tm.IdleIterations.P999Ns))
	}
	if tm := &r.Timing; tm.StampedBeforeSend > 0 {
		v.warn("%d responses carried a receive timestamp earlier than their send (a clock step): they were counted from their send", tm.StampedBeforeSend)
	}
	if sp := &r.SendProcess; sp.Applicable && !slices.ContainsFunc(v.fails, func(f failure) bool { return f.check == CheckSendProcess }) &&
		(sp.KSP < lim.SendProcessAlpha || math.Abs(sp.Lag1Z) > zTwoSided(lim.SendProcessAlpha)) {
		why := fmt.Sprintf("below the distortion the verdict fails a run for (%.2f)", maxGapDistance)
		if !sp.Judged {
			why = "not judged: " + sp.Note
		}
		v.warn("the gaps between the requests as sent differ detectably from exponential ones (Kolmogorov–Smirnov D %.3f, p %.2g; lag-1 ρ %.3f), %s", sp.KSD, sp.KSP, sp.Lag1Rho, why)
	}
	var unjudged []string
	for _, s := range r.LagShares {
		if !s.Judged && s.LatencyNs > 0 {
			unjudged = append(unjudged, "p"+fmtPercentile(s.Percentile))
		}
	}
	if !c.Closed && len(unjudged) > 0 && r.Requests.OK > 0 {
		v.warn("%s of %d responses rest on fewer than %d responses each: the order statistics of the slowest few, not judged against the generator's lag",
			strings.Join(unjudged, ", "), r.Requests.OK, minTail)
	}
	for _, k := range sortedKeys(r.Errors) {
		if expectedStatuses[k] {
			v.warn("%d ledger requests ended %s (a normal outcome of the mix; not in the latency)", r.Errors[k], strings.TrimPrefix(k, "status_"))
		}
	}
	if q := &r.Requests; q.Kills > 0 {
		v.warn("%d connections were killed on purpose (every %d responses or so) and reopened, abandoning %d requests in flight: the latency includes the reconnections",
			q.Kills, c.KillEvery, q.Abandoned)
	}
	if r.Requests.ClampedDraws > 0 {
		v.warn("%d work or size draws were clamped to the protocol limits", r.Requests.ClampedDraws)
	}
	if lim.Relaxed() {
		v.warn("the checks on the generator's own health were relaxed (limits %+v): this verdict does not vouch for the generator", lim)
	}
}

// Invalidate marks r invalid for check c with reason, in the order of
// importance of its checks (a caller's own check, as the harness's
// CheckCeiling).
func (r *Result) Invalidate(c Check, reason string) {
	i := len(r.Checks)
	for j, x := range r.Checks {
		if checkOrder(c) < checkOrder(x) {
			i = j
			break
		}
	}
	r.Checks = slices.Insert(r.Checks, i, c)
	r.Reasons = slices.Insert(r.Reasons, min(i, len(r.Reasons)), reason)
	r.Valid = false
}

// checkOrder ranks the checks by importance: the reason that explains
// the others comes first (an aborted run, an overloaded server before the
// rate it missed, the generator's own troubles before their symptoms).
func checkOrder(c Check) int {
	for i, x := range []Check{CheckAborted, CheckNoResponses, CheckCeiling, CheckOverCapacity, CheckCPU, CheckBusy, CheckBias,
		CheckRate, CheckSendProcess, CheckUnsent, CheckErrors, CheckWarmup, CheckOutOfRange, CheckClock} {
		if x == c {
			return i
		}
	}
	return 100
}

// overCapacity returns why the window's trend shows a server falling
// behind, or "": the requests in flight (the server's backlog, as the
// generator sees it) growing through the window significantly and by more
// than minBacklogGrowth of the scheduled requests, or, at the window's
// end, the next send more than minBacklogGrowth of the window behind its
// schedule for want of a connection with room (the backlog beyond the
// in-flight bound).
//
// Note: the slices' mean latency is not a criterion, only reported
// (latencyGrowth warns): a mean is moved by a few stalls, and late in a
// window a machine's hiccups alone can make it grow severalfold while
// the backlog stays flat (docs/findings.md). A server that falls behind an open-loop generator
// leaves requests in flight, whatever its latency does.
func overCapacity(r *Result, t *Trend) string {
	var why []string
	if f := t.InFlight; len(f) >= 2 && t.InFlightZ > trendZ {
		if growth := f[len(f)-1] - f[0]; float64(growth) > minBacklogGrowth*float64(r.Requests.Scheduled) {
			why = append(why, fmt.Sprintf("the requests in flight grew from %d to %d through the window (trend z %.1f)", f[0], f[len(f)-1], t.InFlightZ))
		}
	}
	if d := t.ScheduleDebtNs; len(d) >= 2 && r.WindowNs > 0 && float64(d[len(d)-1]) > minBacklogGrowth*float64(r.WindowNs) {
		why = append(why, fmt.Sprintf("at the window's end the next send was %s behind its schedule, every connection at its in-flight bound", FormatNs(d[len(d)-1])))
	}
	return strings.Join(why, "; ")
}

// latencyGrowth returns a warning when the slices' mean latency grew
// significantly to over growthFactor times the first ones' without the
// backlog growing (then it is not over capacity, but worth knowing), or "".
func latencyGrowth(t *Trend) string {
	m := t.SliceMeanNs
	if len(m) < 6 || t.LatencyZ <= trendZ {
		return ""
	}
	first, last := meanInt(m[:3]), meanInt(m[len(m)-3:])
	if first <= 0 || last <= growthFactor*first {
		return ""
	}
	return fmt.Sprintf("the mean latency grew from %s in the window's first slices to %s in its last (trend z %.1f) while the requests in flight did not: stalls late in the window, not a server falling behind",
		FormatNs(int64(first)), FormatNs(int64(last)), t.LatencyZ)
}

func meanInt(xs []int64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

// zTwoSided returns the standard normal score beyond which a two-sided
// test rejects at level alpha.
func zTwoSided(alpha float64) float64 { return math.Sqrt2 * math.Erfinv(1-alpha) }
