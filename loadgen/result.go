package loadgen

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"concbench/wire"
)

// errKind is a kind of failure, an index into the per-worker error counters
// (plain array increments on the hot path; the map is built at the end).
type errKind uint8

// The failure kinds; errKindNames must match. kindOK is success.
const (
	kindOK                errKind = iota
	errConnect                    // a connection attempt failed (counts attempts, not requests)
	errRead                       // read(2) failed (e.g. connection reset)
	errWrite                      // write(2) failed
	errTimeout                    // no response within Timeout of the send
	errUnexpectedClose            // the server closed with requests unanswered, without Connection: close
	errUnexpectedResponse         // a response arrived with no request in flight
	errMalformedResponse          // a response failed to decode (wire.DecodeResponse)
	errVerifyID                   // the response carries another request's id
	errVerifyOrder                // the response answers a request sent later on the connection (out of order)
	errVerifyChecksum             // the checksum does not match the payload (or is missing in full mode)
	errVerifyBody                 // the OpWork body is not AppendBody(id, size), or a ledger answer is not a balance
	errVerifyDuplicate            // a second response to a request its connection had answered (counts the response)
	errVerifyTotal                // a total outside what the acknowledged deposits and withdrawals allow (Config.LedgerMoney)
	errInterrupted                // in flight when the run was interrupted
	errStatusBase                 // + wire.Status: a response whose status is not ok
	numErrKinds           = errStatusBase + wire.NumStatuses
)

var errKindNames = func() (n [numErrKinds]string) {
	copy(n[:], []string{"ok", "connect", "read", "write", "timeout", "unexpected_close",
		"unexpected_response", "malformed_response", "verify_id", "verify_order",
		"verify_checksum", "verify_body", "verify_duplicate", "verify_total", "interrupted"})
	for s := range wire.Status(wire.NumStatuses) {
		n[errStatusBase+errKind(s)] = "status_" + s.String()
	}
	return n
}()

func (k errKind) String() string { return errKindNames[k] }

// statusKind returns the kind of a response with status s.
func statusKind(s wire.Status) errKind {
	if s == wire.StatusOK {
		return kindOK
	}
	if s >= wire.NumStatuses {
		return errStatusBase + errKind(wire.StatusInternal)
	}
	return errStatusBase + errKind(s)
}

// expectedStatuses are the error kinds that are a ledger operation's normal
// outcome under a random mix (a withdrawal or transfer without funds, a
// guarded withdrawal that timed out), not a sign of a broken server or run:
// they are counted in Errors but do not make a run invalid.
var expectedStatuses = map[string]bool{
	"status_" + wire.StatusInsufficientFunds.String(): true,
	"status_" + wire.StatusTimeout.String():           true,
}

// ExpectedOutcome reports whether an Errors kind is a normal outcome of
// a ledger operation under a random mix (a withdrawal without funds, a
// guarded withdrawal that timed out) rather than a failure: such requests
// are counted and kept out of the latency, but do not make a run invalid.
func ExpectedOutcome(kind string) bool { return expectedStatuses[kind] }

