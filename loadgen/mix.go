package loadgen

import (
	"math/rand/v2"
	"time"

	"concbench/wire"
)

// mixer draws the requests of one worker from the configured work and
// operation mix. It has its own random stream (not the arrival process's),
// so changing the mix does not change the schedule.
type mixer struct {
	rng                    *rand.Rand
	cum                    [6]float64 // cumulative op weights over their sum; the last is exactly 1
	cpu, block, size, prio Dist
	accounts               uint64
	amount                 int64
	wait                   time.Duration // a withdrawal's guard timeout (Config.WithdrawWait)
	clamped                int64         // draws clamped to a limit
}

// newMixer returns worker w's mixer for cfg (defaults applied).
func newMixer(cfg *Config, w int) *mixer {
	m := &mixer{
		rng:      rand.New(rand.NewPCG(cfg.Seed, uint64(w)<<1|1)),
		cpu:      cfg.CPU,
		block:    cfg.Block,
		size:     cfg.Size,
		prio:     cfg.Priority,
		accounts: uint64(cfg.Accounts),
		amount:   cfg.Amount,
		wait:     cfg.WithdrawWait,
	}
	weights := cfg.Ops.weights()
	sum := 0.0
	for _, x := range weights {
		sum += x
	}
	acc := 0.0
	for i, x := range weights {
		acc += x
		m.cum[i] = acc / sum
	}
	return m
}

// fill sets r's operation and work from the mix; it leaves r.ID alone and
// clears everything else. It does not allocate.
func (m *mixer) fill(r *wire.Request) {
	id := r.ID
	*r = wire.Request{ID: id}
	u := m.rng.Float64()
	for i, c := range m.cum {
		if u < c {
			r.Op = wire.Op(i)
			break
		}
	}
	r.CPU = time.Duration(m.draw(m.cpu, int64(wire.DefaultMaxWork)))
	r.Block = time.Duration(m.draw(m.block, int64(wire.DefaultMaxWork)))
	r.Size = int(m.draw(m.size, wire.DefaultMaxPayload))
	r.Priority = uint8(m.draw(m.prio, 255))
	switch r.Op {
	case wire.OpBalance, wire.OpDeposit, wire.OpWithdraw:
		r.Account = uint32(m.rng.Uint64N(m.accounts))
	case wire.OpTransfer:
		r.Account = uint32(m.rng.Uint64N(m.accounts))
		r.To = uint32(m.rng.Uint64N(m.accounts - 1))
		if r.To >= r.Account {
			r.To++ // distinct from Account, uniform over the others
		}
	}
	if r.Op == wire.OpDeposit || r.Op == wire.OpWithdraw || r.Op == wire.OpTransfer {
		r.Amount = m.amount
	}
	if r.Op == wire.OpWithdraw {
		r.Timeout = m.wait
	}
}

func (m *mixer) draw(d Dist, max int64) int64 {
	v, clamped := d.draw(m.rng, max)
	if clamped {
		m.clamped++
	}
	return v
}
