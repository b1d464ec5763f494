package loadgen

import "concbench/wire"

// entry is one request in flight (or waiting to be resent).
type entry struct {
	id       uint64
	intended int64 // when the schedule meant it to leave, ns since the run's base
	sent     int64 // when it was handed to write(2); 0 until then
	size     int32 // OpWork response size asked for
	op       wire.Op
	flags    uint8
	prio     uint8 // its priority, for Config.PriorityClasses
	// dep and wd are, for a total with Config.LedgerMoney, the deposits
	// and withdrawals acknowledged across the run when it was sent: the
	// least it can count (see checkTotal).
	dep, wd int64
}

// Entry flags.
const (
	flagMeasured uint8 = 1 << iota // in the measurement window (not warm-up)
	flagHeld                       // its batch waited for the in-flight bound
	flagPrime                      // the connection's priming request
	flagResent                     // re-issued after a server close
	flagFirst                      // the first request of its batch (its arrival)
	flagQueued                     // other requests were in flight when it was sent
)

// ring is a FIFO of entries: a connection's requests in flight, in the
// order their responses must arrive. It grows by doubling (so capacity
// settles at the high-water mark: no allocation in steady state); the
// caller bounds its length.
type ring struct {
	buf  []entry // length a power of two, or 0
	head int
	n    int
}

func (r *ring) push(e entry) {
	if r.n == len(r.buf) {
		nb := make([]entry, max(8, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = *r.at(i)
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// pop removes and returns the oldest entry; the ring must not be empty.
func (r *ring) pop() entry {
	e := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return e
}

// at returns the i-th oldest entry.
func (r *ring) at(i int) *entry { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// contains reports whether an entry has the id (a linear scan: error path).
func (r *ring) contains(id uint64) bool {
	for i := range r.n {
		if r.at(i).id == id {
			return true
		}
	}
	return false
}
