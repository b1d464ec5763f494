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
