package loadgen

import (
	"math"
	"math/rand/v2"
)

// arrivals is one worker's share of the global open-loop arrival process:
// the intended times of its batches, in nanoseconds after the schedule's
// start. It is generated lazily, one batch ahead, so a schedule that runs
// behind (a server that cannot keep up) costs no memory: the generator's
// position simply lags the clock.
//
// How the global rate is split, exactly:
//   - Constant: worker w of W sends batch k at (w + k·W)·T, with T =
//     Depth/Rate the global batch interval, so the workers' batches
//     interleave into exactly one every T.
//   - Poisson: each worker runs an independent Poisson process of rate
//     Rate/(W·Depth) batches per second; by the superposition theorem
//     their union is a Poisson process of rate Rate/Depth (with one worker
//     it is literally that process).
//   - OnOff: the Poisson process runs on a clock that only advances during
//     on periods ("on-time"); on-time u maps to real time
//     floor(u/On)·(On+Off) + u mod On, so every worker's on periods line up.
//
// Within a worker the batches go to its connections round-robin (pacer), so
// with Rate below the connection count each connection still gets every
// C-th arrival: no rounding of a per-connection rate to zero, no lock-up,
// no synchronized bursts.
type arrivals struct {
	kind    Arrival
	gap     float64 // mean gap between this worker's batches, ns
	phase   float64 // Constant: this worker's offset, ns
	on, off float64 // OnOff periods, ns
	rng     *rand.Rand
	k       int64   // batches generated so far
	u       float64 // Poisson/OnOff: position in (on-)time, ns
	next    int64   // the next batch's intended time, ns after the start
}

// newArrivals returns worker w's (of workers) arrival process for cfg
// (defaults applied, open loop), seeded from cfg.Seed, positioned at its
// first batch.
func newArrivals(cfg *Config, w, workers int) *arrivals {
	batchGap := float64(cfg.Depth) / cfg.Rate * 1e9 // global, ns
	a := &arrivals{
		kind:  cfg.Arrival,
		gap:   batchGap * float64(workers),
		phase: batchGap * float64(w),
		on:    float64(cfg.On),
		off:   float64(cfg.Off),
		rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(w)<<1)),
	}
	a.advance()
	return a
}

// advance moves to the next batch. It does not allocate.
func (a *arrivals) advance() {
	var t float64
	switch a.kind {
	case Constant:
		t = a.phase + float64(a.k)*a.gap // from k, not summed: no drift
	case OnOff:
		a.u += a.rng.ExpFloat64() * a.gap
		t = math.Floor(a.u/a.on)*(a.on+a.off) + math.Mod(a.u, a.on)
	default: // Poisson
		a.u += a.rng.ExpFloat64() * a.gap
		t = a.u
	}
	a.k++
	a.next = int64(math.Round(t))
}

// pacer assigns a worker's batches to its connections: round-robin,
// skipping a connection that has no room (at its in-flight bound, or
// down). When none has room the batch waits; the caller counts it as held.
type pacer struct {
	rr int // the connection the next batch tries first
}

// pick returns the connection of n for the next batch, the first in
// round-robin order for which hasRoom is true, or -1 if none has room.
// It advances the round-robin position past the connection chosen.
func (p *pacer) pick(n int, hasRoom func(int) bool) int {
	for i := 0; i < n; i++ {
		c := p.rr + i
		if c >= n {
			c -= n
		}
		if hasRoom(c) {
			p.rr = c + 1
			if p.rr == n {
				p.rr = 0
			}
			return c
		}
	}
	return -1
}
