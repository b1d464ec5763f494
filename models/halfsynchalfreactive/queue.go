package halfsynchalfreactive

import (
	"sync/atomic"

	"concbench/internal/futex"
	"concbench/models"
)

// queue is the queueing layer of the pattern: a bounded buffer of request
// objects written as a Monitor Object — one futex.Mutex guarding the ring,
// and two futex.Conds, notEmpty (workers wait on it for a request) and
// notFull (the reactor waits on it when the ring is full). Its methods are
// the monitor's synchronized methods; each holds the lock for a few loads
// and stores.
//
// put and get signal a condition after every change; futex.Cond makes no
// system call when nobody waits on it, so a hand-off to a busy pool costs
// two uncontended lock operations and no futex call. The signal is sent
// after the lock is released, so the woken thread does not immediately
// block on the mutex its waker still holds. Waiters also count themselves
// (getters, putters) for waiting.
//
// For the pooled variant the queue also keeps the free list of request
// objects (free, bounded by freeCap): workers return the objects they are
// done with in the same critical section in which they take the next request,
// and the reactor takes a free object in the same critical section in which it
// puts a request. Pooling therefore adds no lock operation; it removes only
// the allocation (and the garbage collector's share of it). With freeCap 0
// (the default variant) the free list is unused.
type queue struct {
	mu       futex.Mutex
	notEmpty futex.Cond // L is &mu; signalled when a request is put
	notFull  futex.Cond // L is &mu; signalled when a request is taken

	// Guarded by mu.
	ring    []*request // ring[head], … ring[(head+n-1)%len] are queued, oldest first
	head, n int
	closed  bool
	getters int // threads waiting in get
	putters int // threads waiting in put
	free    []*request
	freeCap int
	// prio, with Options.Priority, holds the queued requests in priority
	// order instead of ring (n still counts them); nil otherwise.
	prio *prioHeap

	// Statistics: written only with mu held (so one writer at a time, a
	// plain load and store), read atomically by Stats without the lock.
	highWater atomic.Uint64  // the most requests ever queued at once
	blocked   models.Counter // puts that found the ring full and waited
	handoffs  models.Counter // requests put
}

// newQueue returns an empty queue of the given capacity (≥ 1) whose free
// list holds at most freeCap request objects.
func newQueue(capacity, freeCap int) *queue {
	q := &queue{ring: make([]*request, capacity), freeCap: freeCap}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	if freeCap > 0 {
		q.free = make([]*request, 0, freeCap)
	}
	return q
}

// put appends r, waiting while the queue is full: the back-pressure of the
// pattern, which stops the reactor (and so all reading) until a worker takes
// a request. If wantSpare is set and the free list is not empty it also
// returns a free request object for the caller's next request. It reports
// false, and keeps nothing, if the queue is closed (before or while it
// waited).
func (q *queue) put(r *request, wantSpare bool) (spare *request, ok bool) {
	q.mu.Lock()
	if q.n == len(q.ring) && !q.closed {
		q.blocked.Inc()
		q.putters++
		for q.n == len(q.ring) && !q.closed {
			q.notFull.Wait()
		}
		q.putters--
	}
	if q.closed {
		q.mu.Unlock()
		return nil, false
	}
	if q.prio != nil {
		q.prio.push(r)
	} else {
		q.ring[(q.head+q.n)%len(q.ring)] = r
	}
	q.n++
	q.handoffs.Inc()
	if uint64(q.n) > q.highWater.Load() {
		q.highWater.Store(uint64(q.n))
	}
	if wantSpare {
		if k := len(q.free); k > 0 {
			spare = q.free[k-1]
			q.free[k-1] = nil
			q.free = q.free[:k-1]
		}
	}
	q.mu.Unlock()
	q.notEmpty.Signal()
	return spare, true
}

// get returns the oldest request (the first in priority order with a
// priority heap), waiting while the queue is empty. It first
// puts the objects in done on the free list (as many as fit; the rest are
// left to the garbage collector); the caller must not use them afterwards.
// It reports false if the queue is closed: requests still queued then are
// dropped, never handed out.
func (q *queue) get(done []*request) (*request, bool) {
	q.mu.Lock()
	for _, r := range done {
		if len(q.free) == q.freeCap {
			break
		}
		q.free = append(q.free, r)
	}
	if q.n == 0 && !q.closed {
		q.getters++
		for q.n == 0 && !q.closed {
			q.notEmpty.Wait()
		}
		q.getters--
	}
	if q.closed {
		q.mu.Unlock()
		return nil, false
	}
	var r *request
	if q.prio != nil {
		r = q.prio.pop()
	} else {
		r = q.ring[q.head]
		q.ring[q.head] = nil
		q.head = (q.head + 1) % len(q.ring)
	}
	q.n--
	q.mu.Unlock()
	q.notFull.Signal()
	return r, true
}

// close closes the queue and wakes every thread waiting in put or get; they,
// and every later call, report false. It is idempotent.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
}

// waiting returns the number of threads waiting in get and in put.
func (q *queue) waiting() (getters, putters int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.getters, q.putters
}
