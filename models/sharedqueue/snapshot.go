package sharedqueue

import (
	"slices"

	"concbench/internal/futex"
)

// snapshot is one Total in progress: a consistent global snapshot of the
// shards, taken with the Chandy–Lamport marker algorithm over the
// channels that carry money between them, as Active Object's Total does
// between its servants.
//
// The channel from shard i to shard j is j's strand restricted to the
// calls i's handlers send it (credits, markers): i's handlers run one at a
// time and send in their order, and j's strand runs them in arrival order
// (a handler dispatched at once never overtakes one that waits, see
// strand), so the channel is FIFO.
//
// Every shard records its state — the sum of its balances — once: when
// the snapshot's start reaches it, or the first marker, whichever comes
// first; on recording it posts a marker to every other shard. Money that
// reaches j from i after j recorded and before i's marker reaches j was in
// flight at the cut and is added to j's part. A part is complete when the
// markers of all the others have arrived, and the last part completes the
// Total with the sum: balances plus money in flight at one consistent
// cut, the ledger's money then. Once no transfer is in flight it is
// exactly the sum of the balances.
//
// Note: summing each shard's balances plus what it sent minus what it
// received would always come out "right", being every shard's initial
// money plus its deposits minus its withdrawals, and so would hide money
// lost between shards (see Active Object's snapshot); holding every strand
// at once would stop the whole ledger for each Total.
type snapshot struct {
	total *call      // the Total's call, finished with the sum
	parts []snapPart // by shard; each touched only in its shard's strand

	mu        futex.Mutex // guards remaining and sum
	remaining int         // parts not yet contributed
	sum       int64
}

// snapPart is one shard's part of a snapshot.
type snapPart struct {
	recorded bool
	open     []bool // by source shard: its marker has not arrived yet
	waiting  int    // markers still expected
	value    int64  // balances at the cut plus money arrived on open channels
}

// startSnapshot begins a Total: a start call to every shard.
func (s *Server) startSnapshot(total *call) {
	sn := &snapshot{total: total, parts: make([]snapPart, len(s.shards)), remaining: len(s.shards)}
	for _, sh := range s.shards {
		sh.dispatch(&call{kind: kindSnapStart, snap: sn})
	}
}

// record records sh's part of sn, unless it has, and posts its markers.
// from is the shard whose marker brought it, or -1 for the start.
func (sh *shard) record(sn *snapshot, from int) {
	p := &sn.parts[sh.idx]
	if p.recorded {
		return
	}
	p.recorded = true
	p.value = sh.ledger.Total()
	p.open = make([]bool, len(sn.parts))
	for i := range p.open {
		p.open[i] = i != sh.idx && i != from
		if p.open[i] {
			p.waiting++
		}
	}
	for _, o := range sh.s.shards {
		if o != sh {
			o.post(&call{kind: kindMarker, snap: sn, from: sh.idx})
		}
	}
	if p.waiting == 0 {
		sn.contribute(p.value)
		return
	}
	sh.snaps = append(sh.snaps, sn)
}

// marker handles the arrival of from's marker for sn.
func (sh *shard) marker(sn *snapshot, from int) {
	p := &sn.parts[sh.idx]
	if !p.recorded {
		sh.record(sn, from)
		return
	}
	p.open[from] = false
	p.waiting--
	if p.waiting == 0 {
		sh.snaps = slices.DeleteFunc(sh.snaps, func(x *snapshot) bool { return x == sn })
		sn.contribute(p.value)
	}
}

// receive accounts amt, arriving from shard src, to the snapshots that
// record the channel from src.
func (sh *shard) receive(src int, amt int64) {
	for _, sn := range sh.snaps {
		if p := &sn.parts[sh.idx]; p.open[src] {
			p.value += amt
		}
	}
}

// contribute adds a complete part; the last one finishes the Total. A part
// is added and counted in one critical section, so the contributor that
// counts the last part reads a sum that holds every part.
func (sn *snapshot) contribute(v int64) {
	sn.mu.Lock()
	sn.sum += v
	sn.remaining--
	last, sum := sn.remaining == 0, sn.sum
	sn.mu.Unlock()
	if last {
		sn.total.finish(sum, nil)
	}
}
