package sharedqueue

import (
	"container/heap"
	"errors"
	"runtime"
	"time"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/connio"
)

// op is an operation in the scheduler's queue (asio's scheduler_operation):
// whichever thread dequeues it performs it. A connection, the listener, a
// strand and a shard's expiry are ops; each is in the queue at most once
// at a time, so the queue links them through their own opLink and never
// allocates.
type op interface {
	perform(th *thread)
	link() *opLink
}

// opLink is an op's place in a queue.
type opLink struct{ next op }

func (l *opLink) link() *opLink { return l }

// opQueue is a FIFO of ops (asio's op_queue).
type opQueue struct {
	head, tail op
	n          int
}

func (q *opQueue) empty() bool { return q.head == nil }

func (q *opQueue) push(o op) {
	o.link().next = nil
	if q.tail == nil {
		q.head = o
	} else {
		q.tail.link().next = o
	}
	q.tail = o
	q.n++
}

func (q *opQueue) pop() op {
	o := q.head
	if o == nil {
		return nil
	}
	q.head = o.link().next
	if q.head == nil {
		q.tail = nil
	}
	o.link().next = nil
	q.n--
	return o
}

// pushAll moves every op of p to the end of q.
func (q *opQueue) pushAll(p *opQueue) {
	if p.head == nil {
		return
	}
	if q.tail == nil {
		q.head = p.head
	} else {
		q.tail.link().next = p.head
	}
	q.tail = p.tail
	q.n += p.n
	*p = opQueue{}
}

// taskOp is the reactor token (asio's task_operation_): the thread that
// dequeues it runs the reactor. It is never performed.
type taskOp struct{ opLink }

func (*taskOp) perform(*thread) { panic("sharedqueue: the reactor token is not performed") }

// scheduler is the io_context's scheduler: one operation queue shared by
// every pool thread, the reactor token in it, and the condition on which
// idle threads wait. mu guards everything but set and intr, which are
// safe for concurrent use; the counters are written under mu.
type scheduler struct {
	mu              futex.Mutex
	wakeup          futex.Cond // asio's wakeup_event_: idle threads wait on it; L is &mu
	queue           opQueue    // asio's op_queue_
	task            taskOp     // asio's task_operation_
	taskInterrupted bool       // asio's task_interrupted_: the reactor will not block, or was woken
	idle            int        // threads waiting on wakeup
	stopped         bool
	timers          timerHeap // deadlines of guarded withdrawals

	set  *handleset.Set
	intr *interrupter

	polls      models.Counter // reactor turns
	pollEvents models.Counter // ready handles the reactor queued
	wakeups    models.Counter // idle threads signalled
	interrupts models.Counter // reactor waits interrupted for work no idle thread could take
	highWater  models.Counter // the longest the queue has been
}

// post puts o at the end of the queue and wakes a thread for it (asio's
// post_immediate_completion and post_deferred_completion).
func (sc *scheduler) post(o op) {
	sc.mu.Lock()
	sc.push(o)
	sc.wakeOneAndUnlock()
}

// push appends o; mu is held.
func (sc *scheduler) push(o op) {
	sc.queue.push(o)
	if n := uint64(sc.queue.n); n > sc.highWater.Load() {
		sc.highWater.Add(n - sc.highWater.Load())
	}
}

// pushAll appends every op of q, queued without a wake-up: the thread
// that queues them goes on to dequeue; mu is held.
func (sc *scheduler) pushAll(q *opQueue) {
	sc.queue.pushAll(q)
	if n := uint64(sc.queue.n); n > sc.highWater.Load() {
		sc.highWater.Add(n - sc.highWater.Load())
	}
}

// wakeOneAndUnlock is asio's wake_one_thread_and_unlock, called with mu
// held after work was queued: it signals one idle thread if there is one,
// or else interrupts the reactor if it is blocked, so that the thread
// holding the token comes back for the work; then it releases mu.
func (sc *scheduler) wakeOneAndUnlock() {
	if sc.idle > 0 {
		sc.wakeups.Inc()
		sc.mu.Unlock()
		sc.wakeup.Signal()
		return
	}
	sc.interruptAndUnlock()
}

// interruptAndUnlock interrupts the reactor if it is blocked (asio's
// task_->interrupt()), then releases mu. The interrupt is made with mu
// held, as asio's wake_one_thread_and_unlock and post paths make it
// before lock.unlock(): where the reactor's thread shares this thread's
// CPU, the woken reactor may preempt this thread while it holds mu and
// then sleep on mu until it is released (two more switches, as in asio:
// docs/findings.md, "Real asio beside its model").
func (sc *scheduler) interruptAndUnlock() {
	if !sc.taskInterrupted {
		sc.taskInterrupted = true
		sc.interrupts.Inc()
		sc.intr.interrupt()
	}
	sc.mu.Unlock()
}

