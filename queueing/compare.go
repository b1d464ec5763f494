package queueing

import (
	"strconv"

	"concbench/results"
)

// QueueComparison is one service distribution at one utilization: C
// servers sharing one first-come-first-served queue (the shared handle
// set of Leader/Followers) against C servers with a queue each (a
// partitioned server: each connection bound to one worker), simulated,
// beside the closed forms where one exists (concbench theory).
type QueueComparison struct {
	Dist results.ServiceDist `json:"dist"`
	C    int                 `json:"c"`
	// Rho is the utilization λE[S]/C; RatePerS the arrival rate λ that
	// gives it.
	Rho      float64 `json:"rho"`
	RatePerS float64 `json:"rate_per_s"`
	// OverheadNs is a fixed per-request cost the shared queue pays on top
	// of the service (its coordination: a promotion, a lock), which the
	// partitioned queues do not; 0 compares pure queueing.
	OverheadNs float64 `json:"overhead_ns"`
	// Shared is M/G/c; Random the partitioned queues with each request
	// to a server drawn at random (c × M/G/1 at λ/c); RoundRobin with the
	// requests dealt round-robin (c × E_c/G/1) — what a load generator's
	// round-robin over connections, each bound to one worker, makes of a
	// Poisson stream. Each is simulated.
	Shared     results.Theory `json:"shared"`
	Random     results.Theory `json:"random"`
	RoundRobin results.Theory `json:"round_robin"`
	// SharedForm, RandomForm and RoundRobinForm are the closed forms of
	// the same queues where one exists (Stable false where none does; a
	// mean without percentiles where only the mean has one: M/G/1 by
	// Pollaczek–Khinchine).
	SharedForm     results.Theory `json:"shared_form"`
	RandomForm     results.Theory `json:"random_form"`
	RoundRobinForm results.Theory `json:"round_robin_form"`
}

// CompareQueues simulates d at utilization rho on c shared and c
// partitioned servers (requests each, after as many of warm-up, seeded)
// and adds the closed forms. The shared queue's service is d plus
// overheadNs.
func CompareQueues(d results.ServiceDist, c int, rho, overheadNs float64, requests int, seed uint64) QueueComparison {
	rate := rho * float64(c) * 1e9 / d.MeanNs
	q := QueueComparison{Dist: d, C: c, Rho: rho, RatePerS: rate, OverheadNs: overheadNs}
	rr := make([]int, c)
	for i := range rr {
		rr[i] = i
	}
	q.Shared = results.SimulateQueue(results.Simulation{C: c, RatePerS: rate, ServiceDist: results.Shifted(d, overheadNs), Requests: requests, Seed: seed})
	q.Random = results.SimulateQueue(results.Simulation{C: c, RatePerS: rate, Partitioned: true, ServiceDist: d, Requests: requests, Seed: seed + 1})
	q.RoundRobin = results.SimulateQueue(results.Simulation{C: c, RatePerS: rate, Partitioned: true, Split: rr, ServiceDist: d, Requests: requests, Seed: seed + 2})
	q.Shared.Model, q.Random.Model, q.RoundRobin.Model = "M/G/"+strconv.Itoa(c)+" sim", strconv.Itoa(c)+" × M/G/1 sim", strconv.Itoa(c)+" × E_"+strconv.Itoa(c)+"/G/1 sim"
	shape, m := d.Shape, d.Moments()
	if overheadNs != 0 {
		if shape != results.ShapeConst {
			shape = "" // shifted: no longer a shape the closed forms know, only its moments
		}
		m = m.Plus(results.Moments{Mean: overheadNs, Second: overheadNs * overheadNs})
	}
	q.SharedForm = closedForm(shape, m, c, rate)
	q.RandomForm = closedForm(d.Shape, d.Moments(), 1, rate/float64(c))
	q.RandomForm.C = c
	switch {
	case c == 1:
		q.RoundRobinForm = q.RandomForm
	case d.Shape == results.ShapeExp:
		q.RoundRobinForm = results.RoundRobinMM1(c, d.MeanNs, rate)
		q.RoundRobinForm.Model = strconv.Itoa(c) + " × E_" + strconv.Itoa(c) + "/M/1"
	}
	if c > 1 && q.RandomForm.Model != "" {
		q.RandomForm.Model = strconv.Itoa(c) + " × " + q.RandomForm.Model
	}
	return q
}

// closedForm returns the closed form, where one exists, of c servers
// sharing one queue at ratePerS, with service times of the given shape
// (ServiceDist's; "" for one the closed forms do not know) and moments m:
// M/M/c (Erlang C) for exponential service, M/D/1 (Erlang) for a constant
// one on one server, the M/G/1 mean alone (Pollaczek–Khinchine) for any
// other on one server; otherwise the zero Theory (Stable false).
func closedForm(shape string, m results.Moments, c int, ratePerS float64) results.Theory {
	var t results.Theory
	switch {
	case shape == results.ShapeExp:
		t = results.MMc(c, m.Mean, ratePerS)
		t.Model = "M/M/" + strconv.Itoa(c)
	case c != 1:
		return results.Theory{}
	case shape == results.ShapeConst:
		t = results.MD1(m.Mean, ratePerS)
	default:
		t = results.Theory{Model: "M/G/1 (P-K)", C: 1, ServiceNs: m.Mean, RatePerS: ratePerS, Utilization: ratePerS * m.Mean / 1e9}
		t.MeanNs, t.Stable = results.PollaczekKhinchine(ratePerS, m)
	}
	return t
}
