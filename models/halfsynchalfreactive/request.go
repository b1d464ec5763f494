package halfsynchalfreactive

import (
	"concbench/models/internal/connio"
	"concbench/wire"
)

// request is the request object (the "request message" of the pattern) that
// the reactor passes to a worker through the queue. It owns copies of
// everything it needs, because the reactor reuses its input buffer as soon
// as the request is queued: a wire.Request decoded from a connection's
// connio.In aliases that buffer (its Payload) only until the next read.
//
// Ownership: the reactor fills it and gives it up with queue.put; the worker
// that takes it owns it until it is either written to the connection's
// output or parked in the connection's reorder ring, from where whichever
// thread writes it next releases it. The default variant allocates one per
// request with new (and the payload copy with it); the pooled variant
// recycles them through the queue's free list.
type request struct {
	req  wire.Request // the decoded request; Payload is a private copy
	conn *conn        // the connection it came from and its response goes to
	seq  uint64       // its position among the connection's requests, from 0
	est  int          // output bytes reserved for its response (connio.Reserve)

	// err, if set, makes this the protocol's error response for a request
	// that failed to decode (built by the reactor, never queued).
	err error

	// resp holds a response completed out of order while it waits in the
	// reorder ring; its Payload is a copy in respBody.
	resp wire.Response

	body     []byte // storage for req.Payload (pooled variant)
	respBody []byte // storage for resp.Payload
}

// fill makes r the request object for req, a request of c (its sequence
// number is assigned by reactor.account). It copies req.Payload: into r's
// own buffer when pooled (reused across requests), into a fresh
// allocation otherwise.
func (r *request) fill(req *wire.Request, c *conn, pooled bool) {
	r.req = *req
	r.req.Payload = nil
	if len(req.Payload) > 0 {
		if pooled {
			r.body = append(r.body[:0], req.Payload...)
			r.req.Payload = r.body
		} else {
			r.req.Payload = append([]byte(nil), req.Payload...)
		}
	}
	r.conn = c
	r.est = connio.Reserve(req)
	r.err = nil
}

// park keeps a copy of resp (computed by a worker whose scratch space is
// about to be reused) until the response's turn to be written comes.
func (r *request) park(resp *wire.Response) {
	r.resp = *resp
	r.respBody = append(r.respBody[:0], resp.Payload...)
	r.resp.Payload = r.respBody
}

// reset drops r's references so that a recycled object pins no connection,
// error or large buffer.
func (r *request) reset() {
	r.req = wire.Request{}
	r.resp = wire.Response{}
	r.conn = nil
	r.err = nil
	if cap(r.body) > connio.RetainLimit {
		r.body = nil
	}
	if cap(r.respBody) > connio.RetainLimit {
		r.respBody = nil
	}
}
