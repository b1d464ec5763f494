package futex

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParkerPermitBeforePark(t *testing.T) {
	p := new(Parker)
	p.Unpark()
	p.Unpark() // permits do not accumulate
	p.Park()   // consumes the one permit without blocking
	if p.ParkTimeout(time.Millisecond) {
		t.Fatal("a second Park found a permit; permits must not accumulate")
	}
}

// TestParkerWakesParkedThread unparks a thread only once it is asleep in
// the kernel (its state in /proc), so that the test fails if Unpark does
// not wake a parked thread, rather than passing on a permit that Park
// found before it ever slept.
func TestParkerWakesParkedThread(t *testing.T) {
	p := new(Parker)
	tid := make(chan int, 1) // a send that never blocks: the next sleep is Park's
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		p.Park()
		close(done)
	}()
	waitAsleep(t, <-tid, &p.w)
	p.Unpark()
	<-done
}

// waitAsleep waits until thread tid of this process sleeps in a futex
// wait on word (its current system call in /proc/self/task/<tid>/syscall:
// the call's number and its first argument, the word's address), yielding
// between looks; it fails the test if the thread has not slept there
// within 30 s. The Go runtime's own sleeps are futex waits on other words.
func waitAsleep(t *testing.T, tid int, word *atomic.Uint32) {
	t.Helper()
	path := "/proc/self/task/" + strconv.Itoa(tid) + "/syscall"
	want := fmt.Sprintf("%d 0x%x ", unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("thread %d: %v", tid, err)
		}
		if bytes.HasPrefix(b, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d never slept on the word (%s): in %s", tid, want, b)
		}
		runtime.Gosched()
	}
}

// TestMutexExcludes runs locked threads incrementing a counter that only the
// mutex protects; the race detector and the final count check exclusion.
func TestMutexExcludes(t *testing.T) {
	const threads, rounds = 4, 20000
	var m Mutex
	n := 0
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range rounds {
				m.Lock()
				n++
				m.Unlock()
			}
		})
	}
	wg.Wait()
	if n != threads*rounds {
		t.Fatalf("count %d, want %d", n, threads*rounds)
	}
	if !m.TryLock() {
		t.Fatal("mutex not free at the end")
	}
	m.Unlock()
}

func TestUnlockOfUnlockedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var m Mutex
	m.Unlock()
}

// TestCondMonitor is a bounded buffer between locked threads: producers wait
// while full, consumers while empty; every item arrives exactly once.
func TestCondMonitor(t *testing.T) {
	const producers, items, capacity = 3, 2000, 4
	var mu Mutex
	notFull := Cond{L: &mu}
	notEmpty := Cond{L: &mu}
	var buf []int
	seen := make([]int, producers*items)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for i := range items {
				mu.Lock()
				for len(buf) == capacity {
					notFull.Wait()
				}
				buf = append(buf, p*items+i)
				notEmpty.Signal()
				mu.Unlock()
			}
		})
	}
	var cw sync.WaitGroup
	for range 2 {
		cw.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for {
				mu.Lock()
				for len(buf) == 0 {
					notEmpty.Wait()
				}
				v := buf[0]
				buf = buf[1:]
				notFull.Broadcast()
				mu.Unlock()
				if v < 0 {
					return
				}
				seen[v]++
			}
		})
	}
	wg.Wait()
	for range 2 { // one stop marker per consumer
		mu.Lock()
		for len(buf) == capacity {
			notFull.Wait()
		}
		buf = append(buf, -1)
		notEmpty.Signal()
		mu.Unlock()
	}
	cw.Wait()
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("item %d delivered %d times", v, n)
		}
	}
}

// TestWordWakesSleepers wakes sleepers that are asleep in the kernel
// (waitAsleep), so that the test fails if Wake misses one, rather than
// passing because every sleeper saw the word change before it slept.
func TestWordWakesSleepers(t *testing.T) {
	const n = 3
	var w Word
	var wg sync.WaitGroup
	tids := make(chan int, n)
	for range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids <- unix.Gettid()
			for w.Load() == 0 {
				w.Wait(0)
			}
		})
	}
	for range n {
		waitAsleep(t, <-tids, &w.v)
	}
	w.Add(1)
	w.Wake(n)
	wg.Wait()
}

