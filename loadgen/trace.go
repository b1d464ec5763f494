package loadgen

// MaxTrace is the largest Config.Trace accepted.
const MaxTrace = 1 << 20

// TraceRecord is one measured request answered ok, on the host's
// CLOCK_MONOTONIC (ns; package internal/monoclock), the clock concbench
// serve's trace uses too, so that the two join by ID.
type TraceRecord struct {
	ID uint64 `json:"id"`
	// IntendedNs is when the schedule meant it to leave; SentNs when it
	// was handed to write(2); RecvNs when its response arrived (the
	// kernel's receive timestamp converted to CLOCK_MONOTONIC, or the
	// time of the read without one, see Kernel).
	IntendedNs int64 `json:"intended_ns"`
	SentNs     int64 `json:"sent_ns"`
	RecvNs     int64 `json:"recv_ns"`
	// Kernel reports whether RecvNs is the kernel's receive timestamp.
	Kernel bool `json:"kernel"`
	// Corrected reports whether the request's corrected latency runs from
	// IntendedNs (held, resent, or sent late behind requests in flight);
	// otherwise it runs from SentNs.
	Corrected bool `json:"corrected"`
}

// Trace is the per-request record of a run with Config.Trace set.
type Trace struct {
	Records []TraceRecord `json:"records"`
	// Dropped counts measured requests answered ok that found the
	// workers' preallocated arrays full.
	Dropped int64 `json:"dropped"`
	// RealtimeOffsetNs is CLOCK_REALTIME − CLOCK_MONOTONIC at the run's
	// start, with which kernel receive timestamps (CLOCK_REALTIME) were
	// converted: a step of the wall clock during the run shifts them.
	RealtimeOffsetNs int64 `json:"realtime_offset_ns"`
}

// traceRec is a worker's record in its own time base (ns since the run's
// base), converted by assemble.
type traceRec struct {
	id                   uint64
	intended, sent, recv int64
	kernel, corrected    bool
}
