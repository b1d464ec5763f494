package frontend

import (
	"errors"
	"runtime"

	"concbench/handleset"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// errServerClosing is the failure of the links at Close.
var errServerClosing = errors.New("the front end is closing")

// clientConn is one client connection and its thread's state. Its
// requests are served by connio.ServeStream, with the clientConn as the
// session's Service: serving a request is forwarding it.
type clientConn struct {
	s    *Server
	up   *slot  // the upstream slot its requests go over: shared, or mine
	mine slot   // the thread's own slot (perthread)
	w    waiter // the thread's registration, reused per request
	send []byte // the encoded upstream request
}

var _ connio.Service = (*clientConn)(nil)

// serveConn is a client connection thread: connio.ServeStream reads the
// client's requests and, one at a time and in order, forwards each
// (clientConn.Do) and waits for its response (the paper's two-way call);
// the responses of pipelined requests are written together once every
// complete request buffered has been answered (or the output bound is
// reached). It exits locked, so the runtime destroys its OS thread.
func (s *Server) serveConn(fd int, shared *slot) {
	defer s.wg.Done()
	runtime.LockOSThread() // exits locked: see doc.go
	c := &clientConn{s: s, up: shared}
	if shared == nil {
		c.up = &c.mine
	}
	sh := s.counters.NewConnShard()
	sess := connio.NewSessionWith(&s.cfg, c)
	connio.ServeFD(fd, sess, sh, s.reaper)
	s.mu.Lock()
	delete(s.conns, fd)
	s.mu.Unlock()
	handleset.Close(fd)
	s.limit.Release()
	if l := c.mine.cur.Load(); l != nil {
		s.dropLink(l)
	}
	sh.AddClosed()
	s.counters.Retire(sh)
	<-s.slots
}

// Do serves one request of the client by forwarding it (connio.Service).
// resp.Payload points into the thread's waiter, valid until the next
// request; scratch is not used.
func (c *clientConn) Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	c.forward(req, resp)
	if cap(c.send) > connio.RetainLimit {
		c.send = nil
	}
	return scratch
}

// forward is the two-way call: it registers the upstream id the thread
// expects on its slot's link (re-dialled if it broke and the back-off
// has passed), sends the request under it, waits for the response
// (joining the link's bound pool, or parking until the reader hands it
// over) and sets resp to it with the client's id restored. While the
// slot is down the request is answered status unavailable at once, with
// the reason.
//
// Upstream ids are unique per server and congruent to the client's id
// modulo 64, so an OpWork body — whose pattern depends only on the id
// modulo 64 (wire.AppendBody) — is byte for byte the one the client's id
// calls for.
func (c *clientConn) forward(req *wire.Request, resp *wire.Response) {
	s, w := c.s, &c.w
	*resp = wire.Response{ID: req.ID, Close: req.Close}
	l, err := c.up.link(s)
	if err != nil {
		s.upstreamFailed.Add(1)
		c.failed(resp, wire.StatusUnavailable, "front end: "+err.Error())
		return
	}
	w.upID = s.nextID.Add(1)<<6 | req.ID&63
	w.op, w.size = req.Op, req.Size
	if err := l.register(w); err != nil {
		s.upstreamFailed.Add(1)
		c.failed(resp, wire.StatusUnavailable, "front end: back end connection failed: "+err.Error())
		return
	}
	up := *req
	up.ID, up.Close = w.upID, false
	c.send = s.upstream.AppendRequest(c.send[:0], &up)
	l.send(c.send)
	if s.opts.Handoff == Queue {
		w.wait()
	} else {
		l.join(w)
	}
	l.leave()
	if w.res.failure != "" {
		c.failed(resp, w.res.status, w.res.failure)
		return
	}
	resp.Status = w.res.status
	resp.Payload = w.res.payload
	resp.Pattern = w.res.pattern
}

// failed answers the request with the front end's own error.
func (c *clientConn) failed(resp *wire.Response, st wire.Status, reason string) {
	resp.Status = st
	resp.Payload = append(c.w.res.payload[:0], reason...)
	c.w.res.payload = resp.Payload
	resp.Pattern = 0
}
