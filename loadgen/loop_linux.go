package loadgen

import (
	"time"

	"golang.org/x/sys/unix"

	"concbench/internal/sysstat"
)

// prime sends one request on every connection and waits for the answers,
// so that every connection (and the server's side of it) has carried a
// request before the schedule starts. Any failure is returned: a server
// that cannot answer one request per connection cannot be measured.
func (w *worker) prime() error {
	// The worker's thread is locked and never unlocked (it exits with the
	// worker), so its timer slack can be changed for good: the default
	// 50 µs would let every timed wait wake up to 50 µs late by design.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	w.probeLateness()
	for _, c := range w.conns {
		w.enqueue(c, 0, flagPrime)
	}
	w.loop(false)
	for _, c := range w.conns {
		c.carried = 0 // a priming request is not one of ConnRequests
	}
	if w.fatal != nil {
		return w.fatal
	}
	return w.primeErr
}

// run drives the schedule from w.start until the window ends and every
// request has been answered, failed or timed out.
func (w *worker) run() {
	if d := w.start - w.clock(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	if !w.closed && !w.limited {
		w.slicing = true
		w.sl.next = w.measureAt
		if w.cfg.Arrival == Poisson {
			w.sample.init(w.measureAt, w.endAt, w.arr.gap)
		}
	}
	if w.cfg.stall.every > 0 {
		w.nextStall = w.measureAt + int64(w.cfg.stall.every)
	}
	w.sending = true
	w.nextTick = 0
	if w.closed {
		now := w.clock()
		for _, c := range w.conns {
			w.fill(c, now)
		}
	}
	w.loop(true)
	// Requests left waiting to be resent (no connection was up to take
	// them in the drain) were never answered.
	for w.retry.n > 0 {
		if e := w.retry.pop(); e.flags&flagMeasured != 0 {
			w.st.unsent++
		}
	}
	now := w.clock()
	if w.measuring {
		if ru, err := sysstat.Thread(); err == nil {
			w.st.userNs = ru.UserNs - w.ru0.UserNs
			w.st.sysNs = ru.SystemNs - w.ru0.SystemNs
			w.st.nvcsw = ru.Voluntary - w.ru0.Voluntary
			w.st.nivcsw = ru.Involuntary - w.ru0.Involuntary
		}
		if q, err := sysstat.ThreadRunQueueNs(); err == nil && w.runQueue0 >= 0 {
			w.st.runQueueNs = q - w.runQueue0
		}
		w.st.spanNs = now - w.measureAt
	}
	if w.iv != nil {
		w.iv.finish(now) // also when the worker never measured: the collector must hear it is done
	}
}

// loop is the event loop: send what is due, flush, wait in epoll until the
// next deadline (PollSleep: polling instead of sleeping within the spin
// margin of a scheduled send; PollBusy: polling always), handle the
// events. It returns when nothing is left to send or to wait for (or the
// run is stopped). running is false while priming.
func (w *worker) loop(running bool) {
	for {
		now := w.clock()
		if w.stop.Load() {
			w.interrupt()
			return
		}
		if now >= w.nextTick {
			w.tick(now, running)
		}
		if w.nextStall > 0 && now >= w.nextStall && w.sending {
			w.stallNow()
			continue
		}
		worked := false
		if w.sending && !w.closed {
			worked = w.pump(now)
		}
		if !w.sending && w.retry.n > 0 && w.resendInDrain() {
			worked = true
		}
		if len(w.dirty) > 0 {
			w.flushAll()
			worked = true
		}
		if w.fatal != nil || !w.sending && w.inflight == 0 && w.connecting == 0 {
			return
		}
		timeout := w.waitTime(now)
		t0 := w.clock()
		if worked && w.measuring {
			w.st.busyNs += t0 - now
		}
		n := w.wait(timeout)
		if n == 0 {
			switch {
			case timeout > 0:
				// A timed wait that timed out: how late did it wake?
				if late := w.clock() - t0 - timeout; late >= 0 {
					w.late.add(late)
				}
			case worked:
				w.prevIdle = 0
			default:
				// An idle iteration: its length is the loop's own cost,
				// unless the machine stalled the thread meanwhile.
				if w.prevIdle != 0 && w.measuring {
					w.idle.add(now - w.prevIdle)
				}
				w.prevIdle = now
			}
			continue
		}
		w.prevIdle = 0
		t1 := w.clock()
		for i := range n {
			w.event(&w.events[i])
			if w.sending && !w.closed && i+1 < n {
				// Between events, send what fell due while handling them:
				// a batch of responses must not hold back the schedule.
				if now := w.clock(); w.start+w.arr.next <= now && !w.blocked {
					if w.pump(now) && len(w.dirty) > 0 {
						w.flushAll()
					}
				}
			}
		}
		if w.measuring {
			// A poll that returned events is work too: a busy worker's
			// cost per request includes it (the generator's ceiling is
			// its rate over its busy share; harness).
			from := t1
			if timeout == 0 {
				from = t0
			}
			w.st.busyNs += w.clock() - from
		}
	}
}

// tick does what is checked by time rather than by event: the start of the
// measurement, the end of the window, interval rotation, reconnects and
// request timeouts; and sets the next tick.
func (w *worker) tick(now int64, running bool) {
	if running {
		if !w.measuring && now >= w.measureAt {
			w.measuring = true
			w.ru0, _ = sysstat.Thread() // zero if it fails
			w.runQueue0 = -1
			if q, err := sysstat.ThreadRunQueueNs(); err == nil {
				w.runQueue0 = q
			}
		}
		if w.slicing && w.measuring {
			w.sampleSlices(now)
		}
		if w.sending && now >= w.endAt {
			if !w.closed {
				// Send what fell due before the window's end first: only
				// what could not be sent (every connection full) is unsent.
				w.pump(now)
			}
			if w.sending {
				w.stopSending()
			}
		}
		if w.iv != nil && w.measuring && now >= w.iv.end {
			w.iv.rotate(now)
		}
	}
	if w.sending && w.down > 0 && now >= w.nextRetry {
		w.reconnect(now)
	}
	anyUp := false
	for _, c := range w.conns {
		switch {
		case c.state == connUp && c.fly.n > c.unsent && now-c.fly.at(0).sent > w.timeout:
			w.fail(c, errTimeout)
		case c.state == connConnecting && now-c.connStart > w.timeout:
			w.connectFailed(c)
		}
		anyUp = anyUp || c.state == connUp
	}
	if anyUp || w.lastUp == 0 {
		w.lastUp = now
	} else if w.sending && now-w.lastUp > w.timeout {
		w.unreachable = true // every connection down for Timeout: give up
		w.stopSending()
	}
	next := now + tickEvery
	if running {
		if !w.measuring {
			next = min(next, w.measureAt)
		}
		if w.sending {
			next = min(next, w.endAt)
		}
		if w.iv != nil && w.measuring {
			next = min(next, w.iv.end)
		}
		if w.slicing && w.sl.sampled <= numSlices {
			next = min(next, w.sl.next)
		}
	}
	if w.sending && w.down > 0 {
		next = min(next, w.nextRetry)
	}
	w.nextTick = next
	if w.autoSpin && !w.busy {
		w.spin = spinFor(&w.late) // keeps measuring: every timed wait counts
	}
}

// event handles one epoll event.
func (w *worker) event(ev *unix.EpollEvent) {
	if ev.Fd < 0 {
		w.wake.Drain()
		return
	}
	c := w.conns[ev.Fd]
	if uint32(ev.Pad) != c.gen {
		return // the connection was closed since the kernel queued this
	}
	switch c.state {
	case connConnecting:
		w.connected(c)
	case connUp:
		if ev.Events&unix.EPOLLOUT != 0 && c.writing {
			w.write(c)
			if c.state != connUp {
				return
			}
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			w.read(c)
		}
	}
}

// stopSending ends the schedule: in open loop, the window's arrivals not
// yet sent are counted as unsent (and scheduled).
func (w *worker) stopSending() {
	w.sending = false
	w.blocked = false
	if !w.closed && !w.limited {
		for t := w.start + w.arr.next; t < w.endAt; t = w.start + w.arr.next {
			if t >= w.measureAt {
				w.st.scheduled += int64(w.depth)
				w.st.unsent += int64(w.depth)
			}
			w.arr.advance()
		}
	}
}

// interrupt abandons the run: requests in flight are counted as
// interrupted.
func (w *worker) interrupt() {
	if w.sending {
		w.stopSending()
	}
	for _, c := range w.conns {
		written := c.fly.n - c.unsent
		for i := range c.fly.n {
			e := c.fly.at(i)
			if e.flags&flagMeasured != 0 {
				w.st.errs[errInterrupted]++
			}
			if i < written {
				w.unanswered(e)
			}
		}
		w.inflight -= c.fly.n
		w.written.Add(-int64(c.fly.n - c.unsent))
		c.fly.n, c.fly.head, c.unsent = 0, 0, 0
	}
}
