package results

import "math"

// MMc returns the M/M/c ideal for c servers, a mean service time of
// serviceNs nanoseconds and Poisson arrivals at ratePerS requests per
// second: the response time (queueing wait plus service) of a
// work-conserving first-come-first-served queue in front of c identical
// servers with exponential service and no overhead at all. The gap between
// it and a measured latency is the measured system's overhead.
//
// The harness chooses the arguments (see package harness): c is the number
// of CPUs the server may run Go code on (its CPUs, at most GOMAXPROCS), and
// at most its thread count — Leader/Followers with 4 threads on 1 CPU is
// c = 1 for CPU-bound work; serviceNs is the requests' calibrated CPU work
// (e.g. 10 µs), nothing else. With a service time that is not exponential
// (fixed work), M/M/c overstates the queueing of an ideal server, so the
// workload's CPU work should be drawn exponentially for the gap to be the
// overhead.
//
// The response time T is the wait W plus the service S ~ Exp(μ). The wait
// is 0 with probability 1−P and Exp(cμ−λ) with probability P, the Erlang C
// probability of waiting (computed through the Erlang B recursion, which
// neither overflows nor loses precision for large c). So
//
//	P(T > t) = (1−P)·e^{−μt} + P·H(t),
//
// where H is the tail of the sum of two exponentials with rates a = cμ−λ
// and b = μ: H(t) = (b·e^{−at} − a·e^{−bt})/(b−a), written as
// e^{−min·t}·(1 + min·(1−e^{−|b−a|t})/|b−a|) (or (1+at)·e^{−at} when
// a = b) so that it is exact when the rates are close. The mean is
// P/(cμ−λ) + 1/μ; the percentiles are found by bisection on the tail,
// which is continuous and strictly decreasing.
//
// With utilization ρ = λ/(cμ) ≥ 1 the queue is unstable and has no steady
// state: Stable is false and the latencies are 0. Arguments that describe
// no queue (c < 1, a service time or rate that is negative, zero service,
// NaN or infinite) give Stable false and zero numbers too. The result never
// contains NaN or Inf.
func MMc(c int, serviceNs, ratePerS float64) Theory {
	t := Theory{Model: "M/M/c"}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c < 1 || !finite(serviceNs) || !finite(ratePerS) || serviceNs <= 0 || ratePerS < 0 {
		return t
	}
	t.C, t.ServiceNs, t.RatePerS = c, serviceNs, ratePerS
	mu := 1 / serviceNs             // services per ns, per server
	lambda := ratePerS / 1e9        // arrivals per ns
	a := ratePerS * serviceNs / 1e9 // offered load in Erlangs: λ/μ
	rho := a / float64(c)           // utilization
	if !finite(rho) || rho >= 1 {
		t.Utilization = math.Min(rho, math.MaxFloat64)
		return t
	}
	t.Utilization = rho
	t.Stable = true

	pw := erlangC(c, a)
	theta := float64(c)*mu - lambda // the rate of the wait's exponential tail
	tail := func(x float64) float64 { return (1-pw)*math.Exp(-mu*x) + pw*hypoTail(theta, mu, x) }
	t.MeanNs = pw/theta + 1/mu
	t.P50Ns = quantile(tail, 0.5, math.Min(theta, mu))
	t.P99Ns = quantile(tail, 0.99, math.Min(theta, mu))
	t.P999Ns = quantile(tail, 0.999, math.Min(theta, mu))
	return t
}

// erlangC returns the Erlang C probability that an arrival waits in an
// M/M/c queue with offered load a < c Erlangs, through the Erlang B
// recursion B(k) = a·B(k−1)/(k + a·B(k−1)), B(0) = 1, and
// C = B/(1 − (a/c)(1 − B)).
func erlangC(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// hypoTail returns P(X+Y > t) for independent X ~ Exp(r1), Y ~ Exp(r2).
func hypoTail(r1, r2, t float64) float64 {
	lo, d := math.Min(r1, r2), math.Abs(r1-r2)
	if d == 0 || d*t < 1e-300 {
		return (1 + lo*t) * math.Exp(-lo*t)
	}
	// (1 − e^{−dt})/d → t as d → 0; expm1 keeps it exact.
	return math.Exp(-lo*t) * (1 + lo*(-math.Expm1(-d*t))/d)
}

// quantile returns the t at which the decreasing tail function falls to
// 1−p, by bracketing and bisection. slowest is the smallest rate in the
// tail's exponentials, which sets the scale of the bracket.
func quantile(tail func(float64) float64, p, slowest float64) float64 {
	target := 1 - p
	lo, hi := 0.0, 1/slowest
	for tail(hi) > target {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if tail(mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// RoundRobinMM1 returns the response time at one of c exponential servers
// (mean serviceNs), each with its own first-come-first-served queue, to
// which Poisson arrivals at ratePerS are dealt round-robin: each server
// sees every c-th arrival, so its interarrival times are Erlang-c with
// rate ratePerS per phase, far more regular than the Poisson stream a
// random split gives (c × M/M/1 at λ/c). That is E_c/M/1, a GI/M/1 queue,
// whose response time is exponential with rate μ(1−σ) (Kleinrock, Queueing
// Systems vol. 1, §6.4), σ the root in (0, 1) of
//
//	σ = A*(μ(1−σ)),  A*(s) = (λ/(λ+s))^c,
//
// the interarrival time's Laplace–Stieltjes transform. Newton's method
// from σ = 0 climbs monotonically to that root, as the right side is
// convex in σ. With c = 1, σ = ρ: M/M/1. Utilization is λ/(cμ) per
// server; Stable false and zero latencies when it is 1 or more, or the
// arguments describe no queue.
func RoundRobinMM1(c int, serviceNs, ratePerS float64) Theory {
	t := Theory{Model: "c × E_c/M/1"}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c < 1 || !finite(serviceNs) || !finite(ratePerS) || serviceNs <= 0 || ratePerS <= 0 {
		return t
	}
	t.C, t.ServiceNs, t.RatePerS = c, serviceNs, ratePerS
	mu, lambda := 1/serviceNs, ratePerS/1e9
	t.Utilization = lambda / (float64(c) * mu)
	if !(t.Utilization < 1) {
		return t
	}
	fc := float64(c)
	sigma := 0.0
	for range 500 {
		b := lambda / (lambda + mu*(1-sigma))
		g := math.Pow(b, fc) - sigma
		dg := fc*math.Pow(b, fc)*mu/(lambda+mu*(1-sigma)) - 1
		next := sigma - g/dg
		if !(next > sigma) || next >= 1 { // converged (or rounding at the root)
			break
		}
		sigma = next
	}
	rate := mu * (1 - sigma) // of the exponential response time, per ns
	t.Stable = true
	t.MeanNs = 1 / rate
	t.P50Ns, t.P99Ns, t.P999Ns = math.Ln2/rate, math.Log(100)/rate, math.Log(1000)/rate
	return t
}
