package service

import (
	"sync/atomic"

	"concbench/internal/monoclock"
)

// MaxTrace is the largest Trace capacity NewTrace accepts (records of 40
// bytes: 8 MB preallocated at the limit).
const MaxTrace = 200_000

// TraceRecord is one request served by Do while a Trace was set: its id,
// the CLOCK_MONOTONIC times (ns, package monoclock) at which Do started
// and finished serving it, and the OS thread that served it (its tid; 0
// where the platform does not say), so that a reader of a many-thread
// server's trace knows which services followed each other on one thread.
type TraceRecord struct {
	ID      uint64
	StartNs int64
	EndNs   int64
	Thread  int64
}

// Trace is an opt-in, preallocated record of the requests Do serves (see
// Config.Trace): the server's own timestamps of each request's service,
// which concbench validate joins with the load generator's by request id.
// Recording costs two clock reads, a gettid system call (after the
// service's end is read, so outside the service time) and a few stores; a
// Service without a Trace pays one nil check per request. It is safe for concurrent use:
// each record claims a slot with one atomic add and publishes it with one
// atomic store, so Records never sees a half-written record.
//
// A full Trace drops further records and counts them (Dropped), never
// overwrites: an experiment's records are all kept or the loss is known.
type Trace struct {
	slots []traceSlot
	next  atomic.Int64
}

type traceSlot struct {
	rec TraceRecord
	pub atomic.Bool
}

// NewTrace returns a Trace with room for capacity records, 1..MaxTrace.
func NewTrace(capacity int) *Trace {
	if capacity < 1 || capacity > MaxTrace {
		panic("service: trace capacity out of range")
	}
	return &Trace{slots: make([]traceSlot, capacity)}
}

// add records one request, served by the calling thread.
func (t *Trace) add(id uint64, start, end int64) {
	tid := threadID()
	i := t.next.Add(1) - 1
	if i >= int64(len(t.slots)) {
		return
	}
	s := &t.slots[i]
	s.rec = TraceRecord{ID: id, StartNs: start, EndNs: end, Thread: tid}
	s.pub.Store(true)
}

// Records returns a copy of the records published so far, in the order
// their slots were claimed, and how many were dropped because the Trace
// was full.
func (t *Trace) Records() (recs []TraceRecord, dropped int64) {
	n := t.next.Load()
	m := min(n, int64(len(t.slots)))
	recs = make([]TraceRecord, 0, m)
	for i := range m {
		if s := &t.slots[i]; s.pub.Load() {
			recs = append(recs, s.rec)
		}
	}
	return recs, n - m
}

// Reset empties the Trace. Call it when no request is being served (a
// request served across a Reset may leave its record in a slot of the next
// round, or lose it; never a torn record).
func (t *Trace) Reset() {
	n := min(t.next.Load(), int64(len(t.slots)))
	for i := range n {
		t.slots[i].pub.Store(false)
	}
	t.next.Store(0)
}

// Cap returns the Trace's capacity in records.
func (t *Trace) Cap() int { return len(t.slots) }

// ClockUncertainty is the largest error of the Trace's timestamps against
// the host's CLOCK_MONOTONIC, in ns, and whether that clock is shared by
// the host's processes at all (package monoclock).
func ClockUncertainty() (ns int64, shared bool) { return monoclock.Uncertainty(), monoclock.Shared() }

// TraceDump is a Trace's records in the compact form concbench serve's
// control command "trace" answers with: [id, start_ns, end_ns, thread]
// quadruples.
type TraceDump struct {
	Records [][4]int64 `json:"records"`
	Dropped int64      `json:"dropped"`
	// Capacity is the Trace's; ClockUncertaintyNs and SharedClock
	// describe the timestamps (ClockUncertainty).
	Capacity           int   `json:"capacity"`
	ClockUncertaintyNs int64 `json:"clock_uncertainty_ns"`
	SharedClock        bool  `json:"shared_clock"`
}

// Dump returns the records published so far (Records) as a TraceDump.
func (t *Trace) Dump() TraceDump {
	recs, dropped := t.Records()
	d := TraceDump{Records: make([][4]int64, len(recs)), Dropped: dropped, Capacity: t.Cap()}
	d.ClockUncertaintyNs, d.SharedClock = ClockUncertainty()
	for i, r := range recs {
		d.Records[i] = [4]int64{int64(r.ID), r.StartNs, r.EndNs, r.Thread}
	}
	return d
}
