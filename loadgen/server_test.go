package loadgen

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"concbench/service"
	"concbench/wire"
)

// testServer is an in-process server speaking the wire codec, one goroutine
// per connection over Go's net, that answers every request correctly —
// OpWork with AppendBody(id, size), ledger ops on a ledger of its own
// (service.Service, with the service's default accounts) — except
// where a test asks it to misbehave. It counts requests across connections
// (from 1, priming included) so that a misbehaviour can be aimed at the
// n-th request.
type testServer struct {
	t      testing.TB
	ln     net.Listener
	codec  wire.Codec
	svc    *service.Service // the ledger
	served atomic.Int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn

	// stallAt, if > 0, makes the server stall every connection for
	// stallFor when it is about to answer request number stallAt: no
	// response leaves until the stall ends (a GC pause, a page-in storm).
	stallAt    int64
	stallFor   time.Duration
	stallUntil atomic.Int64 // unix ns

	// fault, if set, says how to corrupt the response to request number n
	// (faultNone: answer correctly).
	fault func(n int64) fault
	// silentAfter, if > 0, makes the server stop answering after that many
	// requests (reading on, answering nothing).
	silentAfter int64
	// serviceTime, if > 0, makes the server take that long (asleep) over
	// every request after priming, one request at a time across all
	// connections: a server whose capacity is 1/serviceTime.
	serviceTime time.Duration
	busyMu      sync.Mutex
	// refuseConn, if set, says whether to refuse the n-th connection
	// accepted (from 1) as a server at its limit does (connio.Refuse):
	// the refusal at once, then close, reading nothing.
	refuseConn func(n int64) bool
	accepted   int64 // connections accepted (the accept loop's)
	// skewTotals, if not 0, is added to every total the server answers:
	// a ledger that loses or makes money.
	skewTotals int64
	// foreign makes the server answer like a server that is not
	// concbench's (nginx): 200 with a fixed body, no X-Request-Id, no
	// X-Checksum (HTTP only).
	foreign bool
}

// foreignResponse is what the foreign server answers to every request.
const foreignResponse = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 5\r\n\r\nhello"

// fault is a deliberate misbehaviour of the test server.
type fault int

const (
	faultNone     fault = iota
	faultID             // answer with another id
	faultChecksum       // corrupt a payload byte after the checksum is computed
	faultBody           // send a wrong body with a matching checksum
	faultSwap           // send this response after the next one
	faultStatus         // answer with status internal
	faultClose          // answer, then say Connection: close (HTTP) and close
	faultKill           // do not answer; close the listener and every connection
	faultRefuse         // refuse as a server at capacity: id 0, status unavailable, a reason, close
	faultTwice          // answer twice
)

// faultAt returns a fault function that misbehaves with f on request n.
func faultAt(n int64, f fault) func(int64) fault {
	return func(k int64) fault {
		if k == n {
			return f
		}
		return faultNone
	}
}

func startServer(t testing.TB, protocol string, setup func(*testServer)) *testServer {
	t.Helper()
	codec, err := wire.New(protocol, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, ln: ln, codec: codec, svc: svc}
	if setup != nil {
		setup(s)
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *testServer) addr() string { return s.ln.Addr().String() }

func (s *testServer) close() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *testServer) accept() {
	defer s.wg.Done()
	defer s.kill()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if s.accepted++; s.refuseConn != nil && s.refuseConn(s.accepted) {
			c.Write(s.codec.AppendResponse(nil, &wire.Response{Status: wire.StatusUnavailable, Close: true, Payload: []byte("at capacity (test)\n")}))
			c.Close()
			continue
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

// kill closes the listener and every connection: the server is gone.
func (s *testServer) kill() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

func (s *testServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	in := make([]byte, 0, 64<<10)
	var out, held, body []byte
	var req wire.Request
	var resp wire.Response // outside the loop: AppendResponse makes it escape
	for {
		if len(in) == cap(in) {
			in = append(in, 0)[:len(in)]
		}
		n, err := c.Read(in[len(in):cap(in)])
		in = in[:len(in)+n]
		if err != nil {
			return // EOF, or the listener's close closed the connection
		}
		out = out[:0]
		off := 0
		closing := false
		for !closing {
			m, derr := s.codec.DecodeRequest(in[off:], &req)
			if derr != nil {
				c.Write(s.codec.AppendError(nil, derr))
				return
			}
			if m == 0 {
				break
			}
			off += m
			k := s.served.Add(1)
			if s.silentAfter > 0 && k > s.silentAfter {
				continue
			}
			if s.serviceTime > 0 {
				s.busyMu.Lock()
				time.Sleep(s.serviceTime)
				s.busyMu.Unlock()
			}
			if k == s.stallAt {
				s.stallUntil.Store(time.Now().Add(s.stallFor).UnixNano())
			}
			if d := time.Until(time.Unix(0, s.stallUntil.Load())); d > 0 {
				// Send what is ready first, so that only the stall delays.
				if len(out) > 0 {
					if _, err := c.Write(out); err != nil {
						return
					}
					out = out[:0]
				}
				time.Sleep(d)
			}
			if s.foreign {
				out = append(out, foreignResponse...)
				continue
			}
			f := faultNone
			if s.fault != nil {
				f = s.fault(k)
			}
			resp = wire.Response{ID: req.ID}
			if req.Op == wire.OpWork {
				body = wire.AppendBody(body[:0], req.ID, req.Size)
				resp.Payload = body
			} else {
				body = s.svc.Do(&req, &resp, body[:0])
				if req.Op == wire.OpTotal && s.skewTotals != 0 {
					body = strconv.AppendInt(body[:0], s.svc.Ledger().Total()+s.skewTotals, 10)
					resp.Payload = body
				}
			}
			start := len(out)
			switch f {
			case faultKill:
				s.kill()
				return
			case faultID:
				resp.ID += 1 << 40
			case faultStatus:
				resp.Status = wire.StatusInternal
			case faultBody:
				resp.Payload = append([]byte("!"), resp.Payload...)
			case faultClose:
				resp.Close = true
				closing = true
			case faultRefuse:
				resp = wire.Response{Status: wire.StatusUnavailable, Close: true, Payload: []byte("at capacity (test); try again later\n")}
				closing = true
			}
			out = s.codec.AppendResponse(out, &resp)
			switch f {
			case faultChecksum:
				out[len(out)-1] ^= 0xff // the last payload byte
			case faultTwice:
				out = append(out, out[start:]...)
			case faultSwap:
				held = append(held[:0], out[start:]...)
				out = out[:start]
				continue
			}
			if len(held) > 0 {
				out = append(out, held...)
				held = held[:0]
			}
		}
		in = in[:copy(in, in[off:])]
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
		if closing {
			return
		}
	}
}
