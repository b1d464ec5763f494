package results

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"concbench/loadgen"
)

// ServiceRecord is one request as the server's own trace saw it (concbench
// serve --trace): its id, the CLOCK_MONOTONIC start and end of its
// service, and the thread that served it (0: not known).
type ServiceRecord struct {
	ID      uint64
	StartNs int64
	EndNs   int64
	Thread  int64
}

// Parts is the decomposition of one response time, from the intended send
// time I (the Poisson schedule: the queueing model's arrival) to the
// receive time R, with the generator's timestamps (I, the actual send S,
// R) and the server's (service start B, end E), all on CLOCK_MONOTONIC.
// Its fields sum to R − I exactly (Sum):
//
//	GenLag   = S − I             the generator's lateness before send
//	Queue    = min(B, Eprev) − S the wait while the server served earlier requests
//	                             (0 if it was idle when the request was sent)
//	Dispatch = B − S − Queue     from the send (idle server) or from the end of the
//	                             previous service (busy server) to this one's start:
//	                             loopback, wake-up of the server thread or CPU,
//	                             epoll, read, parse, the previous response's write
//	Service  = E − B             the server's Service.Do
//	Return   = R − E             encode, write, loopback back to the generator's
//	                             kernel receive timestamp
//
// Eprev is the latest service end among the requests the same thread
// served before this one (ServiceRecord.Thread; records that name no
// thread count as one thread's), so that with several threads Queue is
// the wait behind the thread that served the request, and Dispatch that
// thread's own set-up (idle) or gap between two services (busy).
type Parts struct {
	GenLag, Queue, Dispatch, Service, Return int64
	// Idle reports whether the server had finished every earlier request
	// when this one was sent (Queue 0: its Dispatch includes any set-up of
	// an idle server).
	Idle bool
}

// Sum returns the whole response time R − I.
func (p Parts) Sum() int64 { return p.GenLag + p.Queue + p.Dispatch + p.Service + p.Return }

// Join matches the generator's records to the server's by request id and
// decomposes each matched response time (Parts, in the generator's record
// order). srv may hold records of requests the generator did not measure
// (warm-up): they still count as earlier services for Queue. unmatched is
// the number of generator records the server has no record of.
func Join(gen []loadgen.TraceRecord, srv []ServiceRecord) (parts []Parts, unmatched int) {
	order := slices.Clone(srv)
	slices.SortFunc(order, func(a, b ServiceRecord) int { return cmp.Compare(a.StartNs, b.StartNs) })
	prevEnd := make(map[uint64]int64, len(order)) // id → latest end among its thread's services started before
	idx := make(map[uint64]int, len(order))
	latest := map[int64]int64{} // thread → its latest service end so far
	for i, r := range order {
		l, ok := latest[r.Thread]
		if !ok {
			l = -1 << 62
		}
		prevEnd[r.ID] = l
		idx[r.ID] = i
		latest[r.Thread] = max(l, r.EndNs)
	}
	parts = make([]Parts, 0, len(gen))
	for _, g := range gen {
		i, ok := idx[g.ID]
		if !ok {
			unmatched++
			continue
		}
		r := order[i]
		var p Parts
		p.GenLag = g.SentNs - g.IntendedNs
		busyUntil := min(prevEnd[g.ID], r.StartNs)
		if busyUntil > g.SentNs {
			p.Queue = busyUntil - g.SentNs
		} else {
			p.Idle = true
		}
		p.Dispatch = r.StartNs - g.SentNs - p.Queue
		p.Service = r.EndNs - r.StartNs
		p.Return = g.RecvNs - r.EndNs
		parts = append(parts, p)
	}
	return parts, unmatched
}