// Result is the outcome of a run. It marshals to JSON with units in field
// names and never contains NaN or Inf.
type Result struct {
	// Mode is the run's label (Config.Mode): "open-loop poisson",
	// "closed-loop (1 outstanding per connection)", …
	Mode string `json:"mode"`
	// Valid is the verdict: false if the run cannot be trusted, for the
	// Reasons given (each a sentence naming the numbers).
	Valid   bool     `json:"valid"`
	Reasons []string `json:"reasons"`
	// Checks names the failed checks, one short code per reason, in the
	// same order as Reasons (the first is the main one): see the Check
	// constants. Reports group invalid points by it.
	Checks []Check `json:"failed_checks"`
	// OverCapacity is set when the verdict found that the server did not
	// keep up with the offered load (its backlog or its latency grew over
	// the window): the point measured an overloaded server, not a steady
	// state. Such a point is invalid (Checks contains CheckOverCapacity).
	OverCapacity bool `json:"over_capacity"`
	// Warnings are facts worth knowing that do not invalidate the run.
	Warnings []string `json:"warnings"`
	// Config is the configuration run, defaults applied.
	Config Config `json:"config"`
	// StartTime is the wall-clock start of the measurement (after warm-up).
	StartTime time.Time `json:"start_time"`
	// WarmupNs is the warm-up actually run; WindowNs the measurement
	// window: Duration, or in Requests mode from the end of warm-up to the
	// intended time of the first unscheduled batch (open loop) or the last
	// measured response (closed loop).
	WarmupNs int64 `json:"warmup_ns"`
	WindowNs int64 `json:"window_ns"`

	// TargetRatePerS is the mean rate the configuration asks for (0 in
	// closed loop); ScheduledRatePerS what the schedule actually put in the
	// window (a Poisson count varies around the target); SentRatePerS the
	// measured requests sent per second of the window; AchievedRatePerS
	// the measured requests sent AND answered (any outcome) inside the
	// window, per second of it: responses that arrive after the window
	// (the backlog of a server that falls behind) do not count.
	TargetRatePerS    float64 `json:"target_rate_per_s"`
	ScheduledRatePerS float64 `json:"scheduled_rate_per_s"`
	SentRatePerS      float64 `json:"sent_rate_per_s"`
	AchievedRatePerS  float64 `json:"achieved_rate_per_s"`

	// Requests counts the measured requests (warm-up excluded, except in
	// the Warmup fields).
	Requests Counts `json:"requests"`
	// Errors counts failures by kind: connect (attempts), read, write,
	// timeout, unexpected_close, unexpected_response, malformed_response,
	// verify_id, verify_order, verify_checksum, verify_body,
	// verify_duplicate, verify_total, interrupted, and status_<name> for
	// responses whose status is not ok. Every kind but connect counts
	// requests, except two that count responses: unexpected_response (a
	// response with no request in flight) and verify_duplicate (a second
	// response to a request answered already, which is then skipped).
	// Kinds that did not happen are absent. Failed requests are never in
	// the latency histograms.
	Errors map[string]int64 `json:"errors"`

	// Latency is the corrected latency, from each request's intended send
	// time (coordinated omission corrected) — except for a request that
	// the generator itself sent late while none of its other requests
	// was in flight: that one found the server idle, so its lateness hid
	// no queueing, and it counts from its actual send (the generator's
	// lateness is not the server's; SendLag measures it). Uncorrected is
	// from the actual send for every request, FromIntended from the
	// intended time for every request (wrk2's definition, which charges
	// the generator's lateness to the server even when the server was
	// idle). In closed loop all of them coincide. Only verified successful
	// responses count.
	Latency     Summary `json:"latency"`
	Uncorrected Summary `json:"uncorrected_latency"`
	// Classes is Latency per priority class (Config.PriorityClasses), in
	// increasing priority; absent without classes.
	Classes []ClassLatency `json:"priority_classes,omitempty"`
	// SendLag is how late requests left against their schedule (open
	// loop), excluding those held by the in-flight bound; HeldLag is how
	// late the held ones left.
	SendLag Summary `json:"send_lag"`
	HeldLag Summary `json:"held_lag"`
	// FromIntended is the latency from the intended send time with the
	// generator's own send lag included: wrk2's definition, which charges
	// the server with the generator's lateness too (open loop; Latency
	// does not). Only verified successful responses count.
	FromIntended Summary `json:"latency_from_intended"`
	// WithoutOwnLag is the latency that never charges the generator's own
	// send lag (from the actual send, except for requests the server held
	// back): the lower end of what an on-time generator would have
	// measured, as Latency is the upper end (open loop).
	WithoutOwnLag Summary `json:"latency_without_own_lag"`
	// LagShares compares Latency and WithoutOwnLag at each reported
	// percentile: the generator's own lateness that Latency charges to
	// the server. The verdict judges them (open loop).
	LagShares []LagShare `json:"lag_shares,omitempty"`
	// SendProcess checks the requests actually sent against the arrival
	// process asked for (open loop, Poisson).
	SendProcess SendProcess `json:"send_process"`
	// Trend is the overload detector's view of the window (open loop
	// with a duration).
	Trend *Trend `json:"trend,omitempty"`
	// Timing is how the workers waited and timestamped: their polling
	// mode, the machine's measured wake-up lateness, and the source of
	// the receive timestamps.
	Timing Timing `json:"timing"`

	// Histogram is the range and precision of every histogram above.
	Histogram HistogramParams `json:"histogram"`
	// Generator is the load generator's own cost and health.
	Generator Generator `json:"generator"`
	// Hlog is the HdrHistogram log written, if any.
	Hlog string `json:"hlog,omitempty"`
	// Intervals is the tail of the window's intervals (Config.TailInterval;
	// nil without it).
	Intervals *IntervalTail `json:"intervals,omitempty"`
	// Ledger is what the run did to the server's ledger, by its
	// answers: present when the mix has deposits, withdrawals or totals.
	Ledger *Ledger `json:"ledger,omitempty"`
	// Trace is the per-request record asked for with Config.Trace (nil
	// without); not written with the result.
	Trace *Trace `json:"-"`
}

