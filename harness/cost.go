package harness

import (
	"concbench/internal/sysstat"
	"concbench/models"
	"concbench/results"
)

// runQueue reads each thread's run-queue wait (the second field of
// /proc/<pid>/task/<tid>/schedstat: ns spent runnable, waiting for a
// CPU), by thread id, through sysstat.RunQueueByThread. ok is false when
// the kernel exposes no schedstat.
//
// Note: the harness reads this itself rather than through the server's
// "snapshot tasks", which sums over the live threads (a thread that exits
// in the window would make the difference of sums wrong) and costs the
// server ~50 µs of CPU per thread inside the window it measures.
func runQueue(pid int) (map[int]int64, bool) {
	m, err := sysstat.RunQueueByThread(pid)
	if err != nil {
		return nil, false
	}
	return m, true
}

// window is what was read at the two edges of a point's measured window.
type window struct {
	before, after     *models.Snapshot
	rqBefore, rqAfter map[int]int64 // nil if schedstat is unavailable
	perf              *results.PerfCounters
	perfUnavailable   string
}

// cost computes the server's cost over the window. Cumulative counters are
// differenced; per-request values divide by the requests the server
// completed between the snapshots (0 when it completed none); gauges (RSS,
// threads) are the window's end.
func (w *window) cost() results.ServerCost {
	b, a := w.before, w.after
	c := results.ServerCost{
		RSSBytes:        a.RSSBytes,
		GoThreads:       a.GoThreads,
		Perf:            w.perf,
		PerfUnavailable: w.perfUnavailable,
	}
	if a.Stats.Requests > b.Stats.Requests {
		c.Requests = a.Stats.Requests - b.Stats.Requests
	}
	c.WindowNs = max(a.TimeUnixNs-b.TimeUnixNs, 0)
	per := func(d int64) float64 {
		if c.Requests == 0 || d < 0 {
			return 0
		}
		return float64(d) / float64(c.Requests)
	}
	c.VoluntaryCtxswPerRequest = per(a.Rusage.Voluntary - b.Rusage.Voluntary)
	c.InvoluntaryCtxswPerRequest = per(a.Rusage.Involuntary - b.Rusage.Involuntary)
	c.CtxswPerRequest = c.VoluntaryCtxswPerRequest + c.InvoluntaryCtxswPerRequest
	c.UserNsPerRequest = per(a.Rusage.UserNs - b.Rusage.UserNs)
	c.SystemNsPerRequest = per(a.Rusage.SystemNs - b.Rusage.SystemNs)
	c.CPUNsPerRequest = c.UserNsPerRequest + c.SystemNsPerRequest
	c.AllocsPerRequest = per(int64(a.Alloc.Objects - min(b.Alloc.Objects, a.Alloc.Objects)))
	c.BytesPerRequest = per(int64(a.Alloc.Bytes - min(b.Alloc.Bytes, a.Alloc.Bytes)))

	if w.rqBefore != nil && w.rqAfter != nil {
		c.SchedStat = true
		var sum int64
		for tid, q := range w.rqAfter {
			if q0, ok := w.rqBefore[tid]; ok && q >= q0 {
				sum += q - q0
			}
		}
		c.RunQueueNsPerRequest = per(sum)
	}

	c.Counters, c.CountersAtEnd = counterDeltas(b.Stats.Counters, a.Stats.Counters)
	c.Errors, _ = counterDeltas(b.Stats.Errors, a.Stats.Errors)
	c.PerThread = threadDeltas(b.Stats.PerThread, a.Stats.PerThread)
	return c
}

// counterDeltas returns after − before for every key that did not
// decrease and is not zero (a key absent before counts from 0), and the
// values at the end. A key that decreased is a gauge (open connections,
// idle followers), whose difference means nothing: it appears only at the
// end.
func counterDeltas(before, after map[string]uint64) (deltas, end map[string]uint64) {
	for k, v := range after {
		if end == nil {
			end = map[string]uint64{}
		}
		end[k] = v
		if v0 := before[k]; v > v0 {
			if deltas == nil {
				deltas = map[string]uint64{}
			}
			deltas[k] = v - v0
		}
	}
	return deltas, end
}

// threadDeltas returns each pool thread's work over the window, matched
// by thread id (by position and role while a thread has no id yet), for
// the threads present at both edges.
func threadDeltas(before, after []models.ThreadStats) []models.ThreadStats {
	var out []models.ThreadStats
	for i, t := range after {
		var t0 *models.ThreadStats
		for j := range before {
			if before[j].TID == t.TID && t.TID != 0 {
				t0 = &before[j]
				break
			}
		}
		if t0 == nil && t.TID == 0 && i < len(before) && before[i].TID == 0 && before[i].Role == t.Role {
			t0 = &before[i]
		}
		if t0 == nil {
			continue
		}
		sub := func(x, y uint64) uint64 {
			if x < y {
				return 0
			}
			return x - y
		}
		out = append(out, models.ThreadStats{
			TID: t.TID, Role: t.Role,
			Events:     sub(t.Events, t0.Events),
			Requests:   sub(t.Requests, t0.Requests),
			Promotions: sub(t.Promotions, t0.Promotions),
		})
	}
	return out
}
