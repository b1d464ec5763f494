package loadgen

import (
	"golang.org/x/sys/unix"

	"concbench/handleset"
	"concbench/wire"
)

// pump sends the open loop's due batches (and requests waiting to be
// resent), each to the next connection with room, and reports whether it
// sent any. A due batch that finds no connection with room waits; when it
// is sent it is marked held, as is every batch that was due while no
// connection had room. The schedule behind it keeps its intended times.
func (w *worker) pump(now int64) bool {
	sent := false
	for w.sending {
		t := w.start + w.arr.next
		due := t <= now
		if due && (!w.limited && t >= w.endAt || w.limited && t >= w.measureAt && w.issued >= w.quota) {
			// The window is over; in Requests mode it ends where the
			// first batch beyond the quota would have started.
			w.st.windowEnd = t
			w.stopSending()
			return sent
		}
		if w.retry.n == 0 && !due {
			w.blocked = false
			return sent
		}
		i := w.pace.pick(len(w.conns), w.hasRoom)
		if i < 0 {
			w.blocked = true
			if due {
				w.lastBlocked = now
			}
			return sent
		}
		w.blocked = false
		c := w.conns[i]
		sent = true
		if w.retry.n > 0 {
			w.resend(c, w.retry.pop())
			continue
		}
		var flags uint8
		if t <= w.lastBlocked {
			flags |= flagHeld
		}
		k := int64(w.depth)
		if t >= w.measureAt {
			flags |= flagMeasured
			if w.limited {
				k = min(k, w.quota-w.issued)
				w.issued += k
			}
			w.st.scheduled += k
		}
		for i := range k {
			if i == 0 {
				w.enqueue(c, t, flags|flagFirst)
			} else {
				w.enqueue(c, t, flags)
			}
		}
		w.arr.advance()
	}
	return sent
}

// resendInDrain re-issues, once the schedule has ended, the requests
// waiting to be resent — a server refused or closed their connection in
// the drain — on connections with room, and reports whether it sent any.
// They were scheduled (or issued, in closed loop) in the window, so the
// generator owes them an answer; each keeps its intended time, so its
// corrected latency includes the lost attempt. What finds no connection
// up is counted unsent at the end (run).
func (w *worker) resendInDrain() bool {
	sent := false
	for w.retry.n > 0 {
		i := w.pace.pick(len(w.conns), w.hasRoom)
		if i < 0 {
			break
		}
		w.resend(w.conns[i], w.retry.pop())
		sent = true
	}
	return sent
}

// fill tops a closed-loop connection up to Outstanding in flight, a batch
// of Depth at a time (resends first).
func (w *worker) fill(c *conn, now int64) {
	for w.sending && c.state == connUp && !c.killing && !w.spent(c) && c.fly.n+w.depth <= w.maxFly {
		if w.retry.n > 0 {
			w.resend(c, w.retry.pop())
			continue
		}
		var flags uint8
		k := int64(w.depth)
		if now >= w.measureAt {
			if w.limited && w.issued >= w.quota {
				w.stopSending()
				return
			}
			flags = flagMeasured
			if w.limited {
				k = min(k, w.quota-w.issued)
				w.issued += k
			}
		}
		for range k {
			w.enqueue(c, now, flags)
		}
	}
}

// enqueue draws a request from the mix (a plain work request for priming),
// appends it to c's output and its entry to c's in-flight ring, and marks c
// for flushing. It does not allocate in steady state.
func (w *worker) enqueue(c *conn, intended int64, flags uint8) {
	w.req.ID = w.nextID
	w.nextID += uint64(w.n)
	if flags&flagPrime != 0 {
		w.req = wire.Request{ID: w.req.ID, Priority: primePriority(w.cfg)}
	} else {
		w.mix.fill(&w.req)
	}
	c.out = w.codec.AppendRequest(c.out, &w.req)
	c.fly.push(entry{id: w.req.ID, intended: intended, size: int32(w.req.Size), op: w.req.Op, flags: flags, prio: w.req.Priority})
	c.carried++
	w.inflight++
	c.unsent++
	if !c.dirty {
		c.dirty = true
		w.dirty = append(w.dirty, c)
	}
}

// resend re-issues a request that was never answered because its
// connection closed first (or never written because its connection
// failed): a fresh request with a new id, keeping the intended time and
// flags, so its corrected latency includes the lost attempt.
func (w *worker) resend(c *conn, e entry) {
	w.enqueue(c, e.intended, e.flags)
}

// flushAll flushes every connection marked dirty.
func (w *worker) flushAll() {
	for _, c := range w.dirty {
		c.dirty = false
		if c.state == connUp {
			w.flush(c)
		}
	}
	w.dirty = w.dirty[:0]
}

// flush stamps c's new requests with the actual send time (and, in closed
// loop, the intended one), records their send lag, and writes c's output.
func (w *worker) flush(c *conn) {
	if c.unsent > 0 {
		now := w.clock()
		others := w.written.Load() > 0
		w.written.Add(int64(c.unsent))
		for i := c.fly.n - c.unsent; i < c.fly.n; i++ {
			e := c.fly.at(i)
			e.sent = now
			if others {
				e.flags |= flagQueued
			}
			others = true // the rest of the batch follows this one
			if w.closed {
				e.intended = now
			}
			if w.money != nil {
				w.money.sent(e)
			}
			if e.flags&flagMeasured == 0 {
				continue
			}
			if e.flags&flagResent == 0 {
				w.st.sent++ // a resend was counted at its first send
			}
			if w.closed {
				continue
			}
			if e.flags&(flagHeld|flagResent) != 0 {
				if e.flags&flagHeld != 0 {
					w.st.held++
				}
				w.heldLag.record(now - e.intended)
			} else {
				w.lag.record(now - e.intended)
			}
			if e.flags&flagFirst != 0 && w.sample.on {
				w.sample.add(e.intended, now, e.flags&(flagHeld|flagResent) == 0)
			}
		}
		c.unsent = 0
	}
	w.write(c)
}

// write writes c's pending output until done or the socket is full; then
// it waits for EPOLLOUT.
func (w *worker) write(c *conn) {
	for c.outOff < len(c.out) {
		t0 := w.clock()
		n, err := handleset.Write(c.fd, c.out[c.outOff:])
		if w.measuring {
			// On loopback a send runs the server's receive path and its
			// wake-up in this thread: the floor of this generator's
			// punctuality, reported (Timing.SendCall).
			w.sendCall.add(w.clock() - t0)
		}
		switch {
		case handleset.IsWouldBlock(err):
			if !c.writing {
				c.writing = true
				w.rearm(c, unix.EPOLLIN|unix.EPOLLOUT)
			}
			return
		case err != nil:
			w.fail(c, errWrite)
			return
		}
		c.outOff += n
	}
	c.out, c.outOff = c.out[:0], 0
	if c.writing {
		c.writing = false
		w.rearm(c, unix.EPOLLIN)
	}
}

// rearm changes c's interest; failing that, the connection is unusable.
func (w *worker) rearm(c *conn, events uint32) {
	if err := w.ctl(c, unix.EPOLL_CTL_MOD, events); err != nil {
		w.fail(c, errWrite)
	}
}
