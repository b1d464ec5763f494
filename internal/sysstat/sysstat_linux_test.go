package sysstat

import (
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRusageCountsEveryThread blocks several locked threads and checks that
// getrusage(RUSAGE_SELF) sees their voluntary switches, and that the
// per-task sum agrees while they are alive.
func TestRusageCountsEveryThread(t *testing.T) {
	const threads, sleeps = 4, 20
	before, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ts := unix.NsecToTimespec(100_000)
			for range sleeps {
				unix.Nanosleep(&ts, nil) // one voluntary switch each
			}
		}()
	}
	wg.Wait()
	after, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Voluntary - before.Voluntary; d < threads*sleeps {
		t.Errorf("voluntary switches grew by %d, want at least %d (one per nanosleep)", d, threads*sleeps)
	}
	if after.UserNs+after.SystemNs <= 0 {
		t.Error("no CPU time")
	}
	tasks, err := ReadTasks(0)
	if err != nil {
		t.Fatal(err)
	}
	if tasks.Threads < 2 || tasks.Voluntary <= 0 {
		t.Errorf("tasks: %+v", tasks)
	}
	if tasks.Voluntary > after.Voluntary+1000 {
		t.Errorf("live threads' switches %d exceed the process's %d", tasks.Voluntary, after.Voluntary)
	}
}

func TestReadAllocCountsAllocations(t *testing.T) {
	const n = 100000
	a := ReadAlloc()
	var keep [][]byte
	for range n {
		keep = append(keep, make([]byte, 64))
	}
	b := ReadAlloc()
	// Span granularity: the count may lag by a span per size class per P,
	// far less than n.
	if d := b.Objects - a.Objects; d < n/2 {
		t.Errorf("objects grew by %d after %d allocations", d, n)
	}
	if b.Bytes-a.Bytes < n*64/2 {
		t.Errorf("bytes grew by %d", b.Bytes-a.Bytes)
	}
	runtime.KeepAlive(keep)
}

func TestRSS(t *testing.T) {
	rss, err := RSS()
	if err != nil || rss <= 0 {
		t.Fatalf("RSS = %d, %v", rss, err)
	}
}
