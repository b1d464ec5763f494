package connio

import (
	"sync/atomic"

	"concbench/models"
	"concbench/wire"
)

// Ring is the in-order ring of a connection whose requests other threads
// serve (Half-Sync/Half-Reactive's workers, Active Object's schedulers):
// its requests in flight, by sequence number. A request is admitted
// (Push) and given the next sequence number; its response may complete in
// any order, and leaves in sequence order: the model writes the response
// due (Next) and then Pops it. T is the model's record of a request in
// flight, kept in the request's slot (Slot) for as long as the model
// needs.
//
// Admission is one rule for every model (Admits): fewer than the ring's
// limit in flight, and the output the connection has committed to — its
// pending output plus what its requests in flight reserve (Reserve) —
// below Config.MaxPendingOutput. With nothing in flight and nothing
// pending a request is always admitted, so one response may overshoot
// the bound, as with Session.OutputFull.
//
// Concurrency: Push belongs to the connection's input side (one thread at
// a time); Slot, Next, Pop and Drop to its output side, serialized by the
// model (the connection's mutex); Admits and InFlight may be called from
// any thread, so that a reactor can decide whether to read without the
// output side's lock: the counts they read only fall meanwhile.
//
// Note: the slots are a slice sized by Init, not an array of
// models.MaxInFlight, because Active Object's Options.MaxInFlight may set
// another bound for experiments; the slice costs one allocation per
// connection and none per request.
type Ring[T any] struct {
	slots    []T          // by sequence number modulo len(slots)
	head     uint64       // the sequence number of the response due next (output side)
	tail     uint64       // the sequence number the next request gets (input side)
	inflight atomic.Int64 // pushed and neither popped nor dropped
	reserved atomic.Int64 // the reservations of those
	maxOut   int64        // Config.MaxPendingOutput
}

// Init sizes the ring for limit requests in flight (models.MaxInFlight,
// unless a model's options override it) and an output bound of maxOut
// bytes (Config.MaxPendingOutput). It allocates the slots: call it once,
// when the connection is set up.
func (r *Ring[T]) Init(limit, maxOut int) {
	r.slots = make([]T, limit)
	r.maxOut = int64(maxOut)
}

// Reserve returns what a request reserves of its connection's output
// bound while in flight: the body it asks for (OpWork's Size) plus
// models.ResponseOverhead for the head and any other payload (a ledger
// result). An error response for a request that failed to decode
// reserves models.ResponseOverhead.
func Reserve(req *wire.Request) int {
	if req.Op == wire.OpWork {
		return models.ResponseOverhead + max(req.Size, 0)
	}
	return models.ResponseOverhead
}

// Admits reports whether the connection may put one more request in
// flight, its output side having pending bytes not yet written.
func (r *Ring[T]) Admits(pending int64) bool {
	return r.inflight.Load() < int64(len(r.slots)) && r.reserved.Load()+pending < r.maxOut
}

// Push puts a request that reserves reserve bytes (Reserve) in flight,
// after Admits said it may. It returns the request's sequence number and
// how many are in flight now.
func (r *Ring[T]) Push(reserve int) (seq uint64, inflight int64) {
	seq = r.tail
	r.tail++
	r.reserved.Add(int64(reserve))
	return seq, r.inflight.Add(1)
}

// Slot returns the slot of sequence number seq, which the model may use
// while seq is in flight.
func (r *Ring[T]) Slot(seq uint64) *T { return &r.slots[seq%uint64(len(r.slots))] }

// Next returns the sequence number of the response due next: the oldest
// request in flight, unless none is.
func (r *Ring[T]) Next() uint64 { return r.head }

// Pop retires the request due next (its response is now in the output,
// counted there) and releases its reservation.
func (r *Ring[T]) Pop(reserve int) {
	r.head++
	r.Drop(reserve)
}

// Drop retires a request whose response will never be written (the
// connection broke) without advancing the order: nothing is written any
// more, so nothing is due.
func (r *Ring[T]) Drop(reserve int) {
	r.reserved.Add(-int64(reserve))
	r.inflight.Add(-1)
}

// InFlight returns how many requests are in flight.
func (r *Ring[T]) InFlight() int64 { return r.inflight.Load() }

// Each calls f with every slot, for a model that must release what the
// slots hold (a broken connection's parked responses).
func (r *Ring[T]) Each(f func(slot *T)) {
	for i := range r.slots {
		f(&r.slots[i])
	}
}
