package sysstat

import (
	"runtime/metrics"
)

// Rusage is the CPU time and context switches of the whole process (Self)
// or of one thread (Thread).
type Rusage struct {
	UserNs      int64 `json:"user_ns"`
	SystemNs    int64 `json:"system_ns"`
	Voluntary   int64 `json:"voluntary_ctxsw"`   // the thread gave up the CPU (blocked)
	Involuntary int64 `json:"involuntary_ctxsw"` // the thread was preempted
	MaxRSSKiB   int64 `json:"max_rss_kib"`
}

// Tasks sums per-thread counters over the process's live threads.
type Tasks struct {
	Threads     int   `json:"threads"`
	Voluntary   int64 `json:"voluntary_ctxsw"`
	Involuntary int64 `json:"involuntary_ctxsw"`
	RunNs       int64 `json:"run_ns"`      // time on a CPU (schedstat)
	RunQueueNs  int64 `json:"runqueue_ns"` // time runnable, waiting for a CPU (schedstat)
	Timeslices  int64 `json:"timeslices"`  // times scheduled onto a CPU (schedstat)
	SchedStat   bool  `json:"schedstat"`   // false if the kernel exposes no schedstat
}

// Alloc is the Go heap's cumulative allocation counters.
type Alloc struct {
	Objects  uint64 `json:"objects"`
	Bytes    uint64 `json:"bytes"`
	GCCycles uint64 `json:"gc_cycles"`
}

var allocKeys = []string{"/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/gc/cycles/total:gc-cycles"}

// ReadAlloc reads the allocation counters from runtime/metrics, which does
// not stop the world, unlike runtime.ReadMemStats.
func ReadAlloc() Alloc {
	s := make([]metrics.Sample, len(allocKeys))
	for i, k := range allocKeys {
		s[i].Name = k
	}
	metrics.Read(s)
	var a Alloc
	vals := []*uint64{&a.Objects, &a.Bytes, &a.GCCycles}
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			*vals[i] = s[i].Value.Uint64()
		}
	}
	return a
}
