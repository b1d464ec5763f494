package activeobject

import (
	"fmt"
	"time"

	"concbench/internal/futex"
)

// MaxQueueCapacity is the largest ActivationQueue capacity accepted.
const MaxQueueCapacity = 1 << 20

// ActivationQueue is the pattern's activation queue: a bounded buffer of
// pending method requests, shared by the client threads that enqueue them
// through the Proxy and the one scheduler thread that dequeues them. It is a
// monitor object on a futex.Mutex with two futex.Conds (notEmpty for the
// scheduler, notFull for enqueuers), so that locked OS threads sleep in the
// kernel with one context switch per hand-off.
//
// The bound: a method request enqueued by a client is charged one slot of
// capacity from Enqueue until its method has finished — while it waits in
// the queue, while its guard keeps it in the scheduler's activation list,
// and, for a cross-object transfer, until the destination object has
// credited the money. Enqueue blocks while every slot is charged. Method
// requests that one scheduler sends another (the second half of a transfer,
// a refund, a Total's markers) are continuations, not charged again: they
// travel on the slot of the request they continue, so they never wait for
// capacity and two schedulers can never block on each other's full queues.
//
// Note: Enqueue blocks rather than failing with an overload status. Its
// callers are the I/O threads (and direct Proxy clients); blocking one is
// back-pressure — it stops reading its connections until the scheduler
// catches up, as the Half-Sync/Half-Reactive reactor does on its full queue
// — and no response ever reports an overload that a model without a queue
// would not. Times an enqueue blocked are counted (enqueue_blocked).
type ActivationQueue struct {
	mu       futex.Mutex
	notEmpty futex.Cond // the scheduler waits here for method requests
	notFull  futex.Cond // enqueuers wait here for a free slot

	capacity int
	items    []MethodRequest // arrived, not yet taken by the scheduler
	charged  int             // slots charged: pending method requests
	closed   bool

	schedWaiting bool // the scheduler sleeps on notEmpty: wake it
	enqWaiting   int  // enqueuers sleeping on notFull

	// Statistics, guarded by mu.
	highWater int    // the largest charged
	handoffs  uint64 // method requests put on the queue
	blocked   uint64 // Enqueue calls that had to wait for a slot
}

// NewActivationQueue returns an empty queue of capacity slots. It panics if
// capacity is outside 1..MaxQueueCapacity (a programming mistake; Start
// validates Options.QueueCapacity).
func NewActivationQueue(capacity int) *ActivationQueue {
	if capacity < 1 || capacity > MaxQueueCapacity {
		panic(fmt.Sprintf("activeobject: queue capacity %d out of range 1..%d", capacity, MaxQueueCapacity))
	}
	q := &ActivationQueue{capacity: capacity}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q
}

// Enqueue inserts mr, charging it one slot, and wakes the scheduler if it
// sleeps. It blocks while all slots are charged. It runs in the client's
// thread and returns ErrClosed, without enqueuing, once the queue is closed.
func (q *ActivationQueue) Enqueue(mr MethodRequest) error {
	q.mu.Lock()
	if q.charged >= q.capacity && !q.closed {
		q.blocked++
		for q.charged >= q.capacity && !q.closed {
			q.enqWaiting++
			q.notFull.Wait()
			q.enqWaiting--
		}
	}
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.charged++
	q.highWater = max(q.highWater, q.charged)
	q.push(mr)
	return nil
}

// enqueueContinuation inserts mr without charging a slot and without ever
// blocking: mr continues a method request that holds a slot on some queue
// (see the type's documentation). It returns ErrClosed once the queue is
// closed.
func (q *ActivationQueue) enqueueContinuation(mr MethodRequest) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.push(mr)
	return nil
}

// push appends mr and releases q.mu, then wakes the scheduler if it sleeps.
// The signal comes after the unlock so that the scheduler does not wake into
// a held lock; it is not lost, because the sleeping scheduler read the
// condition's sequence before it released the lock.
func (q *ActivationQueue) push(mr MethodRequest) {
	q.items = append(q.items, mr)
	q.handoffs++
	wake := q.schedWaiting
	q.schedWaiting = false
	q.mu.Unlock()
	if wake {
		q.notEmpty.Signal()
	}
}

// release returns n slots (of method requests that finished) and wakes the
// enqueuers waiting for one (futex.Cond makes no system call if none
// waits).
func (q *ActivationQueue) release(n int) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	q.charged -= n
	q.mu.Unlock()
	q.notFull.Broadcast()
}

// take is the scheduler's dequeue: it first returns released slots (the
// scheduler batches the releases of its own queue), then waits until method
// requests have arrived, the deadline (if not zero) has passed, or the queue
// is closed, and returns every arrived request in arrival order, swapping
// the queue's buffer with buf (which must be empty). open is false once the
// queue is closed; the requests returned then must be cancelled.
func (q *ActivationQueue) take(buf []MethodRequest, released int, deadline time.Time) (mrs []MethodRequest, open bool) {
	q.mu.Lock()
	q.charged -= released
	wakeEnq := released > 0 && q.enqWaiting > 0
	for len(q.items) == 0 && !q.closed {
		if wakeEnq {
			// Do not sleep holding back enqueuers that the release unblocked.
			q.mu.Unlock()
			q.notFull.Broadcast()
			wakeEnq = false
			q.mu.Lock()
			continue
		}
		q.schedWaiting = true
		if deadline.IsZero() {
			q.notEmpty.Wait()
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		q.notEmpty.WaitTimeout(left)
	}
	q.schedWaiting = false
	mrs, q.items = q.items, buf
	open = !q.closed
	q.mu.Unlock()
	if wakeEnq {
		q.notFull.Broadcast()
	}
	return mrs, open
}

// Close makes every blocked and later Enqueue return ErrClosed and wakes the
// scheduler, whose next take reports the queue closed.
func (q *ActivationQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.notFull.Broadcast()
	q.notEmpty.Broadcast()
}

// Len returns the number of charged slots: method requests enqueued by
// clients and not yet finished.
func (q *ActivationQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.charged
}

// queueStats is a snapshot of a queue's statistics.
type queueStats struct {
	highWater         int
	handoffs, blocked uint64
	enqWaiting        int
}

func (q *ActivationQueue) stats() queueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return queueStats{highWater: q.highWater, handoffs: q.handoffs, blocked: q.blocked, enqWaiting: q.enqWaiting}
}