func BenchmarkMutexUncontended(b *testing.B) {
	b.ReportAllocs()
	var m Mutex
	for b.Loop() {
		m.Lock()
		//lint:ignore SA2001 the benchmark measures the lock itself
		m.Unlock()
	}
}

// TestCondSignalsEachWaiterOnce: a waiter that has a signal on its way is
// not signalled again (no second bump, no second FUTEX_WAKE), as glibc's
// condition does; a second waiter gets its own; Broadcast covers the rest,
// and taking the signals back as the waiters return leaves none over.
func TestCondSignalsEachWaiterOnce(t *testing.T) {
	var mu Mutex
	c := Cond{L: &mu}
	c.state.Store(condWaiter) // one thread counted in wait, not yet returned
	c.Signal()
	c.Signal()
	if got := c.seq.Load(); got != 1 {
		t.Fatalf("two Signals to one waiter bumped the sequence %d times, want 1", got)
	}
	c.state.Add(2 * condWaiter) // two more
	c.Signal()
	if got := c.seq.Load(); got != 2 {
		t.Fatalf("a Signal with a waiter left unsignalled: sequence %d, want 2", got)
	}
	c.Broadcast()
	c.Broadcast()
	if got, want := c.state.Load(), uint64(3*condWaiter|3); got != want {
		t.Fatalf("after Broadcast: state %#x, want %#x", got, want)
	}
	if got := c.seq.Load(); got != 3 {
		t.Fatalf("two Broadcasts: sequence %d, want 3", got)
	}
	if c.Signal(); c.seq.Load() != 3 {
		t.Fatal("Signal after Broadcast with no new waiter bumped the sequence")
	}
}

// TestCondLateSignals is a hand-off where every Signal comes late: the
// producers release the lock and pause before they signal, so the one
// waiter often takes the item first, finds the queue empty and counts
// itself just as the late Signal lands — the case a signals-per-waiter
// count can get wrong (counting before reading the sequence lets that
// Signal count the waiter as signalled while its sleep has not begun, and
// with one waiter nothing ever wakes it; with the window between the two
// widened by a spin, this test fails every run). With one waiter, no other
// thread takes such a signal back: the waiter must take its stop flag, and
// the test fails after a minute without progress instead of hanging.
func TestCondLateSignals(t *testing.T) {
	const producers, items = 2, 20000
	var sink atomic.Int64
	spin := func(n int) {
		for range n {
			sink.Add(1)
		}
	}
	var mu Mutex
	notEmpty := Cond{L: &mu}
	var queued int
	var stop bool
	var progress atomic.Int64
	var waiter sync.WaitGroup
	waiter.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for {
			mu.Lock()
			for queued == 0 && !stop {
				notEmpty.Wait()
			}
			if queued == 0 {
				mu.Unlock()
				return
			}
			queued--
			mu.Unlock()
			progress.Add(1)
		}
	})
	var pw sync.WaitGroup
	for range producers {
		pw.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range items {
				mu.Lock()
				queued++
				mu.Unlock()
				spin(200) // late: the waiter may take the item first
				notEmpty.Signal()
				spin(200) // let the queue run empty, so that the waiter waits
			}
		})
	}
	pw.Wait()
	mu.Lock()
	stop = true
	mu.Unlock()
	notEmpty.Signal()
	done := make(chan struct{})
	go func() { waiter.Wait(); close(done) }()
	for last := progress.Load(); ; {
		select {
		case <-done:
			return
		case <-time.After(time.Minute):
			now := progress.Load()
			if now == last {
				mu.Lock()
				q := queued
				mu.Unlock()
				t.Fatalf("the waiter made no progress for a minute with %d queued (state %#x): a lost wake-up", q, notEmpty.state.Load())
			}
			last = now
		}
	}
}