// Check is a short, stable code for one of the verdict's checks, as
// Result.Checks records a failed one.
type Check string

// The checks a run can fail. Each is explained in the package
// documentation ("Self-checks and the verdict").
const (
	CheckNoResponses  Check = "no-responses"   // no successful response was measured
	CheckRate         Check = "rate"           // too few requests sent and completed inside the window
	CheckOverCapacity Check = "over-capacity"  // the server's backlog or latency grew over the window
	CheckBias         Check = "generator-lag"  // the generator's own lateness moved a reported percentile
	CheckSendProcess  Check = "send-process"   // the requests actually sent do not follow the arrival process
	CheckUnsent       Check = "unsent"         // scheduled requests were never sent
	CheckErrors       Check = "errors"         // requests failed (verification, transport, status)
	CheckWarmup       Check = "warm-up"        // warm-up failures, or a warm-up too short
	CheckOutOfRange   Check = "out-of-range"   // values beyond a histogram's range
	CheckBusy         Check = "generator-busy" // the generator's workers were near saturation
	CheckCPU          Check = "generator-cpu"  // the generator's threads waited for a CPU, or its CPU was stolen
	// CheckCeiling is set by the harness, not by Run: the rate reached a
	// stated fraction of the generator's ceiling measured at the start of
	// the run, beyond what this generator can vouch for.
	CheckCeiling Check = "generator-ceiling"
	CheckClock   Check = "clock"   // the wall clock was stepped during the run
	CheckAborted Check = "aborted" // interrupted, or the server went away
)

// Meaning explains the check in one sentence, for reports that group
// invalid points by their main check; "" for an unknown code.
func (c Check) Meaning() string {
	return map[Check]string{
		CheckNoResponses:  "no successful response was measured",
		CheckRate:         "too few requests were sent and answered inside the window",
		CheckOverCapacity: "the server's backlog or latency grew over the window: it did not keep up with the offered load",
		CheckBias:         "the load generator's own lateness moved a reported latency percentile",
		CheckSendProcess:  "the requests actually sent do not follow the arrival process asked for",
		CheckUnsent:       "scheduled requests were never sent",
		CheckErrors:       "requests failed (verification, transport or status errors)",
		CheckWarmup:       "the warm-up had failures, or was too short",
		CheckOutOfRange:   "values fell beyond a histogram's range",
		CheckBusy:         "the load generator's workers were near saturation",
		CheckCPU:          "the load generator's threads waited for a CPU, or the hypervisor took its CPU",
		CheckCeiling:      "the rate reached the stated fraction of the load generator's own ceiling, measured at the start of the run: beyond what this generator measures here",
		CheckClock:        "the wall clock was stepped during the run",
		CheckAborted:      "the run was interrupted, or the server went away",
	}[c]
}

