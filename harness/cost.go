package harness

import (
	"errors"
	"fmt"
	"runtime"

	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
	"concbench/models"
	"concbench/results"
)

// runQueue reads each thread's scheduler counters (its
// /proc/<pid>/task/<tid>/schedstat: ns on a CPU, ns runnable waiting for
// a CPU, switches in), by thread id, through sysstat.SchedByThread. ok is
// false when the kernel exposes no schedstat.
//
// Note: the harness reads this itself rather than through the server's
// "snapshot tasks", which sums over the live threads (a thread that exits
// in the window would make the difference of sums wrong) and costs the
// server CPU time per thread inside the window it measures.
func runQueue(pid int) (map[int]sysstat.ThreadSched, bool) {
	m, err := sysstat.SchedByThread(pid)
	if err != nil {
		return nil, false
	}
	return m, true
}

// maxRunQueueThreads is the most server threads whose run-queue waits the
// harness reads at a window's edges. The read costs the generator's CPU
// time in proportion to the threads (BenchmarkSchedByThread in
// internal/sysstat; the figures are in docs/findings.md), and the
// window-start read must end within the load generator's 20 ms lead
// before its window: past it, it preempts the busy-polling generator
// inside the window, and the generator's lag — not the server — is what
// gets measured (thread per connection's thousands of threads). 512 is
// the most threads whose read was measured to end within the lead.
const maxRunQueueThreads = 512

// startRunQueue reads the server's run-queue waits at the window's start
// (of every thread of the server's processes pids), unless it has more
// than maxRunQueueThreads threads (counted from one small file per
// process); then it records why it did not, and endRunQueue reads
// nothing either.
func (w *window) startRunQueue(pids ...int) {
	n := 0
	for _, pid := range pids {
		k, _ := sysstat.Threads(pid)
		n += k
	}
	if n > maxRunQueueThreads {
		w.rqSkipped = fmt.Sprintf("not read: the server has %d threads, and reading each one's schedstat at the window's start would cost the load generator's CPU more than its lead before the window (at most %d threads are read)", n, maxRunQueueThreads)
		return
	}
	w.rqBefore = runQueues(pids)
}

// endRunQueue reads the server's run-queue waits at the window's end, if
// they were read at its start.
func (w *window) endRunQueue(pids ...int) {
	if w.rqBefore != nil {
		w.rqAfter = runQueues(pids)
	}
}

// runQueues merges runQueue over the processes pids (thread ids are
// unique across processes); nil if none could be read.
func runQueues(pids []int) map[int]sysstat.ThreadSched {
	var all map[int]sysstat.ThreadSched
	for _, pid := range pids {
		m, ok := runQueue(pid)
		if !ok {
			continue
		}
		if all == nil {
			all = m
			continue
		}
		for tid, v := range m {
			all[tid] = v
		}
	}
	return all
}

// readProc reads the OS threads and open descriptors of the server's
// processes pids, summed. It is called after the window's end, with the
// connections still open: listing thousands of descriptors takes
// milliseconds.
func (w *window) readProc(pids ...int) {
	var errs []error
	w.threads, w.fds = 0, 0
	for _, pid := range pids {
		threads, err1 := sysstat.Threads(pid)
		fds, err2 := sysstat.OpenFDs(pid)
		w.threads += int64(threads)
		w.fds += int64(fds)
		errs = append(errs, err1, err2)
	}
	if err := errors.Join(errs...); err != nil {
		w.procUnavailable = err.Error()
	}
}

// window is what was read at the two edges of a point's measured window.
type window struct {
	// begin is read before the load connects (runner.measure): the
	// connections each thread accepts count from there (cost).
	begin             *models.Snapshot
	before, after     *models.Snapshot
	rqBefore, rqAfter map[int]sysstat.ThreadSched // nil if schedstat is unavailable or not read
	rqSkipped         string                      // why the run-queue waits were not read, if not for lack of schedstat
	perf              *results.PerfCounters
	perfUnavailable   string
	mechanisms        *results.Mechanisms // a mechanisms point's counts, or nil (mechUnavailable says why for that kind)
	mechUnavailable   string
	// threads, fds: after the window (readProc); procUnavailable says
	// why not.
	threads, fds    int64
	procUnavailable string
	// steal0 and steal1 are the server CPUs' steal time at the window's
	// edges (stealCPUs of them); stealErr says why they are not known.
	steal0, steal1 int64
	stealCPUs      int
	stealErr       error
}

