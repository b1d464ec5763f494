package activeobject

import (
	"slices"
	"sync/atomic"

	"concbench/internal/futex"
)

// snapshot is one Total (or Audit) in progress: a consistent global
// snapshot of the active objects, taken with the Chandy–Lamport marker
// algorithm over the channels that carry money between them.
//
// The channel from object i to object j is j's activation queue restricted
// to the requests i sends it (TransferIn, Refund): i's scheduler enqueues
// them in its execution order and j takes them in arrival order, so the
// channel is FIFO. A request "arrives" when j's scheduler takes it from the
// queue (arriver), before its guard is evaluated — a refund that then waits
// in the activation list for room holds its money at j.
//
// Each object records its state once, either when it runs the snapshot's
// start request (enqueued by the Proxy on every object) or when the first
// marker of the snapshot reaches it, whichever comes first; on recording it
// sends a marker to every other object. Money that arrives at j from i after
// j recorded and before i's marker reaches j was in flight at the cut: it is
// added to j's part. j's part is complete when markers from all others have
// arrived. The sum of the parts — balances, money held, money on channels —
// is the state of a consistent cut: Balances + InFlight is the conserved
// total, and InFlight is exactly the money between objects at the cut.
//
// Note: two simpler designs were rejected. Summing each object's balances
// plus (sent − received) as its part is always "right" by construction — it
// is just every shard's initial money plus its deposits minus its
// withdrawals — so it would hide money lost between objects, and its
// balances and in-flight halves mix states of different moments (the
// in-flight half can even be negative). Pausing every scheduler at a barrier
// gives a consistent cut too, but stops the whole ledger for each Total and
// makes schedulers wait for each other, which the model otherwise never
// does.
//
// Each part is contributed exactly once (a CAS on contributed): by its
// object when complete, or, when the server closes, by whoever finds it
// unfinishable (its object's shutdown, or the Proxy that could not enqueue
// the start).
type snapshot struct {
	check bool // run each servant's ledger audit too
	fut   *Future
	parts []snapPart // indexed by object; each touched only by its object's thread

	mu        futex.Mutex // guards remaining, sum and failed
	remaining int         // parts not yet contributed
	sum       Audit
	failed    bool // a part was cancelled

	contributed func(object int) // Options.contributed (tests), or nil
}

// snapPart is one object's part of a snapshot.
type snapPart struct {
	contributed atomic.Bool
	recorded    bool
	state       auditPart
	open        []bool // per source object: its marker has not arrived yet
	waiting     int    // markers still expected
	channel     int64  // money arrived on open channels
}

func newSnapshot(f *Future, objects int, check bool) *snapshot {
	sn := &snapshot{check: check, fut: f, parts: make([]snapPart, objects)}
	sn.remaining = objects
	return sn
}

// contribute adds object i's part (or, with cancelled, its failure) once;
// the last contribution completes the future with the conserved total.
//
// A part is added and counted in one critical section, so the contributor
// that counts the last part reads a sum that holds every part. Note:
// counting with an atomic decrement after the mutex was released let two
// contributors interleave as add A, add B, count B, count A: A counted
// last and completed the future with the total it had read after adding
// its own part only, one object's money short (TestTotalCountsEveryPart).
func (sn *snapshot) contribute(by *scheduler, i int, cancelled bool) {
	p := &sn.parts[i]
	if !p.contributed.CompareAndSwap(false, true) {
		return
	}
	sn.mu.Lock()
	if cancelled {
		sn.failed = true
	} else {
		sn.sum.Balances += p.state.balances
		sn.sum.InFlight += p.state.held + p.channel
		sn.sum.Deposited += p.state.deposited
		sn.sum.Withdrawn += p.state.withdrawn
		if p.state.err != nil && sn.sum.Err == nil {
			sn.sum.Err = p.state.err
		}
	}
	sn.remaining--
	last := sn.remaining == 0
	total, failed := sn.sum.Balances+sn.sum.InFlight, sn.failed
	sn.mu.Unlock()
	if sn.contributed != nil {
		sn.contributed(i)
	}
	if !last {
		return
	}
	if failed {
		sn.fut.complete(by, 0, ErrClosed)
	} else {
		sn.fut.complete(by, total, nil)
	}
}

// snapStartRequest starts a snapshot on one object: the object records its
// state unless a marker made it record already. It holds a slot like any
// request from a client.
type snapStartRequest struct {
	base
	snap *snapshot
}

func (r *snapStartRequest) Call() {
	r.doWork()
	r.obj.record(r.snap, -1)
	r.obj.released(r.charge)
}

func (r *snapStartRequest) Cancel() {
	if !r.snap.parts[r.obj.index].recorded {
		r.snap.contribute(r.obj, r.obj.index, true)
	}
	r.obj.released(r.charge)
}

// snapMarkerRequest is the marker object from sends object obj after it
// recorded its state for snap. Markers are continuations of the snapshot's
// start requests (not charged).
type snapMarkerRequest struct {
	base
	snap *snapshot
	from int
}

func (r *snapMarkerRequest) Call() { r.obj.marker(r.snap, r.from) }

// Cancel does nothing: the part this marker would have completed is
// contributed as cancelled by the object's shutdown.
func (r *snapMarkerRequest) Cancel() {}

// record records s's state for sn, unless it has, and sends its markers.
// from is the object whose marker triggered it, or -1 for the start request.
func (s *scheduler) record(sn *snapshot, from int) {
	p := &sn.parts[s.index]
	if p.recorded {
		return
	}
	p.recorded = true
	p.state = s.servant.record(sn.check)
	k := len(sn.parts)
	p.open = make([]bool, k)
	for i := range p.open {
		p.open[i] = i != s.index
	}
	p.waiting = k - 1
	if from >= 0 {
		p.open[from] = false
		p.waiting--
	}
	for _, o := range s.peers {
		if o == s {
			continue
		}
		// A closed queue means o is shutting down: its shutdown contributes
		// its part as cancelled.
		_ = o.queue.enqueueContinuation(&snapMarkerRequest{base: base{obj: o}, snap: sn, from: s.index})
	}
	if p.waiting == 0 {
		sn.contribute(s, s.index, false)
		return
	}
	s.snaps = append(s.snaps, sn)
}

// marker handles the arrival of from's marker for sn.
func (s *scheduler) marker(sn *snapshot, from int) {
	p := &sn.parts[s.index]
	if !p.recorded {
		s.record(sn, from)
		return
	}
	p.open[from] = false
	p.waiting--
	if p.waiting == 0 {
		s.snaps = slices.DeleteFunc(s.snaps, func(x *snapshot) bool { return x == sn })
		sn.contribute(s, s.index, false)
	}
}

// receive accounts money arriving from object src to the snapshots that
// record the channel from src.
func (s *scheduler) receive(src *scheduler, amt int64) {
	for _, sn := range s.snaps {
		if p := &sn.parts[s.index]; p.open[src.index] {
			p.channel += amt
		}
	}
}

// cancelSnapshots contributes, as cancelled, the parts this object recorded
// but can no longer complete (it is shutting down).
func (s *scheduler) cancelSnapshots() {
	for _, sn := range s.snaps {
		sn.contribute(s, s.index, true)
	}
	s.snaps = nil
}