// Counts are request counts of a run.
type Counts struct {
	Scheduled int64 `json:"scheduled"` // open loop: requests the schedule put in the window
	Sent      int64 `json:"sent"`      // measured requests written
	Completed int64 `json:"completed"` // responses received to them, any outcome
	// InWindow counts the measured requests answered (any outcome) by the
	// window's end: what AchievedRatePerS counts.
	InWindow int64 `json:"in_window"`
	OK       int64 `json:"ok"`     // verified, status ok: the latency histograms' count
	Failed   int64 `json:"failed"` // requests that failed (Errors without connect)
	// Held counts requests whose batch found every connection at the
	// in-flight bound; they were sent as soon as a slot freed, late.
	Held int64 `json:"held"`
	// Unsent counts requests scheduled in the window but never sent: held
	// until the end, or waiting to be resent.
	Unsent int64 `json:"unsent"`
	// Resent counts requests re-issued because the server closed their
	// connection (Connection: close) before answering them, or refused
	// the connection at its limit (Refused).
	Resent       int64 `json:"resent"`
	Reconnects   int64 `json:"reconnects"`    // connections re-established during the run
	ServerCloses int64 `json:"server_closes"` // connections the server closed cleanly
	ClampedDraws int64 `json:"clamped_draws"` // work/size draws clamped to a protocol limit
	Warmup       int64 `json:"warmup"`        // responses during warm-up (not measured)
	WarmupErrors int64 `json:"warmup_errors"` // failures during warm-up
	// Kills counts the connections the generator killed on purpose
	// (Config.KillEvery), each reopened; Abandoned the measured requests
	// that were in flight on them: neither answered nor failed.
	Kills int64 `json:"kills,omitempty"`
	// Recycled counts the connections the generator closed after their
	// Config.ConnRequests requests, each reopened.
	Recycled  int64 `json:"recycled,omitempty"`
	Abandoned int64 `json:"abandoned,omitempty"`
	// Refused counts the connections the server refused at its limit
	// (models.Config.MaxConns, thread per connection's threads: a
	// response of id 0, status unavailable, before any answer on the
	// connection) after priming: the server read none of their requests,
	// which were resent on other connections (counted in Resent), and
	// the connection was reopened after a backoff.
	Refused int64 `json:"refused,omitempty"`
}

// Ledger is what a run did to the server's ledger, as the server's
// answers tell it, warm-up and priming included: every deposit and
// withdrawal counted once by its outcome. Transfers move money between
// accounts and leave the ledger's money alone, so they are not counted.
//
// Where Unknown is 0 the ledger's money after the run is exactly its
// money before plus Delta (what "concbench soak" checks); otherwise it
// lies within Unknown × Amount of that.
type Ledger struct {
	// Amount is what each deposit and withdrawal moved (Config.Amount).
	Amount int64 `json:"amount"`
	// Deposits and Withdrawals count those the server acknowledged
	// (status ok, the response verified).
	Deposits    int64 `json:"deposits"`
	Withdrawals int64 `json:"withdrawals"`
	// Refused counts those the ledger answered with an error of its own
	// (insufficient funds, a guarded withdrawal's timeout, overflow, no
	// such account, a bad request): it changed nothing.
	Refused int64 `json:"refused"`
	// Unknown counts those whose outcome is unknown: sent and then never
	// answered (a timeout, a reset, an interrupted run), answered by a
	// response that failed verification, or answered unavailable or
	// internal (a front end whose back end failed may have passed the
	// request on before it failed).
	Unknown int64 `json:"unknown"`
	// Totals counts the total responses checked against
	// Config.LedgerMoney and the deposits and withdrawals around them;
	// those outside their bounds are Errors' verify_total.
	Totals int64 `json:"totals_checked"`
}

// Delta returns the change to the ledger's money that the acknowledged
// deposits and withdrawals made.
func (l *Ledger) Delta() int64 { return (l.Deposits - l.Withdrawals) * l.Amount }

// LagShare is one reported percentile of the corrected latency next to
// the same percentile of the latency that never charges the generator's
// own lateness: their difference is how much of the reported percentile
// may be the generator's doing rather than the server's.
type LagShare struct {
	Percentile   float64 `json:"percentile"`
	LatencyNs    int64   `json:"latency_ns"`
	WithoutLagNs int64   `json:"without_own_lag_ns"`
	// Share is (LatencyNs − WithoutLagNs) / LatencyNs.
	Share float64 `json:"share"`
	// BoundNs is the largest difference the verdict accepts at this
	// percentile: Limits.MaxLagShare of the latency, and at least the
	// histograms' resolution (HistLowest).
	BoundNs int64 `json:"bound_ns"`
	// Judged is false for a percentile with fewer than minTail responses
	// beyond it (an order statistic of the few slowest requests, which
	// the verdict does not judge; reports should not either).
	Judged bool `json:"judged"`
	// Exceeded is set when a judged percentile's difference exceeds
	// BoundNs: for p50, p90 and p99 the run is then invalid; for p99.9 and
	// p99.99 that percentile alone is not to be trusted (Trusted).
	Exceeded bool `json:"exceeded"`
}