// readSteal reads the steal time of the server's CPUs (cpus; every CPU
// when empty) at a window's edge.
func (w *window) readSteal(cpus cpuset.Set, start bool) {
	ns, err := sysstat.StealNs(cpus)
	w.stealErr = errors.Join(w.stealErr, err)
	if start {
		w.steal0, w.stealCPUs = ns, len(cpus)
		if w.stealCPUs == 0 {
			w.stealCPUs = runtime.NumCPU()
		}
		return
	}
	w.steal1 = ns
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

		Mechanisms:            w.mechanisms,
		MechanismsUnavailable: w.mechUnavailable,
		Threads:               w.threads,
		FDs:                   w.fds,
		ProcUnavailable:       w.procUnavailable,
		RunQueueSkipped:       w.rqSkipped,
	}
	if a.Stats.Requests > b.Stats.Requests {
		c.Requests = a.Stats.Requests - b.Stats.Requests
	}
	c.WindowNs = max(a.TimeUnixNs-b.TimeUnixNs, 0)
	switch {
	case w.stealErr != nil:
		c.StealUnavailable = w.stealErr.Error()
	case w.stealCPUs > 0:
		c.StealNs = max(w.steal1-w.steal0, 0)
		if c.WindowNs > 0 {
			c.StealFraction = float64(c.StealNs) / (float64(c.WindowNs) * float64(w.stealCPUs))
		}
	}
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
			if q0, ok := w.rqBefore[tid]; ok && q.WaitNs >= q0.WaitNs {
				sum += q.WaitNs - q0.WaitNs
			}
		}
		c.RunQueueNsPerRequest = per(sum)
		c.Other = otherThreads(w.rqBefore, w.rqAfter, a.Stats.PerThread, per)
	}

	c.Counters, c.CountersAtEnd = counterDeltas(b.Stats.Counters, a.Stats.Counters)
	c.Errors, _ = counterDeltas(b.Stats.Errors, a.Stats.Errors)
	c.PerThread = threadDeltas(b.Stats.PerThread, a.Stats.PerThread)
	if w.begin != nil {
		acceptedSince(c.PerThread, w.begin.Stats.PerThread, a.Stats.PerThread)
	}
	return c
}

// otherThreads sums the scheduler counters over the window of the threads
// alive at both edges that are not among named's ids (the model's own
// threads), per request (per); nil if named has no id.
func otherThreads(before, after map[int]sysstat.ThreadSched, named []models.ThreadStats, per func(int64) float64) *results.OtherThreads {
	ids := map[int]bool{}
	for _, t := range named {
		if t.TID != 0 {
			ids[t.TID] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	o := &results.OtherThreads{}
	var run, slices, namedSlices int64
	for tid, v := range after {
		v0, ok := before[tid]
		if !ok || v.RunNs < v0.RunNs || v.Slices < v0.Slices {
			continue
		}
		if ids[tid] {
			namedSlices += v.Slices - v0.Slices
			continue
		}
		o.Threads++
		run += v.RunNs - v0.RunNs
		slices += v.Slices - v0.Slices
	}
	o.CPUNsPerRequest, o.SlicesPerRequest, o.NamedSlicesPerRequest = per(run), per(slices), per(namedSlices)
	return o
}

// acceptedSince sets each thread's Accepted in deltas (threadDeltas' of
// after) to the connections it accepted from the begin reading to the
// after one, matched by thread id: the point's own connections, which
// the load generator opens before the window, so that a difference over
// the window alone would count none of them. A thread absent at begin
// counts from 0 (it started since).
func acceptedSince(deltas, begin, after []models.ThreadStats) {
	at := func(ts []models.ThreadStats, tid int) (uint64, bool) {
		for _, t := range ts {
			if t.TID == tid && tid != 0 {
				return t.Accepted, true
			}
		}
		return 0, false
	}
	for i := range deltas {
		end, ok := at(after, deltas[i].TID)
		if !ok {
			continue
		}
		start, _ := at(begin, deltas[i].TID)
		if end > start {
			deltas[i].Accepted = end - start
		}
	}
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
