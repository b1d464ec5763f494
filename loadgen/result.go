package loadgen

import (
	"fmt"
	"sort"
	"strings"
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
	errVerifyBody                 // the OpWork body is not AppendBody(id, size)
	errInterrupted                // in flight when the run was interrupted
	errStatusBase                 // + wire.Status: a response whose status is not ok
	numErrKinds           = errStatusBase + 8
)

var errKindNames = func() (n [numErrKinds]string) {
	copy(n[:], []string{"ok", "connect", "read", "write", "timeout", "unexpected_close",
		"unexpected_response", "malformed_response", "verify_id", "verify_order",
		"verify_checksum", "verify_body", "interrupted"})
	for s := range wire.Status(8) {
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
	if s >= 8 {
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
	// window (a Poisson count varies around the target); SentRatePerS and
	// AchievedRatePerS the measured requests sent, and answered (any
	// outcome), per second of the window.
	TargetRatePerS    float64 `json:"target_rate_per_s"`
	ScheduledRatePerS float64 `json:"scheduled_rate_per_s"`
	SentRatePerS      float64 `json:"sent_rate_per_s"`
	AchievedRatePerS  float64 `json:"achieved_rate_per_s"`

	// Requests counts the measured requests (warm-up excluded, except in
	// the Warmup fields).
	Requests Counts `json:"requests"`
	// Errors counts failures by kind: connect (attempts), read, write,
	// timeout, unexpected_close, unexpected_response, malformed_response,
	// verify_id, verify_order, verify_checksum, verify_body, interrupted,
	// and status_<name> for responses whose status is not ok. Every kind
	// but connect counts requests. Kinds that did not happen are absent.
	// Failed requests are never in the latency histograms.
	Errors map[string]int64 `json:"errors"`

	// Latency is the corrected latency: from each request's intended send
	// time to its response (coordinated omission corrected). Uncorrected is
	// from the actual send. In closed loop the intended time is the actual
	// send, so the two coincide. Only verified successful responses count.
	Latency     Summary `json:"latency"`
	Uncorrected Summary `json:"uncorrected_latency"`
	// SendLag is how late requests left against their schedule (open
	// loop), excluding those held by the in-flight bound; HeldLag is how
	// late the held ones left.
	SendLag Summary `json:"send_lag"`
	HeldLag Summary `json:"held_lag"`

	// Histogram is the range and precision of every histogram above.
	Histogram HistogramParams `json:"histogram"`
	// Generator is the load generator's own cost and health.
	Generator Generator `json:"generator"`
	// Hlog is the HdrHistogram log written, if any.
	Hlog string `json:"hlog,omitempty"`
}

// Counts are request counts of a run.
type Counts struct {
	Scheduled int64 `json:"scheduled"` // open loop: requests the schedule put in the window
	Sent      int64 `json:"sent"`      // measured requests written
	Completed int64 `json:"completed"` // responses received to them, any outcome
	OK        int64 `json:"ok"`        // verified, status ok: the latency histograms' count
	Failed    int64 `json:"failed"`    // requests that failed (Errors without connect)
	// Held counts requests whose batch found every connection at the
	// in-flight bound; they were sent as soon as a slot freed, late.
	Held int64 `json:"held"`
	// Unsent counts requests scheduled in the window but never sent: held
	// until the end, or waiting to be resent.
	Unsent int64 `json:"unsent"`
	// Resent counts requests re-issued because the server closed their
	// connection (Connection: close) before answering them.
	Resent       int64 `json:"resent"`
	Reconnects   int64 `json:"reconnects"`    // connections re-established during the run
	ServerCloses int64 `json:"server_closes"` // connections the server closed cleanly
	ClampedDraws int64 `json:"clamped_draws"` // work/size draws clamped to a protocol limit
	Warmup       int64 `json:"warmup"`        // responses during warm-up (not measured)
	WarmupErrors int64 `json:"warmup_errors"` // failures during warm-up
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
	// GC over the whole run (warm-up included): pause total and cycles.
	GCPauseNs int64  `json:"gc_pause_total_ns"`
	GCCycles  uint32 `json:"gc_cycles"`
	// AllocsPerRequest is heap allocations during the measurement per
	// measured request (runtime/metrics; whole process).
	AllocsPerRequest float64 `json:"allocs_per_request"`
	GOMAXPROCS       int     `json:"gomaxprocs"`
	CPUs             string  `json:"cpus"` // the generator's CPU affinity
}

// judge sets r.Valid and r.Reasons (and adds warnings) from r's numbers
// and the run's own failures (interruption, an unreachable server), which
// are reasons as given. It is pure, so the rules are testable on their own.
func judge(r *Result, failures ...string) {
	c := &r.Config
	reasons := append([]string(nil), failures...)
	var warns []string
	add := func(format string, args ...any) { reasons = append(reasons, fmt.Sprintf(format, args...)) }
	warn := func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }

	if r.Requests.OK == 0 {
		add("no successful responses were measured")
	}
	if !c.Closed && r.Requests.Scheduled > 0 && float64(r.Requests.Completed) < 0.99*float64(r.Requests.Scheduled) {
		add("achieved %.0f req/s is below 99%% of the %.0f req/s scheduled (target %.0f): %d of %d scheduled requests were answered",
			r.AchievedRatePerS, r.ScheduledRatePerS, r.TargetRatePerS, r.Requests.Completed, r.Requests.Scheduled)
	}
	if !c.Closed && r.SendLag.Count > 0 && r.SendLag.P99Ns > int64(c.MaxSendLag) {
		add("send lag p99 %s exceeds %s: the generator could not keep its schedule",
			FormatNs(r.SendLag.P99Ns), FormatNs(int64(c.MaxSendLag)))
	}
	var bad []string
	for _, k := range sortedKeys(r.Errors) {
		if k != "interrupted" && !expectedStatuses[k] {
			bad = append(bad, fmt.Sprintf("%s %d", k, r.Errors[k]))
		}
	}
	if len(bad) > 0 {
		add("errors: %s", strings.Join(bad, ", "))
	}
	if r.Requests.WarmupErrors > 0 {
		add("%d requests failed during warm-up", r.Requests.WarmupErrors)
	}
	if time.Duration(r.WarmupNs) < MinWarmup {
		add("warm-up %v is shorter than %v", time.Duration(r.WarmupNs), MinWarmup)
	}
	for _, h := range []struct {
		name string
		s    *Summary
	}{{"latency", &r.Latency}, {"uncorrected latency", &r.Uncorrected}, {"send lag", &r.SendLag}, {"held lag", &r.HeldLag}} {
		if h.s.OutOfRange > 0 {
			add("%d %s values fell outside the histogram range %s..%s and were clamped",
				h.s.OutOfRange, h.name, FormatNs(r.Histogram.LowestNs), FormatNs(r.Histogram.HighestNs))
		}
	}

	if r.Requests.Held > 0 {
		warn("%d requests (%.2f%%) waited for the in-flight bound (%d per connection) and left late (held lag p99 %s); their corrected latency includes the wait",
			r.Requests.Held, pct(r.Requests.Held, r.Requests.Sent), c.MaxInFlight, FormatNs(r.HeldLag.P99Ns))
	}
	if r.Requests.Unsent > 0 {
		warn("%d scheduled requests were never sent", r.Requests.Unsent)
	}
	if r.Generator.BusyFraction > 0.9 {
		warn("the generator's workers were busy %.0f%% of the time: it is near saturation; add workers or CPUs", 100*r.Generator.BusyFraction)
	}
	if g := &r.Generator; r.WindowNs > 0 && g.WorkerRunQueueNs > r.WindowNs/100*int64(max(g.Workers, 1)) {
		warn("the generator's threads waited %s for a CPU during the window (%d involuntary context switches): other work shares their CPUs, so part of the send lag is the machine's; pin the generator (--cpus) to an idle CPU",
			FormatNs(g.WorkerRunQueueNs), g.WorkerInvoluntaryCtxsw)
	}
	if r.Generator.GCPauseNs > int64(time.Millisecond) {
		warn("the generator's GC paused %s during the run", FormatNs(r.Generator.GCPauseNs))
	}
	for _, k := range sortedKeys(r.Errors) {
		if expectedStatuses[k] {
			warn("%d ledger requests ended %s (a normal outcome of the mix; not in the latency)", r.Errors[k], strings.TrimPrefix(k, "status_"))
		}
	}
	if r.Requests.ClampedDraws > 0 {
		warn("%d work or size draws were clamped to the protocol limits", r.Requests.ClampedDraws)
	}

	r.Valid = len(reasons) == 0
	r.Reasons = append(r.Reasons[:0], reasons...)
	r.Warnings = append(r.Warnings, warns...)
	if r.Reasons == nil {
		r.Reasons = []string{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
}

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
