package loadgen

import (
	"math/rand/v2"

	"golang.org/x/sys/unix"

	"concbench/wire"
)

// killSeed separates the kills' random stream (Config.KillEvery) from
// the arrivals' and the mix's, so that killing changes neither.
const killSeed = 0x6b696c6c

// newKiller returns worker idx's random stream for its kills.
func newKiller(cfg *Config, idx int) *rand.Rand {
	return rand.New(rand.NewPCG(cfg.Seed^killSeed, uint64(idx)))
}

// nextKill returns how many responses to read before the next kill:
// uniformly 1 to 2·KillEvery−1, KillEvery on average.
func (w *worker) nextKill() int { return 1 + w.killRNG.IntN(2*w.cfg.KillEvery-1) }

// countKill counts a response read on c toward the next kill, chooses a
// connection to kill when one is due, and kills c if it was chosen and
// may be killed now. It reports whether c was killed. Once the worker
// has stopped sending (the drain), nothing is killed: connections are
// not reopened in the drain, and a connection left up answers its
// requests (a kill there once left them unsent:
// TestRefusedConnectionResent, on a fresh-clone .ci/run).
func (w *worker) countKill(c *conn) bool {
	if !w.sending {
		return false
	}
	if w.killLeft--; w.killLeft <= 0 {
		w.killLeft = w.nextKill()
		w.choose(c)
	}
	if c.killing && !c.moneyInFlight() {
		w.kill(c)
		return true
	}
	return false
}

// choose picks one of the worker's connections at random to be killed;
// one that is not up, or chosen already, is spared this time. From now
// on it sends nothing (hasRoom, fill), and it is killed once it has no
// deposit, withdrawal or transfer in flight: at once if it has none and
// is not cur, the connection whose response is being handled (whose
// caller kills it).
func (w *worker) choose(cur *conn) {
	v := w.conns[w.killRNG.IntN(len(w.conns))]
	if v.state != connUp || v.killing {
		return
	}
	v.killing = true
	if v != cur && !v.moneyInFlight() {
		w.kill(v)
	}
}

// moneyInFlight reports whether a deposit, withdrawal or transfer has
// been written on c and not answered. Only a connection chosen to be
// killed asks, once per response it reads: a linear scan.
func (c *conn) moneyInFlight() bool {
	for i := range c.fly.n - c.unsent {
		if op := c.fly.at(i).op; changesMoney(op) || op == wire.OpTransfer {
			return true
		}
	}
	return false
}

// kill closes c abruptly, with a reset (SO_LINGER 0), as a client that
// vanishes mid-pipeline: its requests written and unanswered are
// abandoned (no money among them: see choose), those not yet written go
// to be sent on another connection, and c is reopened at once.
func (w *worker) kill(c *conn) {
	w.st.kills++
	written := c.fly.n - c.unsent
	w.written.Add(-int64(written))
	for i := range c.fly.n {
		e := c.fly.at(i)
		switch {
		case i >= written:
			if e.flags&flagPrime == 0 {
				w.retry.push(*e)
			}
		case e.flags&flagMeasured != 0:
			w.st.abandoned++
		}
	}
	w.inflight -= c.fly.n
	c.fly.n, c.fly.head, c.unsent = 0, 0, 0
	unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1})
	w.closeConn(c, 0)
}