// SendProcess is the check of the actual send process against the one
// asked for, as Lancet does: the gaps between consecutive arrivals as
// sent, in units of their mean, against the exponential distribution
// (Kolmogorov–Smirnov), and their lag-1 rank correlation (Spearman),
// which must be 0 for a Poisson process. The same statistics of the
// intended times of the same arrivals are the control: the schedule
// itself is Poisson, so a check that fails for the sends while passing
// for the schedule is the generator's doing.
type SendProcess struct {
	// Applicable is false where the check does not apply (closed loop,
	// constant or on/off arrivals, a Requests-mode run); Note says why.
	Applicable bool   `json:"applicable"`
	Note       string `json:"note,omitempty"`
	Gaps       int    `json:"gaps"`
	// ResolutionNs is the median time the run's send system calls took:
	// gaps shorter than it count as that long on both sides of the check.
	ResolutionNs int64 `json:"resolution_ns"`
	// Judged is false when the generator was too busy to follow the
	// gaps (busier than maxBusyForProcess; Note says so). The statistics
	// are still reported.
	Judged  bool    `json:"judged"`
	KSD     float64 `json:"ks_d"`
	KSP     float64 `json:"ks_p"`
	Lag1Rho float64 `json:"lag1_spearman_rho"`
	Lag1Z   float64 `json:"lag1_z"`
	// The same statistics of the intended times (the control).
	PlannedKSD     float64 `json:"planned_ks_d"`
	PlannedKSP     float64 `json:"planned_ks_p"`
	PlannedLag1Rho float64 `json:"planned_lag1_spearman_rho"`
	PlannedLag1Z   float64 `json:"planned_lag1_z"`
}

// Trend is the overload detector's view of an open-loop window cut into
// numSlices equal slices by intended send time: the mean corrected
// latency of each slice's requests, and at each slice boundary the
// requests in flight and how far the next send lagged its schedule for
// want of a connection with room. A server that keeps up shows no trend;
// one that falls behind shows latency and in-flight requests that grow
// through the window.
type Trend struct {
	SliceMeanNs    []int64 `json:"slice_mean_latency_ns"`
	InFlight       []int64 `json:"in_flight"`
	ScheduleDebtNs []int64 `json:"schedule_debt_ns"`
	// LatencyZ and InFlightZ are the Mann–Kendall trend statistics
	// (standard normal scores; positive: growing) of the slice means
	// and of the in-flight samples.
	LatencyZ  float64 `json:"latency_trend_z"`
	InFlightZ float64 `json:"in_flight_trend_z"`
}

// Timing is how the workers waited for events and sends, and how the
// responses were timestamped.
type Timing struct {
	// Poll is the workers' polling mode; SpinNs (PollSleep) the spin
	// margin in force at the end of the run (the largest across workers).
	Poll   Poll  `json:"poll"`
	SpinNs int64 `json:"spin_ns"`
	// ProbeWakeLateness is how late probeSamples timed waits of each
	// worker woke before the run (the machine's timer and wake-up
	// lateness: every mode measures it); RunWakeLateness how late the
	// run's timed waits woke (PollSleep, the probe included).
	ProbeWakeLateness Lateness `json:"probe_wake_lateness"`
	RunWakeLateness   Lateness `json:"run_wake_lateness"`
	// IdleIterations (PollBusy) is the length of the loop's idle
	// iterations: a poll that found nothing costs about a microsecond, so
	// the long ones are the machine stalling the generator's thread
	// (interrupts, the hypervisor). StalledNs is the time lost to them
	// (the excess over the median of every idle iteration longer than
	// stallFactor medians, summed over workers) and StalledFraction its
	// share of the workers' time.
	IdleIterations Lateness `json:"idle_iterations"`
	// SendCall is how long the write(2) calls that sent requests took: on
	// loopback each runs the server's receive path and its wake-up in the
	// generator's thread, so a request due meanwhile leaves late by up to
	// that much; it is this generator's floor of punctuality here.
	SendCall        Lateness `json:"send_call"`
	StalledNs       int64    `json:"stalled_ns"`
	StalledFraction float64  `json:"stalled_fraction"`
	// ReceiveTimestamps says where response times come from: "kernel"
	// (SO_TIMESTAMPNS: when the kernel received the data, so that a
	// worker busy elsewhere or waking up does not add its delay),
	// "user" (after the read returned), or "mixed" (KernelStamped and
	// UserStamped reads of each).
	ReceiveTimestamps string `json:"receive_timestamps"`
	KernelStamped     int64  `json:"kernel_stamped_reads"`
	UserStamped       int64  `json:"user_stamped_reads"`
	// ReceiveLag is how long after the kernel's timestamp the worker read
	// the data: what user-space timestamps would have added.
	ReceiveLag Summary `json:"receive_lag"`
	// ClockStepNs is how far the wall clock was stepped during the run
	// (the kernel's timestamps are wall-clock times, converted with the
	// offset at the start); StampedBeforeSend counts responses whose
	// timestamp preceded their request's send (then replaced by the send).
	ClockStepNs       int64 `json:"clock_step_ns"`
	StampedBeforeSend int64 `json:"stamped_before_send"`
}

