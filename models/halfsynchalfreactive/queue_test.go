package halfsynchalfreactive

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

func seqs(rs ...*request) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.seq
	}
	return out
}

func TestQueueFIFO(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		n        int
		batch    int // puts before each run of gets
	}{
		{name: "one-at-a-time", capacity: 4, n: 50, batch: 1},
		{name: "fill-and-drain", capacity: 8, n: 64, batch: 8},
		{name: "wrap-around", capacity: 5, n: 53, batch: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(tc.capacity, 0)
			var got []uint64
			next := uint64(0)
			for next < uint64(tc.n) {
				for k := 0; k < tc.batch && next < uint64(tc.n); k++ {
					if _, ok := q.put(&request{seq: next}, false); !ok {
						t.Fatal("put on an open queue failed")
					}
					next++
				}
				for q.n > 0 {
					r, ok := q.get(nil)
					if !ok {
						t.Fatal("get on an open queue failed")
					}
					got = append(got, r.seq)
				}
			}
			for i, s := range got {
				if s != uint64(i) {
					t.Fatalf("got sequence %v, want 0..%d in order", got, tc.n-1)
				}
			}
			if len(got) != tc.n {
				t.Fatalf("got %d requests, put %d", len(got), tc.n)
			}
		})
	}
}

// TestQueueBounded shows that put waits while the queue is full, by the
// blocked count and the registered waiter, not by time.
func TestQueueBounded(t *testing.T) {
	q := newQueue(2, 0)
	for i := range 2 {
		q.put(&request{seq: uint64(i)}, false)
	}
	if b := q.blocked.Load(); b != 0 {
		t.Fatalf("blocked = %d before the queue was full", b)
	}
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_, ok := q.put(&request{seq: 2}, false)
		done <- ok
	}()
	modeltest.WaitFor(t, "the third put to wait", func() bool {
		_, putters := q.waiting()
		return putters == 1 && q.blocked.Load() == 1
	})
	q.mu.Lock()
	n := q.n
	q.mu.Unlock()
	if n != 2 {
		t.Fatalf("a full queue of capacity 2 holds %d requests", n)
	}
	r, _ := q.get(nil)
	if !<-done {
		t.Fatal("the waiting put failed")
	}
	r2, _ := q.get(nil)
	r3, _ := q.get(nil)
	if got := seqs(r, r2, r3); got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("order after a blocked put: %v", got)
	}
	if h := q.handoffs.Load(); h != 3 {
		t.Fatalf("handoffs = %d, want 3", h)
	}
}

// TestQueueCloseWakesAll closes queues with threads waiting in get (empty
// queue) and in put (full queue): every one returns false.
func TestQueueCloseWakesAll(t *testing.T) {
	const getters, putters = 3, 2
	empty := newQueue(4, 0)
	full := newQueue(1, 0)
	full.put(&request{}, false)
	results := make(chan bool, getters+putters)
	var wg sync.WaitGroup
	for range getters {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			_, ok := empty.get(nil)
			results <- ok
		})
	}
	for range putters {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			_, ok := full.put(&request{}, false)
			results <- ok
		})
	}
	modeltest.WaitFor(t, "every thread to wait", func() bool {
		g, _ := empty.waiting()
		_, p := full.waiting()
		return g == getters && p == putters
	})
	empty.close()
	full.close()
	modeltest.WaitFor(t, "every waiter to return", func() bool { return len(results) == getters+putters })
	wg.Wait()
	close(results)
	for ok := range results {
		if ok {
			t.Fatal("a waiter returned true from a closed queue")
		}
	}
	if _, ok := full.get(nil); ok {
		t.Fatal("get on a closed queue handed out a queued request")
	}
	if _, ok := empty.put(&request{}, false); ok {
		t.Fatal("put on a closed queue succeeded")
	}
}

func TestQueueHighWater(t *testing.T) {
	q := newQueue(8, 0)
	steps := []struct {
		puts, gets int
		wantHigh   uint64
	}{
		{puts: 3, gets: 2, wantHigh: 3},
		{puts: 1, gets: 0, wantHigh: 3},
		{puts: 4, gets: 6, wantHigh: 6},
		{puts: 2, gets: 2, wantHigh: 6},
	}
	for i, st := range steps {
		for range st.puts {
			q.put(&request{}, false)
		}
		for range st.gets {
			q.get(nil)
		}
		if h := q.highWater.Load(); h != st.wantHigh {
			t.Fatalf("step %d: high water %d, want %d", i, h, st.wantHigh)
		}
	}
}

// TestQueueFreeList checks the pooled variant's free list: objects returned
// with get come back from put, and the list never exceeds its bound.
func TestQueueFreeList(t *testing.T) {
	q := newQueue(4, 2)
	a, b, c := &request{}, &request{}, &request{}
	q.put(&request{}, false)
	if _, ok := q.get([]*request{a, b, c}); !ok {
		t.Fatal("get failed")
	}
	if len(q.free) != 2 {
		t.Fatalf("free list holds %d objects, bound 2", len(q.free))
	}
	spare, _ := q.put(&request{}, true)
	if spare != b {
		t.Fatalf("put returned %p, want the last object freed (%p)", spare, b)
	}
	if spare, _ := q.put(&request{}, false); spare != nil {
		t.Fatal("put returned a spare nobody asked for")
	}
}

