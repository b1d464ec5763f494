package results

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Moments are the first two moments of a distribution, in ns and ns².
type Moments struct {
	Mean   float64 `json:"mean_ns"`
	Second float64 `json:"second_moment_ns2"` // E[X²]
}

// MomentsOf returns the moments of the samples xs (ns); zero for none.
func MomentsOf(xs []float64) Moments {
	if len(xs) == 0 {
		return Moments{}
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	return Moments{Mean: s / n, Second: s2 / n}
}

// Plus returns the moments of the sum of independent X ~ m and Y ~ o:
// E[X+Y] and E[(X+Y)²] = E[X²] + 2E[X]E[Y] + E[Y²].
func (m Moments) Plus(o Moments) Moments {
	return Moments{Mean: m.Mean + o.Mean, Second: m.Second + 2*m.Mean*o.Mean + o.Second}
}

// SCV returns the squared coefficient of variation Var[X]/E[X]² (1 for an
// exponential, 0 for a constant); 0 for a zero mean.
func (m Moments) SCV() float64 {
	if m.Mean == 0 {
		return 0
	}
	return math.Max(m.Second-m.Mean*m.Mean, 0) / (m.Mean * m.Mean)
}

// PollaczekKhinchine returns the mean response time (wait plus service,
// ns) of an M/G/1 first-come-first-served queue with Poisson arrivals at
// ratePerS and service moments s:
//
//	E[T] = E[S] + λ·E[S²] / (2·(1 − ρ)),  ρ = λ·E[S],
//
// and false (and 0) when ρ ≥ 1 or the inputs describe no queue. With an
// exponential service (E[S²] = 2E[S]²) it is the M/M/1 mean 1/(μ−λ); with
// a constant one (E[S²] = E[S]²) the M/D/1 mean.
func PollaczekKhinchine(ratePerS float64, s Moments) (float64, bool) {
	return SetupMean(ratePerS, s, Moments{})
}

// SetupMean returns the mean response time (ns) of an M/G/1 queue whose
// server needs a setup time U before serving a request that found it idle
// (the first of a busy period: a halted CPU waking, a thread woken from
// its wait), with Poisson arrivals at ratePerS, service moments s and
// setup moments u (Welch 1964, exceptional first service; in this form
// e.g. Takagi, Queueing Analysis vol. 1, §2.3):
//
//	E[T] = E[S] + λE[S²]/(2(1−ρ)) + (2E[U] + λE[U²]) / (2(1 + λE[U])).
//
// The zero u gives Pollaczek–Khinchine. It returns false (and 0) when
// ρ = λE[S] ≥ 1 or the inputs describe no queue.
func SetupMean(ratePerS float64, s, u Moments) (float64, bool) {
	lambda := ratePerS / 1e9
	rho := lambda * s.Mean
	if !(lambda >= 0) || !(s.Mean > 0) || s.Second < s.Mean*s.Mean*(1-1e-9) || !(rho < 1) || u.Mean < 0 || u.Second < 0 ||
		math.IsInf(lambda, 0) || math.IsInf(s.Second, 0) || math.IsInf(u.Second, 0) {
		return 0, false
	}
	t := s.Mean + lambda*s.Second/(2*(1-rho))
	if u.Mean > 0 {
		t += (2*u.Mean + lambda*u.Second) / (2 * (1 + lambda*u.Mean))
	}
	return t, true
}

// MD1 returns the M/D/1 ideal for a constant service serviceNs and Poisson
// arrivals at ratePerS: the mean by Pollaczek–Khinchine and the
// percentiles of the response time D + W from Erlang's exact distribution
// of the wait (time in units of D, λ per D, ρ = λ):
//
//	P(W ≤ t) = (1−ρ) Σ_{k=0}^{⌊t⌋} (ρ(k−t))^k / k! · e^{−ρ(k−t)},
//
// found by bisection. The alternating sum loses precision for long waits
// (terms up to e^{ρt}); below ρ = 0.95, at p99.9, fewer than 8 of 16
// digits are lost. Stable false (and zero latencies) when ρ ≥ 1.
func MD1(serviceNs, ratePerS float64) Theory {
	t := Theory{Model: "M/D/1", C: 1, ServiceNs: serviceNs, RatePerS: ratePerS}
	rho := ratePerS * serviceNs / 1e9
	t.Utilization = rho
	mean, ok := PollaczekKhinchine(ratePerS, Moments{Mean: serviceNs, Second: serviceNs * serviceNs})
	if !ok {
		return t
	}
	t.Stable, t.MeanNs = true, mean
	cdf := func(x float64) float64 { // P(W ≤ x), x in units of D
		var sum float64
		for k := 0; k <= int(math.Floor(x)); k++ {
			a := rho * (float64(k) - x) // ≤ 0
			switch {
			case k == 0:
				sum += math.Exp(-a)
			case a != 0:
				sum += math.Exp(float64(k)*math.Log(math.Abs(a))-lgamma(k+1)-a) * sign(a, k)
			}
		}
		return math.Min((1-rho)*sum, 1)
	}
	q := func(p float64) float64 {
		if cdf(0) >= p { // P(W = 0) = 1−ρ
			return serviceNs
		}
		lo, hi := 0.0, 1.0
		for cdf(hi) < p {
			lo, hi = hi, 2*hi
		}
		for range 100 {
			mid := (lo + hi) / 2
			if cdf(mid) < p {
				lo = mid
			} else {
				hi = mid
			}
		}
		return (1 + hi) * serviceNs
	}
	t.P50Ns, t.P99Ns, t.P999Ns = q(0.5), q(0.99), q(0.999)
	return t
}

// sign returns the sign of a^k (a^0 = 1, including 0^0).
func sign(a float64, k int) float64 {
	if a < 0 && k%2 == 1 {
		return -1
	}
	return 1
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// Simulation describes a queue SimulateQueue runs: Poisson arrivals at
// RatePerS to C first-come-first-served servers, either sharing one queue
// (a request goes to the first server free: M/G/c) or Partitioned, each
// server with a queue of its own that the Split fills (c × M/G/1 when the
// split is random). Each request's service is drawn (uniformly, with
// replacement) from Service, ns — measured service times, so that the
// prediction has the measured distribution, not a fitted one — or, if
// Service is empty, from ServiceDist. A request that finds its server
// idle first pays a setup time drawn from Setup (none if empty); after
// each service the server stays occupied for a gap drawn from Gap (none
// if empty; the next request waits for it, this one's response does not
// include it); every response time then gets a floor drawn from Floor
// (none if empty) — the measured loopback round trip, which no queueing
// precedes.
type Simulation struct {
	C        int
	RatePerS float64
	// Partitioned gives each server its own queue. Split, if not empty,
	// is the servers the requests join, in arrival order, repeated:
	// request n joins server Split[n mod len(Split)] (0 ≤ each < C) —
	// {0, 1, …, C−1} is a round-robin split, a measured sequence the
	// split a server really made; empty, each request joins a server
	// drawn uniformly at random, which splits the Poisson stream into C
	// Poisson streams at RatePerS/C. Split without Partitioned is an
	// error (Stable false).
	Partitioned bool
	Split       []int
	Service     []float64
	ServiceDist Sampler
	Setup       []float64
	Gap         []float64
	Floor       []float64
	// Requests is the number simulated (after as many again of warm-up);
	// Seed makes the draw repeatable.
	Requests int
	Seed     uint64
}

// service returns the simulation's service-time sampler, or nil.
func (s *Simulation) service() Sampler {
	if len(s.Service) > 0 {
		return empirical{xs: s.Service, m: MomentsOf(s.Service)}
	}
	return s.ServiceDist
}

// busiestShare returns the largest share of the requests one server gets,
// or 0 if the split names a server that does not exist.
func (s *Simulation) busiestShare() float64 {
	if !s.Partitioned || len(s.Split) == 0 {
		return 1 / float64(s.C)
	}
	n := make([]int, s.C)
	for _, j := range s.Split {
		if j < 0 || j >= s.C {
			return 0
		}
		n[j]++
	}
	return float64(slices.Max(n)) / float64(len(s.Split))
}

// SimulateQueue returns the simulated response times' mean and
// percentiles (Model "M/G/c sim", or "c × M/G/1 sim" when partitioned),
// by the Kiefer–Wolfowitz recursion (Lindley's for one server): request n
// arrives at A_n, starts at max(A_n, the time its server is next free) (+
// setup if that server was idle) — its server is the one free earliest
// with a shared queue, the split's otherwise — and leaves S_n later. It
// is the numerical method for the percentiles of M/G/1 and M/G/c, for
// which no closed form exists. Utilization is the offered load per server,
// λ·(E[S] + E[gap])/c (the gap occupies its server too); Stable is false
// when the busiest server's offered load is 1 or more, or the inputs
// describe no queue.
func SimulateQueue(s Simulation) Theory {
	svc := s.service()
	t := Theory{Model: "M/G/c sim", C: s.C, RatePerS: s.RatePerS}
	if s.Partitioned {
		t.Model = "c × M/G/1 sim"
	}
	if svc == nil || s.C < 1 || len(s.Split) > 0 && !s.Partitioned || s.Requests < 1 {
		return t
	}
	m := svc.Moments()
	t.ServiceNs = m.Mean
	share := s.busiestShare()
	if !(m.Mean > 0) || !(s.RatePerS > 0) || share == 0 {
		return t
	}
	occupied := m.Mean + MomentsOf(s.Gap).Mean
	t.Utilization = s.RatePerS * occupied / 1e9 / float64(s.C)
	if !(t.Utilization < 1) || !(s.RatePerS*occupied/1e9*share < 1) {
		return t
	}
	t.Stable = true
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	draw := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[rng.IntN(len(xs))]
	}
	free := make([]float64, s.C) // when each server is next free, ns
	meanGap := 1e9 / s.RatePerS
	var now float64
	resp := make([]float64, 0, s.Requests)
	for n := range 2 * s.Requests {
		now += rng.ExpFloat64() * meanGap
		j := 0
		switch {
		case !s.Partitioned:
			for i := range free {
				if free[i] < free[j] {
					j = i
				}
			}
		case len(s.Split) > 0:
			j = s.Split[n%len(s.Split)]
		default:
			j = rng.IntN(s.C)
		}
		start := free[j]
		if start <= now {
			start = now + draw(s.Setup)
		}
		end := start + svc.Sample(rng)
		free[j] = end + draw(s.Gap)
		if n >= s.Requests {
			resp = append(resp, end-now+draw(s.Floor))
		}
	}
	t.MeanNs = MomentsOf(resp).Mean
	slices.Sort(resp)
	t.P50Ns, t.P99Ns, t.P999Ns = quantileOf(resp, 0.5), quantileOf(resp, 0.99), quantileOf(resp, 0.999)
	return t
}

// quantileOf returns the p-quantile of the sorted xs (the smallest x with
// at least p·n values at or below it).
func quantileOf(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