// addTimer schedules sh's expiry at at, interrupting a blocked reactor if
// the deadline is now the nearest, so that it waits no longer than that.
func (sc *scheduler) addTimer(at time.Time, sh *shard) {
	sc.mu.Lock()
	nearest := len(sc.timers) == 0 || at.Before(sc.timers[0].at)
	heap.Push(&sc.timers, timer{at: at, sh: sh})
	if nearest {
		sc.interruptAndUnlock()
		return
	}
	sc.mu.Unlock()
}

// expireTimers queues, onto q, the expiry of every shard with a deadline
// due; mu is held.
func (sc *scheduler) expireTimers(q *opQueue) {
	now := time.Now()
	for len(sc.timers) > 0 && !sc.timers[0].at.After(now) {
		t := heap.Pop(&sc.timers).(timer)
		if !t.sh.expiryQueued {
			t.sh.expiryQueued = true
			q.push(&t.sh.expiry)
		}
	}
}

// timer is a shard's deadline: when a guarded withdrawal waiting in it
// times out.
type timer struct {
	at time.Time
	sh *shard
}

// timerHeap is a min-heap of timers by deadline (container/heap).
type timerHeap []timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// thread is one OS thread calling the io_context's run.
type thread struct {
	_ [64]byte

	s  *Server
	sh *models.Shard
	w  *handleset.Waiter // used while the thread holds the token
	// private is asio's thread_info private_op_queue: what the thread's
	// reactor turn found, or the continuations its op queued (proceed);
	// only the thread touches it, and it is empty between ops.
	private opQueue
	slice   connio.Slice // the thread's time slice as the Go runtime sees it

	_ [64]byte
}

// run is a pool thread: asio's scheduler::run, a loop of do_run_one. It
// exits, still locked so that the runtime destroys its OS thread, when
// the scheduler stops.
func (th *thread) run(started chan<- struct{}) {
	defer th.s.wg.Done()
	runtime.LockOSThread()
	th.sh.SetTID(models.CurrentThreadID())
	started <- struct{}{}
	sc := &th.s.sched
	sc.mu.Lock()
	for !sc.stopped {
		o := sc.queue.pop()
		switch {
		case o == nil:
			sc.idle++
			sc.wakeup.Wait()
			sc.idle--
		case o == op(&sc.task):
			th.react(!sc.queue.empty())
		default:
			if !sc.queue.empty() {
				sc.wakeOneAndUnlock() // more work: another thread takes it
			} else {
				sc.mu.Unlock()
			}
			th.slice.Refresh()
			o.perform(th)
			sc.mu.Lock()
			sc.pushAll(&th.private) // asio's work_cleanup: the op's continuations, no wake-up
		}
	}
	sc.mu.Unlock()
}

// proceed queues o as a continuation of the op the thread performs
// (asio's post_immediate_completion with is_continuation, from a thread
// inside run): onto the thread's private queue, moved to the end of the
// shared queue when the op returns, with no thread woken, since this
// thread dequeues next.
func (th *thread) proceed(o op) { th.private.push(o) }

// react is the reactor's turn of the thread that dequeued the token, with
// mu held on entry and on return. The reactor does no I/O: it waits on the
// handle set — without blocking if more is queued — and queues the op of
// every ready handle (asio's descriptor_state), then the due expiries,
// then the token again at the end, so that everything it found runs
// before the next turn. The thread goes on with the first of them itself.
func (th *thread) react(more bool) {
	s, sc := th.s, &th.s.sched
	sc.taskInterrupted = more
	timeout := time.Duration(0)
	if !more {
		timeout = th.s.waitTimeout()
	}
	sc.polls.Inc()
	sc.mu.Unlock()
	if more {
		sc.wakeup.Signal() // asio's unlock_and_signal_one
	}
	th.sh.AddPromotion()
	th.slice.Refresh()
	evs, err := th.w.Wait(timeout)
	if err != nil {
		if !errors.Is(err, handleset.ErrClosed) {
			s.fail(err)
		}
		sc.mu.Lock()
		sc.push(&sc.task)
		return
	}
	for _, ev := range evs {
		if o, ok := ev.Handler.(op); ok {
			th.private.push(o)
		} else {
			sc.intr.reset()
		}
	}
	if s.pause.End() {
		s.rearmListener()
	}
	sc.mu.Lock()
	sc.pollEvents.Add(uint64(th.private.n))
	sc.expireTimers(&th.private)
	sc.taskInterrupted = true
	sc.pushAll(&th.private)
	sc.push(&sc.task)
}

// interrupter wakes the reactor out of its wait (asio's eventfd
// interrupter): an eventfd in the handle set, registered level-triggered
// since only the token's holder waits on the set.
type interrupter struct{ w *handleset.Wakeup }

// HandleEvent is never called: the reactor recognises the interrupter and
// resets it.
func (*interrupter) HandleEvent(int, handleset.Events) {}

func (i *interrupter) interrupt() { _ = i.w.Signal() } // cannot fail on a valid eventfd
func (i *interrupter) reset()     { _, _ = i.w.Drain() }
