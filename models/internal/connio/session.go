package connio

import (
	"errors"
	"io"

	"concbench/handleset"
	"concbench/models"
	"concbench/service"
	"concbench/wire"
)

// MaxReadsPerEvent bounds the reads one OnReady makes, so that a client that
// keeps its socket full cannot hold a thread forever (fairness between
// connections sharing a thread). Models with their own read loop use the
// same bound.
const MaxReadsPerEvent = 8

// Session is one connection's protocol state. See the package documentation.
type Session struct {
	In  In
	Out Out
	// Timer is the connection's header-timeout clock (see Reaper): set
	// by Process, read by the server's Reaper.
	Timer Timer

	codec   wire.Codec
	svc     Service
	async   AsyncService // svc, if it finishes some requests later
	maxOut  int
	req     wire.Request
	resp    wire.Response
	scratch []byte

	// closing is set once no further request will be served: the client
	// asked to close, a request failed to decode, or the peer is gone. The
	// pending output is still written, then the connection is closed.
	closing bool
	// stalled is set when Process stopped at the output bound with complete
	// requests possibly still buffered: they must be served once output
	// drains, before any further read (the client may be waiting for them).
	stalled bool
	// unread is set when OnReady stopped reading at MaxReadsPerEvent
	// while the socket may hold more (see Unread).
	unread bool
	// suspended is set while a request that the AsyncService finishes
	// later is pending: nothing more is served or read until Resume.
	suspended bool
}

// Unread reports whether the last OnReady stopped reading at
// MaxReadsPerEvent, every read having filled the space offered, so that
// the socket may still hold bytes. A model whose connections are
// registered EdgeTriggered must call OnReady again without waiting for an
// event: none will come for bytes that had arrived already. (A handle
// re-armed one-shot or level-triggered is reported again anyway.)
func (s *Session) Unread() bool { return s.unread }

// Service is what a Session's requests are served by: Do fills resp for
// req, appending its payload to scratch (or pointing it at memory of its
// own that stays valid until its next call), and returns the extended
// scratch, as service.Service.Do does. Every model serves cfg.Service;
// the front end forwards each request to its back end instead.
type Service interface {
	Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte
}

var _ Service = (*service.Service)(nil)

// AsyncService is a Service that finishes some requests later, on another
// thread (the shared queue's ledger requests, served through strands).
// Start serves req: either at once, filling resp as Do does and reporting
// true, or by beginning it and reporting false. In the second case the
// session is suspended: it serves, reads and asks for nothing more
// (OnReady returns interest 0, not done) until the model hands it the
// request's response with Resume, and then goes on with OnReady. So a
// connection has at most one such request pending and its responses
// leave in request order. Only OnReady's models may use one; ServeStream
// does not suspend.
type AsyncService interface {
	Service
	Start(req *wire.Request, resp *wire.Response, scratch []byte) (out []byte, done bool)
}

// NewSession returns the session of a new connection served by
// cfg.Service under cfg. cfg must have had its defaults applied.
func NewSession(cfg *models.Config) *Session { return NewSessionWith(cfg, cfg.Service) }

// NewSessionWith returns the session of a new connection whose requests
// svc serves, under cfg (defaults applied). If svc is an AsyncService the
// session serves through its Start.
func NewSessionWith(cfg *models.Config, svc Service) *Session {
	async, _ := svc.(AsyncService)
	return &Session{
		In:     NewIn(MaxRequest(cfg.Codec.Limits())),
		codec:  cfg.Codec,
		svc:    svc,
		async:  async,
		maxOut: cfg.MaxPendingOutput,
	}
}

// Closing reports whether the session will serve no more requests.
func (s *Session) Closing() bool { return s.closing }

// Suspended reports whether a request begun by the AsyncService is
// pending: the session waits for Resume.
func (s *Session) Suspended() bool { return s.suspended }

