package loadgen

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"concbench/wire"
)

// read reads what c has, decodes and checks every complete response, and
// keeps the partial rest. The responses are timestamped with the kernel's
// receive time of the data (SO_TIMESTAMPNS), so that a worker busy with
// other connections, or waking from a sleep, does not add its own delay
// to their latency; without a kernel timestamp, with the time of the read.
func (w *worker) read(c *conn) {
	if len(c.in) == cap(c.in) {
		nb := make([]byte, len(c.in), 2*cap(c.in))
		copy(nb, c.in)
		c.in = nb
	}
	n, kts, err := w.recv(c.fd, c.in[len(c.in):cap(c.in)])
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		w.fail(c, errRead)
		return
	case n == 0:
		w.eof(c)
		return
	}
	at := w.clock()
	w.atKernel = false
	if kts != 0 {
		if k := kts - w.realBase; k <= at {
			if w.measuring {
				w.rxLag.record(at - k)
			}
			at = k
			w.atKernel = true
		}
		w.st.kernelStamped++
	} else {
		w.st.userStamped++
	}
	c.in = c.in[:len(c.in)+n]
	off := 0
	for off < len(c.in) {
		m, err := w.codec.DecodeResponse(c.in[off:], &w.resp)
		if err != nil {
			w.fail(c, errMalformedResponse)
			return
		}
		if m == 0 {
			break
		}
		off += m
		if !w.response(c, at) {
			return // the connection is closed
		}
	}
	if off > 0 {
		c.in = c.in[:copy(c.in, c.in[off:])]
	}
}

// recv reads from the non-blocking socket fd into p with recvmsg(2) and
// returns the bytes read and the kernel's receive timestamp of the data
// (CLOCK_REALTIME ns; 0 if the kernel gave none). The message header and
// its buffers are the worker's, reused: recv does not allocate. A raw
// system call: the socket never blocks.
func (w *worker) recv(fd int, p []byte) (int, int64, error) {
	w.iov.Base = &p[0]
	w.iov.SetLen(len(p))
	w.msg.Iov = &w.iov
	w.msg.SetIovlen(1)
	w.msg.Control = &w.oob[0]
	w.msg.SetControllen(len(w.oob))
	w.msg.Flags = 0
	var r uintptr
	for {
		var e unix.Errno
		r, _, e = unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&w.msg)), unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, 0, e
		}
		break
	}
	var ts int64
	ctl := w.oob[:w.msg.Controllen]
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(ctl) {
			break
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && l >= unix.SizeofCmsghdr+int(unsafe.Sizeof(unix.Timespec{})) {
			t := (*unix.Timespec)(unsafe.Pointer(&ctl[unix.SizeofCmsghdr]))
			ts = t.Nano()
		}
		l = (l + 7) &^ 7 // CMSG_ALIGN on 64-bit
		if l >= len(ctl) {
			break
		}
		ctl = ctl[l:]
	}
	return int(r), ts, nil
}

// response matches w.resp to the oldest request in flight on c, checks it,
// and records its latency or its failure. It reports whether c is still
// open.
func (w *worker) response(c *conn, at int64) bool {
	if w.cfg.Throttle > 0 {
		for until := w.clock() + int64(w.cfg.Throttle); w.clock() < until; {
		}
	}
	if w.isRefusal(c) {
		w.refused(c)
		return false
	}
	c.fresh = false
	if w.duplicate(c) {
		// A second answer to a request answered already: counted (a
		// response, not a request) and skipped, so that the answers
		// behind it still meet their requests.
		w.st.errs[errVerifyDuplicate]++
		return true
	}
	if c.fly.n == c.unsent {
		// A response to no request: counted (itself, not a request),
		// and the connection, whose stream cannot be trusted, reopened.
		w.st.errs[errUnexpectedResponse]++
		w.fail(c, errUnexpectedResponse)
		return false
	}
	e := c.fly.pop()
	w.inflight--
	w.written.Add(-1)
	kind := w.check(c, &e)
	if w.resp.ID == e.id {
		c.remember(e.id)
	}
	w.account(&e, kind)
	switch {
	case e.flags&flagPrime != 0:
		w.primed(c, &e, kind)
	case e.flags&flagMeasured == 0:
		w.st.warmup++
		if kind != kindOK {
			w.st.warmupErrors++
		}
	default:
		at = w.measured(&e, kind, at)
	}
	if w.resp.Close {
		w.serverClose(c)
		return false
	}
	if w.killRNG != nil && w.sending && w.countKill(c) {
		return false
	}
	if w.spent(c) && c.fly.n == 0 && w.sending {
		w.recycle(c)
		return false
	}
	if w.closed {
		w.fill(c, at)
	}
	return true
}