// HistogramParams is the range and precision of the histograms.
type HistogramParams struct {
	LowestNs          int64 `json:"lowest_ns"`
	HighestNs         int64 `json:"highest_ns"`
	SignificantDigits int   `json:"significant_digits"`
}

// Generator is what the load generator itself cost, and how healthy it
// was. CPU is measured per worker thread (getrusage RUSAGE_THREAD) from the
// start of the measurement to the end of the drain, and for the whole
// process (RUSAGE_SELF) over the same span.
type Generator struct {
	Workers        int   `json:"workers"`
	WorkerUserNs   int64 `json:"worker_user_ns"`
	WorkerSystemNs int64 `json:"worker_system_ns"`
	ProcessCPUNs   int64 `json:"process_cpu_ns"`
	// WorkerRunQueueNs is the time the worker threads were runnable but
	// waited for a CPU (schedstat), and the context switches are theirs
	// (RUSAGE_THREAD): a generator that shares its CPU with other work
	// shows it here, and its send lag is then the machine's doing.
	WorkerRunQueueNs       int64 `json:"worker_run_queue_ns"`
	WorkerVoluntaryCtxsw   int64 `json:"worker_voluntary_ctxsw"`
	WorkerInvoluntaryCtxsw int64 `json:"worker_involuntary_ctxsw"`
	// CPUNsPerRequest is the workers' CPU per measured request sent. With
	// spinning (Spin ≥ 0) a worker that is not saturated burns its idle
	// time polling, so this is an upper bound; BusyFraction is the share
	// of the workers' time spent doing work rather than waiting.
	CPUNsPerRequest float64 `json:"cpu_ns_per_request"`
	BusyFraction    float64 `json:"busy_fraction"`
	// StealNs is the time the hypervisor ran something else while the
	// generator's CPUs wanted to run, over the window (/proc/stat; 0
	// where it is not accounted), and StealFraction its share of those
	// CPUs' time. StealUnavailable says why it could not be read.
	StealNs          int64   `json:"steal_ns"`
	StealFraction    float64 `json:"steal_fraction"`
	StealUnavailable string  `json:"steal_unavailable,omitempty"`
	// RunQueueFraction is WorkerRunQueueNs as a share of the workers'
	// time in the window.
	RunQueueFraction float64 `json:"run_queue_fraction"`
	// GC over the whole run (warm-up included): pause total and cycles.
	GCPauseNs int64  `json:"gc_pause_total_ns"`
	GCCycles  uint32 `json:"gc_cycles"`
	// AllocsPerRequest is heap allocations during the measurement per
	// measured request (runtime/metrics; whole process).
	AllocsPerRequest float64 `json:"allocs_per_request"`
	GOMAXPROCS       int     `json:"gomaxprocs"`
	CPUs             string  `json:"cpus"` // the generator's CPU affinity
}

// fmtPercentile formats a percentile for a label: 50, 99, 99.9, 99.99.
func fmtPercentile(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FormatNs formats a nanosecond count as a duration with three significant
// digits: "812ns", "45.1µs", "1.23ms", "200ms", "1.50s".
func FormatNs(ns int64) string {
	d := time.Duration(ns)
	var unit string
	var v float64
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", ns)
	case d < time.Millisecond:
		v, unit = float64(ns)/1e3, "µs"
	case d < time.Second:
		v, unit = float64(ns)/1e6, "ms"
	default:
		v, unit = float64(ns)/1e9, "s"
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f%s", v, unit)
	case v < 100:
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}