// Resume ends the suspension with resp, the pending request's response:
// it is appended to the output and counted in sh as served (a response
// that closes the connection starts closing), and the requests buffered
// behind it are served (Process), which may suspend the session again.
// The model then calls OnReady to write the responses and go on.
func (s *Session) Resume(resp *wire.Response, sh *models.Shard) {
	s.suspended = false
	s.Out.AppendResponse(s.codec, resp)
	sh.AddRequests(1)
	if resp.Close {
		s.closing = true
	}
	s.Process(sh)
}

// OutputFull reports whether the pending output has reached the bound past
// which the connection's input is not read.
func (s *Session) OutputFull() bool { return s.Out.Pending() >= s.maxOut }

// Process serves the complete requests buffered in In, in order, appending
// their responses to Out. It stops early when the output bound is reached,
// the session starts closing or a request is left pending (Suspended),
// and returns the number of requests served. A decode error appends the
// protocol's error response, counts the error kind in sh and starts
// closing.
func (s *Session) Process(sh *models.Shard) int {
	served := 0
	s.stalled = false
	for !s.closing && !s.suspended {
		if s.OutputFull() {
			s.stalled = true
			break
		}
		ok, err := s.In.Next(s.codec, &s.req)
		if err != nil {
			s.Out.AppendError(s.codec, err)
			sh.AddError(wire.KindOf(err).String())
			s.closing = true
			break
		}
		if !ok {
			break
		}
		if s.async == nil {
			s.scratch = s.svc.Do(&s.req, &s.resp, s.scratch[:0])
		} else {
			var done bool
			if s.scratch, done = s.async.Start(&s.req, &s.resp, s.scratch[:0]); !done {
				s.suspended = true
				break
			}
		}
		s.Out.AppendResponse(s.codec, &s.resp)
		served++
		if s.resp.Close {
			s.closing = true
		}
	}
	if cap(s.scratch) > RetainLimit {
		s.scratch = nil
	}
	s.Timer.Partial(!s.closing && !s.stalled && !s.suspended && s.In.Buffered() > 0)
	sh.AddRequests(served)
	return served
}

// endOfInput handles the peer's end of stream: a partial request left in the
// buffer is counted as truncated.
func (s *Session) endOfInput(sh *models.Shard) {
	if !s.closing {
		s.Timer.EndOfInput(sh, s.In.Buffered())
	}
	s.closing = true
}

// ioError counts a failed read or write and starts closing.
func (s *Session) ioError(sh *models.Shard, err error) {
	CountIOError(sh, err)
	s.closing = true
}

// CountIOError counts a failed read or write in sh: as a peer reset if the
// peer is gone (ECONNRESET, EPIPE), as an I/O error otherwise.
func CountIOError(sh *models.Shard, err error) {
	if handleset.IsPeerGone(err) {
		sh.AddError(models.ErrPeerReset)
	} else {
		sh.AddError(models.ErrIO)
	}
}

// Flush writes o's pending bytes to the non-blocking descriptor fd until
// they are all written or the socket would block, counting the bytes
// written in sh. It returns the error of a failed write, never a
// would-block; the caller counts it (CountIOError).
func (o *Out) Flush(fd int, sh *models.Shard) error {
	for o.Pending() > 0 {
		n, err := handleset.Write(fd, o.Bytes())
		if err != nil {
			if handleset.IsWouldBlock(err) {
				return nil
			}
			return err
		}
		sh.AddWritten(n)
		o.Advance(n)
	}
	return nil
}

// ServeFD serves the connection on the blocking descriptor fd with
// ServeStream, r enforcing its header timeout meanwhile (r may be nil).
// It is the connection thread of thread per connection and of the front
// end; the caller closes fd.
func ServeFD(fd int, s *Session, sh *models.Shard, r *Reaper) {
	r.Track(fd, &s.Timer)
	ServeStream(&fdStream{fd: fd}, s, sh)
	r.Untrack(fd)
}

// fdStream is a blocking socket as the io.ReadWriter that ServeStream
// takes: read(2) and write(2) on the descriptor, with no buffering and no
// netpoller. Its thread is a locked one that blocks in read: each read
// refreshes the thread's Slice first.
type fdStream struct {
	fd    int
	slice Slice
}

