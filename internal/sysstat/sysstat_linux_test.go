package sysstat

import (
	"os"
	"runtime"
	"slices"
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
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ts := unix.NsecToTimespec(100_000)
			for range sleeps {
				unix.Nanosleep(&ts, nil) // one voluntary switch each
			}
		})
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

// TestThreadReaders checks the per-thread readers: the calling thread's
// rusage and run-queue wait, and this process's threads by id.
func TestThreadReaders(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ru, err := Thread()
	if err != nil {
		t.Fatal(err)
	}
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if ru.UserNs+ru.SystemNs > self.UserNs+self.SystemNs {
		t.Errorf("the thread's CPU %d ns exceeds the process's %d ns", ru.UserNs+ru.SystemNs, self.UserNs+self.SystemNs)
	}
	if _, err := ThreadRunQueueNs(); err != nil {
		t.Fatalf("ThreadRunQueueNs: %v (the kernel has schedstat)", err)
	}
	tids, err := TaskIDs(0)
	if err != nil || !slices.Contains(tids, unix.Gettid()) {
		t.Fatalf("TaskIDs(0) = %v, %v; want this thread %d among them", tids, err, unix.Gettid())
	}
	m, err := SchedByThread(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := m[os.Getpid()]; !ok || s.RunNs <= 0 || s.Slices <= 0 {
		t.Errorf("SchedByThread(self) = %v: want the main thread %d, with time on a CPU and slices", m, os.Getpid())
	}
	if _, err := SchedByThread(1 << 30); err == nil {
		t.Error("SchedByThread of a process that does not exist succeeded")
	}
	if _, err := parseSchedstat([]byte("12 34\n")); err == nil {
		t.Error("parseSchedstat of two fields succeeded")
	}
	if s, err := parseSchedstat([]byte("12 34 56\n")); err != nil || s != (ThreadSched{12, 34, 56}) {
		t.Errorf("parseSchedstat(12 34 56) = %+v, %v", s, err)
	}
}

func TestParseSteal(t *testing.T) {
	stat := []byte("cpu  46783 15 27754 67839 598 0 3707 90 0 0\n" +
		"cpu0 23942 13 13218 34388 168 0 2232 40 0 0\n" +
		"cpu1 22840 2 14536 33451 430 0 1474 50 0 0\n" +
		"intr 3006610 0 0\n")
	for _, tc := range []struct {
		name string
		cpus []int
		want int64
	}{
		{name: "all", cpus: nil, want: 90 * 1e7},
		{name: "cpu1", cpus: []int{1}, want: 50 * 1e7},
		{name: "both", cpus: []int{0, 1}, want: 90 * 1e7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSteal(stat, tc.cpus)
			if err != nil || got != tc.want {
				t.Fatalf("parseSteal(%v) = %d, %v; want %d", tc.cpus, got, err, tc.want)
			}
		})
	}
	if _, err := parseSteal(stat, []int{7}); err == nil {
		t.Error("parseSteal of a CPU that is not there: no error")
	}
	if _, err := StealNs(nil); err != nil {
		t.Errorf("StealNs: %v", err)
	}
}
