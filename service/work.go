package service

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// spinSeed is the xorshift state every Spin starts from (any non-zero value),
// so the same iteration count always computes the same result.
const spinSeed = 0x9E3779B97F4A7C15

// spin runs n iterations of the CPU-work loop and returns its result. Each
// iteration is a 64-bit xorshift step feeding a multiply–xor accumulator:
// two dependent chains of integer operations on registers, no memory
// traffic, no branches but the loop's own, so its cost per iteration is
// stable and the race detector does not instrument it. It is kept out of
// line so that no caller's context lets the compiler simplify it, and its
// result is always consumed (keep).
//
//go:noinline
func spin(n int64) uint64 {
	x := uint64(spinSeed)
	var acc uint64
	for ; n > 0; n-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		acc = (acc ^ x) * 0xBF58476D1CE4E5B9
	}
	return acc ^ x
}

// sinkMatches counts Spin results equal to sinkMatch. The comparison makes
// every result used, so the loop cannot be eliminated as dead code; the
// counter is (practically) never written, so concurrent requests do not
// share a written cache line.
var sinkMatches atomic.Uint64

const sinkMatch = 0x5EED5EED5EED5EED

// keep consumes a Spin result.
func keep(r uint64) {
	if r == sinkMatch {
		sinkMatches.Add(1)
	}
}

// Calibration parameters. A sample takes about calTarget; the whole
// calibration (warm-up plus calSamples samples) about 25 ms.
const (
	calWarmIters  = 1 << 18
	calWarmRounds = 3
	calSamples    = 7
	calTarget     = 3 * time.Millisecond
	calMinIters   = 1 << 12
	calMaxIters   = 1 << 26
)

// calibrate measures the cost of one iteration of spin on this machine:
// a few warm-up rounds (which also pick the sample size, ≈ calTarget per
// sample), then calSamples timed samples of one fixed iteration count. The
// median is robust against a sample that was preempted.
func calibrate() Calibration {
	best := time.Duration(math.MaxInt64)
	for range calWarmRounds {
		t0 := time.Now()
		keep(spin(calWarmIters))
		best = min(best, time.Since(t0))
	}
	est := max(float64(best)/calWarmIters, 1e-3)
	iters := int64(min(max(math.Round(float64(calTarget)/est), calMinIters), calMaxIters))

	var ns [calSamples]float64
	for i := range ns {
		t0 := time.Now()
		keep(spin(iters))
		ns[i] = max(float64(time.Since(t0))/float64(iters), 1e-3)
	}
	slices.Sort(ns[:])
	return Calibration{
		NsPerIter:  ns[calSamples/2],
		Min:        ns[0],
		Max:        ns[calSamples-1],
		Samples:    calSamples,
		Iterations: int(iters),
		Measured:   true,
	}
}

// Iterations returns the number of Spin iterations that make d of CPU work
// on the calibrated machine: round(d / NsPerIter), 0 for d <= 0.
func (s *Service) Iterations(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	n := math.Round(float64(d) / s.cal.NsPerIter)
	if n >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

// Spin performs iters iterations of the CPU work and returns the result of
// the computation, which depends only on iters. It is a fixed amount of
// computation, not a wall-clock spin: under CPU contention (more runnable
// threads than cores) a request's wall time grows while its work does not,
// and that is intended — the models are compared on how they schedule a
// fixed demand, which a clock-based spin would hide by shrinking the work.
func (s *Service) Spin(iters int64) uint64 { return spin(iters) }

// Work performs cpu of CPU work (Spin(Iterations(cpu))) and then blocks the
// calling OS thread for block in a system call, modelling a synchronous call
// to a back end. Either may be zero.
func (s *Service) Work(cpu, block time.Duration) {
	if cpu > 0 {
		keep(spin(s.Iterations(cpu)))
	}
	if block > 0 {
		sleep(block)
	}
}