func (f *fdStream) Read(p []byte) (int, error) {
	f.slice.Refresh()
	return handleset.Read(f.fd, p)
}

func (f *fdStream) Write(p []byte) (int, error) { return handleset.Write(f.fd, p) }

// ServeStream serves a connection over a blocking stream until the
// connection ends: it reads, serves every complete request, and writes all
// their responses before reading again, so pipelined requests are answered
// in one write. It returns when the client closes, a request fails to
// decode (after the error response is written), a response asks to close,
// or I/O fails; the caller closes the connection.
func ServeStream(rw io.ReadWriter, s *Session, sh *models.Shard) {
	for {
		s.Process(sh)
		for s.Out.Pending() > 0 {
			n, err := rw.Write(s.Out.Bytes())
			sh.AddWritten(n)
			s.Out.Advance(n)
			if err != nil {
				s.ioError(sh, err)
				return
			}
		}
		if s.closing {
			return
		}
		if s.stalled {
			continue // the output is written now: serve what Process left
		}
		sp := s.In.Space()
		n, err := rw.Read(sp)
		s.In.Commit(n)
		sh.AddRead(n)
		if n > 0 && err == nil {
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			if n == 0 {
				s.endOfInput(sh)
				s.Process(sh)
				return
			}
			continue
		}
		s.ioError(sh, err)
		return
	}
}

// flush writes pending output until it is all written or the socket would
// block. It reports false if the connection failed.
func (s *Session) flush(fd int, sh *models.Shard) bool {
	if err := s.Out.Flush(fd, sh); err != nil {
		s.ioError(sh, err)
		return false
	}
	return true
}

// OnReady is the processing step of a readiness-driven model for one event
// on a non-blocking connection descriptor fd: it writes pending output,
// reads and serves what has arrived, writes the responses, and returns the
// interest to re-arm the handle with, or done when the connection must be
// closed now (everything writable has been written). It never blocks. It
// needs no readiness mask: it tries the write and the read either way, and
// a descriptor that is not ready answers EAGAIN.
//
// Back-pressure: while the output bound is reached the returned interest is
// Writable only, so the slow reader's requests stay in the kernel's buffers.
//
// A session suspended by its AsyncService (Suspended) returns interest 0
// and not done, with what it could write written: the model leaves the
// handle disarmed until it resumes the session (Resume) and calls OnReady
// again.
func (s *Session) OnReady(fd int, sh *models.Shard) (interest handleset.Events, done bool) {
	if !s.flush(fd, sh) {
		return 0, true
	}
	s.unread = false
read:
	for reads := 0; !s.closing && !s.suspended && !s.OutputFull(); reads++ {
		if reads == MaxReadsPerEvent {
			s.unread = true // every read so far returned ReadMore
			break
		}
		r, err := s.In.ReadOnce(fd, &s.Timer, sh)
		switch r {
		case ReadNone:
			break read
		case ReadFailed:
			s.ioError(sh, err)
			return 0, true
		case ReadEnd:
			s.closing = true // ReadOnce counted a truncated request
			break read
		}
		s.Process(sh)
		if !s.flush(fd, sh) {
			return 0, true
		}
		if r == ReadDrained {
			break // re-arming reports what arrives meanwhile
		}
	}
	// Requests left buffered when output was full are served once output
	// drains, even if no new bytes arrive.
	for s.stalled && !s.OutputFull() {
		s.Process(sh)
		if !s.flush(fd, sh) {
			return 0, true
		}
	}
	switch {
	case s.suspended:
		return 0, false
	case s.closing && s.Out.Pending() == 0:
		return 0, true
	case s.closing || s.OutputFull():
		return handleset.Writable | handleset.OneShot, false
	case s.Out.Pending() > 0:
		return handleset.Readable | handleset.Writable | handleset.OneShot, false
	}
	return handleset.Readable | handleset.OneShot, false
}
