package frontend

import (
	"errors"
	"runtime"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// errServerClosing is the failure of the links at Close.
var errServerClosing = errors.New("the front end is closing")

// clientConn is one client connection and its thread's state.
type clientConn struct {
	s     *Server
	fd    int
	sh    *models.Shard
	in    connio.In
	out   connio.Out
	timer connio.Timer
	link  *link  // the upstream connection its requests go over
	own   bool   // link is this thread's own (perthread)
	w     waiter // the thread's registration, reused per request
	send  []byte // the encoded upstream request
	req   wire.Request
	resp  wire.Response
}

// serveConn is a client connection thread: it reads the client's
// requests and, one at a time and in order, forwards each and waits for
// its response (the paper's two-way call), then writes the responses. It
// exits locked, so the runtime destroys its OS thread.
func (s *Server) serveConn(fd int, shared *link) {
	defer s.wg.Done()
	c := &clientConn{s: s, fd: fd, sh: s.counters.NewConnShard(), link: shared,
		in: connio.NewIn(connio.MaxRequest(s.cfg.Codec.Limits()))}
	runtime.LockOSThread() // exits locked: see doc.go
	s.reaper.Track(fd, &c.timer)
	c.serve()
	s.reaper.Untrack(fd)
	s.mu.Lock()
	delete(s.conns, fd)
	s.mu.Unlock()
	handleset.Close(fd)
	if c.own && c.link != nil {
		s.dropLink(c.link)
	}
	c.sh.AddClosed()
	s.counters.Retire(c.sh)
	<-s.slots
}

// serve runs the connection until it ends. Responses of pipelined
// requests are written together once every complete request buffered has
// been answered (or the output bound is reached), as connio.ServeStream
// does.
func (c *clientConn) serve() {
	codec := c.s.cfg.Codec
	closing := false
	for {
		for !closing {
			if c.out.Pending() >= c.s.cfg.MaxPendingOutput && !c.flush() {
				return
			}
			ok, err := c.in.Next(codec, &c.req)
			if err != nil {
				c.out.AppendError(codec, err)
				c.sh.AddError(wire.KindOf(err).String())
				closing = true
				break
			}
			if !ok {
				break
			}
			c.forward()
			c.out.AppendResponse(codec, &c.resp)
			c.sh.AddRequests(1)
			closing = c.resp.Close
		}
		if cap(c.send) > connio.RetainLimit {
			c.send = nil
		}
		c.timer.Partial(!closing && c.in.Buffered() > 0)
		if !c.flush() || closing {
			return
		}
		n, err := handleset.Read(c.fd, c.in.Space())
		switch {
		case err != nil:
			connio.CountIOError(c.sh, err)
			return
		case n == 0:
			c.timer.EndOfInput(c.sh, c.in.Buffered())
			return
		}
		c.in.Commit(n)
		c.sh.AddRead(n)
	}
}

// flush writes every pending response byte (blocking); it reports false
// if the client is gone.
func (c *clientConn) flush() bool {
	for c.out.Pending() > 0 {
		n, err := handleset.Write(c.fd, c.out.Bytes())
		if err != nil {
			connio.CountIOError(c.sh, err)
			return false
		}
		c.sh.AddWritten(n)
		c.out.Advance(n)
	}
	return true
}

// forward is the two-way call: it registers the upstream id the thread
// expects, sends the request under it, waits for the response (joining
// the link's bound pool, or parking until the reader hands it over) and
// sets c.resp to it with the client's id restored.
//
// Upstream ids are unique per server and congruent to the client's id
// modulo 64, so an OpWork body — whose pattern depends only on the id
// modulo 64 (wire.AppendBody) — is byte for byte the one the client's id
// calls for.
func (c *clientConn) forward() {
	s, w := c.s, &c.w
	c.resp = wire.Response{ID: c.req.ID, Close: c.req.Close}
	if c.link == nil {
		if l, err := s.dial(); err != nil {
			c.failed(wire.StatusUnavailable, "front end: cannot connect to the back end: "+err.Error())
			return
		} else {
			c.link, c.own = l, true
		}
	}
	w.upID = s.nextID.Add(1)<<6 | c.req.ID&63
	w.op, w.size = c.req.Op, c.req.Size
	if err := c.link.register(w); err != nil {
		s.upstreamFailed.Add(1)
		c.failed(wire.StatusUnavailable, "front end: back end connection failed: "+err.Error())
		return
	}
	up := c.req
	up.ID, up.Close = w.upID, false
	c.send = s.upstream.AppendRequest(c.send[:0], &up)
	c.link.send(c.send)
	if s.opts.Handoff == Queue {
		w.wait()
	} else {
		c.link.join(w)
	}
	if w.res.failure != "" {
		c.failed(w.res.status, w.res.failure)
		return
	}
	c.resp.Status = w.res.status
	c.resp.Payload = w.res.payload
	c.resp.Pattern = w.res.pattern
}

// failed answers the request with the front end's own error.
func (c *clientConn) failed(st wire.Status, reason string) {
	c.resp.Status = st
	c.resp.Payload = append(c.w.res.payload[:0], reason...)
	c.w.res.payload = c.resp.Payload
	c.resp.Pattern = 0
}