// handoffPath builds the reactor and worker halves of a hand-off over one
// queue, without a network: the same methods the server's threads run.
func handoffPath(pooled bool, capacity int) (*reactor, *worker, *conn) {
	s := &Server{opts: Options{Pooled: pooled, QueueSize: capacity}.WithDefaults()}
	freeCap := 0
	if pooled {
		freeCap = capacity + models.MaxInFlight
	}
	s.q = newQueue(capacity, freeCap)
	rc := &reactor{s: s, thread: thread{sh: s.counters.NewThreadShard("reactor")}}
	w := &worker{s: s, thread: thread{sh: s.counters.NewThreadShard("worker")}}
	return rc, w, &conn{srv: s}
}

// handoffRequest is a small decoded request with a payload, as the reactor
// would hand off.
func handoffRequest() *wire.Request {
	return &wire.Request{ID: 7, Op: wire.OpWork, Size: 64, Payload: []byte("sixteen bytes ok")}
}

// TestHandoffAllocs measures the allocations of one hand-off (reactor:
// request object and payload copy, put; worker: get, release): at least one
// per request by default, none in the pooled variant's steady state.
func TestHandoffAllocs(t *testing.T) {
	tests := []struct {
		variant string
		pooled  bool
		check   func(allocs float64) bool
		want    string
	}{
		{variant: "default", pooled: false, check: func(a float64) bool { return a >= 1 }, want: ">= 1"},
		{variant: "pooled", pooled: true, check: func(a float64) bool { return a == 0 }, want: "0"},
	}
	for _, tc := range tests {
		t.Run("variant="+tc.variant, func(t *testing.T) {
			rc, w, c := handoffPath(tc.pooled, 16)
			req := handoffRequest()
			step := func() {
				rc.handoff(c, req)
				r, _ := w.take()
				w.s.release(&w.thread, r)
			}
			for range 100 { // reach the steady state: the pool is primed
				step()
			}
			allocs := testing.AllocsPerRun(1000, step)
			if !tc.check(allocs) {
				t.Fatalf("%v allocations per hand-off, want %s", allocs, tc.want)
			}
			t.Logf("%v allocations per hand-off", allocs)
		})
	}
}

// ctxSwitches returns the process's voluntary and involuntary context
// switches so far.
func ctxSwitches(tb testing.TB) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Nvcsw + ru.Nivcsw
}

// BenchmarkHandoff measures passing one request from the reactor to a
// worker, between two locked OS threads, through the real hand-off methods:
//
//   - load=idle: the reactor hands off one request and waits (on a futex
//     Parker) until the worker has taken and released it, so the worker is
//     asleep on notEmpty at every hand-off — the light-load case, where each
//     request pays a wake-up. An op includes the worker's wake-up of the
//     reactor, so it is a round trip.
//   - load=busy: the reactor hands off requests back to back; the worker
//     sleeps only when it catches up with the queue.
//
// ctxsw/op is from getrusage over the whole process.
func BenchmarkHandoff(b *testing.B) {
	for _, v := range []struct {
		name   string
		pooled bool
	}{{name: "default"}, {name: "pooled", pooled: true}} {
		for _, load := range []string{"idle", "busy"} {
			b.Run(fmt.Sprintf("variant=%s/load=%s", v.name, load), func(b *testing.B) {
				benchHandoff(b, v.pooled, load == "idle")
			})
		}
	}
}

func benchHandoff(b *testing.B, pooled, idle bool) {
	rc, w, c := handoffPath(pooled, DefaultQueueSize)
	req := handoffRequest()
	back := new(futex.Parker)
	n := b.N
	var wg sync.WaitGroup
	wg.Go(func() { // the worker
		runtime.LockOSThread()
		for range n {
			r, ok := w.take()
			if !ok {
				return
			}
			w.s.release(&w.thread, r)
			if idle {
				back.Unpark()
			}
		}
	})
	b.ReportAllocs()
	sw := ctxSwitches(b)
	b.ResetTimer()
	done := make(chan struct{})
	go func() { // the reactor
		defer close(done)
		runtime.LockOSThread()
		for range n {
			rc.handoff(c, req)
			if idle {
				back.Park()
			}
		}
	}()
	<-done
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(ctxSwitches(b)-sw)/float64(n), "ctxsw/op")
	rc.s.q.close()
}

// TestQueuePriority checks the priority queue's order: highest priority
// first, and among equal priorities the order of arrival, across refills
// that interleave puts and gets.
func TestQueuePriority(t *testing.T) {
	tests := []struct {
		name  string
		prios []uint8 // put in this order (seq = index)
		gets  int     // gets after all puts but the last; then drain
		want  []uint64
	}{
		{name: "distinct", prios: []uint8{1, 5, 3, 200, 0}, gets: 0, want: []uint64{3, 1, 2, 0, 4}},
		{name: "ties keep arrival order", prios: []uint8{7, 7, 9, 7, 9, 0, 7}, gets: 0, want: []uint64{2, 4, 0, 1, 3, 6, 5}},
		{name: "late high overtakes", prios: []uint8{0, 0, 0, 0, 255}, gets: 1, want: []uint64{0, 4, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(len(tc.prios), 0)
			q.prio = newPrioHeap(len(tc.prios))
			put := func(i int) {
				if _, ok := q.put(&request{seq: uint64(i), req: wire.Request{Priority: tc.prios[i]}}, false); !ok {
					t.Fatal("put on an open queue failed")
				}
			}
			var got []uint64
			get := func() {
				r, ok := q.get(nil)
				if !ok {
					t.Fatal("get on an open queue failed")
				}
				got = append(got, r.seq)
			}
			last := len(tc.prios) - 1
			for i := range last {
				put(i)
			}
			for range tc.gets {
				get()
			}
			put(last)
			for q.n > 0 {
				get()
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}
