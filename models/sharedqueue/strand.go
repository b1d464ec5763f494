package sharedqueue

import (
	"sync/atomic"

	"concbench/internal/futex"
	"concbench/models"
)

// checkStrands turns on the owner check of the shards' servants. Only this
// package's tests set it (see strand_check_test.go), so a production build
// pays one predictable branch per handler.
var checkStrands = false

// strand serializes the handlers of one shard without a thread of its
// own: asio's strand_service::strand_impl, with its mutex, locked flag,
// waiting queue and ready queue. The thread that finds the strand
// unlocked takes it (locked) and runs handlers until none is left; a
// handler that arrives meanwhile waits in the waiting queue, and the
// strand, with those, is queued on the scheduler to run on whichever
// thread dequeues it. So at most one thread is in the strand at a time,
// and its handlers run in the order they arrived.
//
// Invariant: unlocked implies both queues are empty, so a handler run at
// once (dispatch) never overtakes one that waits; the channel from one
// strand to another is FIFO, which the snapshot relies on.
type strand struct {
	opLink // the strand as an op in the scheduler's queue

	mu      futex.Mutex
	locked  bool      // a thread is in the strand, or it is queued to run; guarded by mu
	waiting callQueue // handlers that arrived while locked; guarded by mu
	ready   callQueue // the handlers of the run in progress; the strand's holder's

	inline models.Counter // handlers run at once by their dispatcher; written under mu
	queued models.Counter // handlers that waited for the strand; written under mu
	runs   models.Counter // runs of the strand from the scheduler's queue; in the strand
}

// callQueue is a FIFO of calls, linked through call.next.
type callQueue struct{ head, tail *call }

func (q *callQueue) empty() bool { return q.head == nil }

func (q *callQueue) push(c *call) {
	c.next = nil
	if q.tail == nil {
		q.head = c
	} else {
		q.tail.next = c
	}
	q.tail = c
}

func (q *callQueue) pop() *call {
	c := q.head
	if c != nil {
		q.head = c.next
		if q.head == nil {
			q.tail = nil
		}
		c.next = nil
	}
	return c
}

// pushAll moves every call of p to the end of q.
func (q *callQueue) pushAll(p *callQueue) {
	if p.head == nil {
		return
	}
	if q.tail == nil {
		q.head = p.head
	} else {
		q.tail.next = p.head
	}
	q.tail = p.tail
	*p = callQueue{}
}

// dispatch runs c in sh's strand: at once on the calling thread if the
// strand is free (asio's strand dispatch), else after the handlers before
// it, on the thread that holds the strand or dequeues it.
func (sh *shard) dispatch(c *call) {
	if sh.s.hooks.unserialized {
		sh.execute(c)
		return
	}
	if sh.take(c, false) {
		sh.execute(c)
		if sh.exitStrand() {
			sh.s.sched.post(sh) // asio's on_dispatch_exit posts, not as a continuation
		}
	}
}

// post runs c in sh's strand later, never on the calling thread (asio's
// strand post): queued behind the strand's handlers, or, if the strand is
// free, as a run of the strand queued on the scheduler.
func (sh *shard) post(c *call) {
	if sh.take(c, true) {
		sh.s.sched.post(sh)
	}
}

// take reports whether the caller takes the strand, which is free, or
// queues c behind the holder's handlers. A caller that takes it holds it
// until exitStrand, or the run it queues, releases it; with later set, c
// is then the first handler of that run instead of the caller's to run.
func (st *strand) take(c *call, later bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.locked {
		st.waiting.push(c)
		st.queued.Inc()
		return false
	}
	st.locked = true
	if later {
		st.ready.push(c)
		st.queued.Inc()
	} else {
		st.inline.Inc()
	}
	return true
}

// perform runs the strand from the scheduler's queue (asio's
// strand_service::do_complete): every ready handler, then the exit, which
// re-queues the strand as a continuation of this op if handlers arrived
// meanwhile (on_do_complete_exit: post_immediate_completion(impl, true)):
// through the thread's private queue, waking no thread.
func (sh *shard) perform(th *thread) {
	st := &sh.strand
	st.runs.Inc()
	for c := st.ready.pop(); c != nil; c = st.ready.pop() {
		sh.execute(c)
	}
	if sh.exitStrand() {
		sh.s.continuations.Add(1)
		th.proceed(sh)
	}
}

// exitStrand leaves the strand (asio's on_dispatch_exit and
// on_do_complete_exit): the handlers that arrived meanwhile become ready
// and it reports true if there are any, the strand staying locked for the
// caller to queue on the scheduler; with none, the strand is unlocked.
func (sh *shard) exitStrand() bool {
	st := &sh.strand
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ready.pushAll(&st.waiting)
	st.locked = !st.ready.empty()
	return st.locked
}

// ownerCheck counts the handlers inside one shard's servant at once; the
// strand promises it is never more than one.
type ownerCheck struct {
	acting     atomic.Int32
	violations atomic.Uint64 // handlers that entered while another was inside
}

func (o *ownerCheck) enter() {
	if o.acting.Add(1) > 1 {
		o.violations.Add(1)
	}
}

func (o *ownerCheck) leave() { o.acting.Add(-1) }
