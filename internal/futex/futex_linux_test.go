package futex

import (
	"runtime"
	"sync"
	"testing"
	"time"
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

func TestParkerWakesParkedThread(t *testing.T) {
	p := new(Parker)
	parked := make(chan struct{})
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		close(parked)
		p.Park()
		close(done)
	}()
	<-parked
	p.Unpark()
	<-done
}

// TestMutexExcludes runs locked threads incrementing a counter that only the
// mutex protects; the race detector and the final count check exclusion.
func TestMutexExcludes(t *testing.T) {
	const threads, rounds = 4, 20000
	var m Mutex
	n := 0
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range rounds {
				m.Lock()
				n++
				m.Unlock()
			}
		}()
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
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	var cw sync.WaitGroup
	for range 2 {
		cw.Add(1)
		go func() {
			defer cw.Done()
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
		}()
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

func TestWordWakesSleepers(t *testing.T) {
	const n = 3
	var w Word
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for w.Load() == 0 {
				w.Wait(0)
			}
		}()
	}
	// One Wake suffices: a sleeper that had not yet entered the kernel finds
	// the word changed and FUTEX_WAIT returns at once; none can be missed.
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