// Decomposition is the mean of each Parts field over an experiment's
// joined requests (ns), with the shares that explain them.
type Decomposition struct {
	Requests  int     `json:"requests"`
	Unmatched int     `json:"unmatched"` // generator records without a server record
	GenLag    float64 `json:"gen_lag_ns"`
	Queue     float64 `json:"queue_ns"`
	Dispatch  float64 `json:"dispatch_ns"`
	Service   float64 `json:"service_ns"`
	Return    float64 `json:"return_ns"`
	Total     float64 `json:"total_ns"` // the mean response time R − I: the sum of the above
	// IdleShare is the share of requests sent to an idle server;
	// IdleDispatch and BusyDispatch the mean Dispatch of those and of the
	// others: the set-up an idle server costs, and the server's own gap
	// between two services when it is busy.
	IdleShare    float64 `json:"idle_share"`
	IdleDispatch float64 `json:"idle_dispatch_ns"`
	BusyDispatch float64 `json:"busy_dispatch_ns"`
	// Negative counts requests with a negative part (the two processes'
	// clocks disagree by more than their uncertainty; expected 0).
	Negative int `json:"negative_parts"`
}

// Decompose summarizes parts.
func Decompose(parts []Parts, unmatched int) Decomposition {
	d := Decomposition{Requests: len(parts), Unmatched: unmatched}
	if len(parts) == 0 {
		return d
	}
	var idle, idleD, busyD float64
	for _, p := range parts {
		d.GenLag += float64(p.GenLag)
		d.Queue += float64(p.Queue)
		d.Dispatch += float64(p.Dispatch)
		d.Service += float64(p.Service)
		d.Return += float64(p.Return)
		d.Total += float64(p.Sum())
		if p.Idle {
			idle++
			idleD += float64(p.Dispatch)
		} else {
			busyD += float64(p.Dispatch)
		}
		if p.GenLag < 0 || p.Queue < 0 || p.Dispatch < 0 || p.Service < 0 || p.Return < 0 {
			d.Negative++
		}
	}
	n := float64(len(parts))
	for _, f := range []*float64{&d.GenLag, &d.Queue, &d.Dispatch, &d.Service, &d.Return, &d.Total} {
		*f /= n
	}
	d.IdleShare = idle / n
	if idle > 0 {
		d.IdleDispatch = idleD / idle
	}
	if idle < n {
		d.BusyDispatch = busyD / (n - idle)
	}
	return d
}

// Samples returns, per request, the Parts field f as float64 ns (the
// resampling pools of the predictions); keep selects which requests.
func Samples(parts []Parts, f func(Parts) int64, keep func(Parts) bool) []float64 {
	var xs []float64
	for _, p := range parts {
		if keep == nil || keep(p) {
			xs = append(xs, float64(f(p)))
		}
	}
	return xs
}

// String formats d as one line of µs.
func (d Decomposition) String() string {
	us := func(ns float64) string { return fmt.Sprintf("%.1f", ns/float64(time.Microsecond)) }
	return fmt.Sprintf("lag %s + queue %s + dispatch %s + service %s + return %s = %s µs (idle %.0f%%: dispatch %s µs idle, %s µs busy)",
		us(d.GenLag), us(d.Queue), us(d.Dispatch), us(d.Service), us(d.Return), us(d.Total), 100*d.IdleShare, us(d.IdleDispatch), us(d.BusyDispatch))
}

// SplitOf returns the split a server of several threads made of the
// generator's requests: for each request of gen that srv served, in send
// order, its thread's index (threads numbered in the order of their first
// request). A partitioned server's split, fed to SimulateQueue, is what
// its queues saw: with each connection bound to one thread and the load
// generator dealing its requests to its connections round-robin, it is
// no random split.
func SplitOf(gen []loadgen.TraceRecord, srv []ServiceRecord) []int {
	thread := make(map[uint64]int64, len(srv))
	for _, r := range srv {
		thread[r.ID] = r.Thread
	}
	order := slices.Clone(gen)
	slices.SortStableFunc(order, func(a, b loadgen.TraceRecord) int { return cmp.Compare(a.SentNs, b.SentNs) })
	index := map[int64]int{}
	split := make([]int, 0, len(order))
	for _, g := range order {
		t, ok := thread[g.ID]
		if !ok {
			continue
		}
		i, ok := index[t]
		if !ok {
			i = len(index)
			index[t] = i
		}
		split = append(split, i)
	}
	return split
}