// duplicate reports whether w.resp repeats the id of a request c has
// had its answer to, and is not the answer to c's oldest request in
// flight (ids are checked with VerifyFull and VerifyAuto only).
func (w *worker) duplicate(c *conn) bool {
	id := w.resp.ID
	switch {
	case w.cfg.Verify != VerifyFull && w.cfg.Verify != VerifyAuto || !c.wasAnswered(id):
		return false
	case c.fly.n == c.unsent:
		return true
	}
	return c.fly.at(0).id != id
}

// primed checks the answer w.resp to c's priming request e, of kind:
// the first failure becomes w.primeErr, naming the server's own reason
// when it gave one.
func (w *worker) primed(c *conn, e *entry, kind errKind) {
	switch {
	case kind == kindOK || w.primeErr != nil:
	case w.resp.Status != wire.StatusOK && len(w.resp.Payload) > 0:
		// The server answered, and said no (thread per connection at
		// its cap answers 503 with its reason): name its reason rather
		// than suggest a foreign server.
		w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d: the server answered status %s: %s",
			c.idx, w.idx, e.id, w.resp.Status, reasonText(w.resp.Payload))
	default:
		w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d: %s (response id %d, status %s, %d-byte payload, checksum present %t); for a server that is not concbench's, try verify auto, status or none",
			c.idx, w.idx, e.id, kind, w.resp.ID, w.resp.Status, len(w.resp.Payload), w.resp.HasChecksum)
	}
}

// measured counts the response, of kind, to the measured request e,
// received at at, and records its latencies if it succeeded. It returns
// the response's time: at, or e's send time if at is before it.
func (w *worker) measured(e *entry, kind errKind, at int64) int64 {
	if at < e.sent {
		// Stamped before it was sent: the kernel's and the monotonic
		// clock disagree (a step of the wall clock). Counted; the
		// response gets its send time.
		w.st.stampBeforeSend++
		at = e.sent
	}
	w.st.completed++
	if at <= w.endAt {
		w.st.inWindow++
	}
	w.st.lastResponse = max(w.st.lastResponse, at)
	if kind != kindOK {
		w.st.errs[kind]++
		return at
	}
	w.st.ok++
	w.recordLatency(e, at)
	return at
}

// recordLatency records the latencies of the successful measured request
// e, answered at at: corrected, uncorrected, from the intended time and
// without the worker's own lateness, by priority class, in the trace,
// the overload detector's slice and the current interval.
func (w *worker) recordLatency(e *entry, at int64) {
	// The corrected latency runs from the intended send time when the
	// server held the request back (the in-flight bound, a close that
	// made it resend: coordinated omission, the server's doing), and
	// also when the worker itself sent it late while other requests
	// were in flight: their queue in the server could have absorbed
	// the lateness (had it been sent on time it would have waited
	// anyway), so counting from the actual send could hide queueing.
	// Sent late with nothing in flight, it found the server idle, and
	// its latency from the actual send is what an on-time send would
	// have measured: the worker's lateness is not the server's.
	// ownLagFree never charges the worker's lateness: the distance
	// between the two is what the verdict judges.
	lat, unc, full := at-e.sent, at-e.sent, at-e.intended
	switch {
	case e.flags&(flagHeld|flagResent) != 0:
		lat = full
		w.ownLagFree.record(full)
	case e.flags&flagQueued != 0:
		lat = full
		w.ownLagFree.record(unc)
	default:
		w.ownLagFree.record(unc)
	}
	if cap(w.trace) > 0 {
		if len(w.trace) < cap(w.trace) {
			w.trace = append(w.trace, traceRec{id: e.id, intended: e.intended, sent: e.sent, recv: at,
				kernel: w.atKernel, corrected: e.flags&(flagHeld|flagResent|flagQueued) != 0})
		} else {
			w.traceDropped++
		}
	}
	w.corrected.record(lat)
	w.classes.record(e.prio, lat)
	w.uncorrected.record(unc)
	w.fromIntended.record(full)
	if w.slicing {
		if j := (e.intended - w.measureAt) * numSlices / (w.endAt - w.measureAt); j >= 0 && j < numSlices {
			w.sl.n[j]++
			w.sl.sum[j] += lat
		}
	}
	if w.iv != nil {
		w.iv.record(at, lat, unc)
	}
}

// reasonText quotes a response body given as a reason, shortened to its
// first line and at most 200 bytes.
func reasonText(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strconv.Quote(s)
}
