package activeobject

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/service"
)

// scheduler is the pattern's scheduler of one active object: it runs in its
// own locked OS thread, takes the method requests that clients enqueued on
// its ActivationQueue, and dispatches to its servant those whose guard
// holds. Together with its queue and servant it is one active object; the
// Server runs Options.Objects of them, each owning a shard of the accounts.
//
// Dispatch order: the activation list is the requests whose guard failed
// (oldest first) followed by the newly arrived ones in arrival order; the
// scheduler always runs the oldest request whose guard holds. After every
// executed request that changed the servant's state it re-evaluates the
// guards of the deferred requests, oldest first, before it looks at newer
// arrivals; when no request is runnable it sleeps on the queue, bounded by
// the nearest deadline among the deferred requests, so a guarded
// withdrawal times out even if nothing else arrives.
type scheduler struct {
	index   int
	queue   *ActivationQueue
	servant *servant
	svc     *service.Service
	port    *completionPort
	observe func(object int, mr MethodRequest)
	peers   []*scheduler // every active object, this one included (for markers)

	// Owned by the scheduler thread.
	snaps     []*snapshot     // snapshots recorded here, markers still expected
	deferred  []MethodRequest // guard failed; arrival order
	checkedAt uint64          // servant version at which every deferred guard failed
	releases  int             // own-queue slots to return at the next take

	// Statistics: written by the scheduler thread only, read by Stats.
	tid        atomic.Int64
	batches    atomic.Uint64 // takes from the activation queue
	calls      atomic.Uint64 // method requests executed
	deferrals  atomic.Uint64 // guard evaluations that failed
	timeouts   atomic.Uint64 // guarded withdrawals that timed out
	crossShard atomic.Uint64 // transfers this object sent to another
}

// run is the scheduler thread. Like every model thread it exits still
// locked, so the runtime destroys the thread.
func (s *scheduler) run(done func()) {
	defer done()
	runtime.LockOSThread()
	s.tid.Store(int64(models.CurrentThreadID()))
	var buf []MethodRequest
	var slice connio.Slice
	for {
		slice.Refresh()
		mrs, open := s.queue.take(buf, s.releases, s.nearestDeadline())
		s.releases = 0
		if !open {
			s.shutdown(mrs)
			return
		}
		s.batches.Add(1)
		s.dispatch(mrs)
		clear(mrs) // drop the references: the requests are done or deferred
		buf = mrs[:0]
	}
}

// dispatch runs a batch of newly arrived requests (see the type's
// documentation for the order).
func (s *scheduler) dispatch(mrs []MethodRequest) {
	// Time has passed since the last pass: deadlines may have expired.
	s.runDeferred(true)
	for _, mr := range mrs {
		if a, ok := mr.(arriver); ok {
			a.arrive()
		}
		if !mr.Guard() {
			s.deferrals.Add(1)
			s.deferred = append(s.deferred, mr)
			continue
		}
		s.call(mr)
		s.runDeferred(false)
	}
}

// runDeferred executes, oldest first, the deferred requests whose guard now
// holds, re-evaluating from the oldest after each one. Unless forced it does
// nothing when the servant has not changed since every deferred guard last
// failed.
func (s *scheduler) runDeferred(force bool) {
	if len(s.deferred) == 0 || (!force && s.checkedAt == s.servant.version) {
		return
	}
	for {
		i := s.firstRunnable()
		if i < 0 {
			s.checkedAt = s.servant.version
			return
		}
		mr := s.deferred[i]
		s.deferred = slices.Delete(s.deferred, i, i+1)
		s.call(mr)
	}
}

// firstRunnable returns the index of the oldest deferred request whose guard
// holds, or -1.
func (s *scheduler) firstRunnable() int {
	for i, mr := range s.deferred {
		if mr.Guard() {
			return i
		}
		s.deferrals.Add(1)
	}
	return -1
}

func (s *scheduler) call(mr MethodRequest) {
	if s.observe != nil {
		s.observe(s.index, mr)
	}
	mr.Call()
	s.calls.Add(1)
}

// nearestDeadline returns the earliest deadline of the deferred requests,
// or the zero time.
func (s *scheduler) nearestDeadline() time.Time {
	var t time.Time
	for _, mr := range s.deferred {
		if d, ok := mr.(deadliner); ok {
			if dl := d.deadline(); !dl.IsZero() && (t.IsZero() || dl.Before(t)) {
				t = dl
			}
		}
	}
	return t
}

// released returns the slot a finished request held on q: slots of the
// scheduler's own queue are returned in a batch at the next take, slots of
// another object's queue (a transfer's source) at once.
func (s *scheduler) released(q *ActivationQueue) {
	switch q {
	case nil:
	case s.queue:
		s.releases++
	default:
		q.release(1)
	}
}

// shutdown cancels every request still pending: those just taken and those
// deferred.
func (s *scheduler) shutdown(mrs []MethodRequest) {
	for _, mr := range mrs {
		mr.Cancel()
	}
	for _, mr := range s.deferred {
		mr.Cancel()
	}
	s.deferred = nil
	s.cancelSnapshots()
}
