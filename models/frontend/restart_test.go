package frontend

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/models/netpoll"
	"concbench/service"
	"concbench/wire"
)

// The phases of TestBackendRestart, as a client sees them when it sends
// and when it reads an answer.
const (
	phaseUp        int32 = iota // the first back end serves
	phaseDown                   // it is being stopped, or stopped
	phaseRestarted              // the second one serves, on the same port
)

// answer is one answer a client of TestBackendRestart read.
type answer struct {
	ok         bool  // status ok and verified; else status unavailable with a reason
	sent, read int32 // the phase when it was sent and when it was read
}

// restartClient sends one request at a time over one connection to addr
// until stop is closed, and records every answer in *got; a response that
// is neither a verified ok nor a 503 with a reason, or a connection that
// fails, is an error (every request must be answered).
func restartClient(addr string, codec wire.Codec, id0 uint64, phase *atomic.Int32, stop <-chan struct{}, mu *sync.Mutex, got *[]answer) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var buf []byte
	tmp := make([]byte, 64<<10)
	for k := uint64(0); ; k++ {
		select {
		case <-stop:
			return nil
		default:
		}
		req := wire.Request{ID: id0 + k, Op: wire.OpWork, Size: int(k % 700), Block: 50 * time.Microsecond}
		sent := phase.Load()
		c.SetDeadline(time.Now().Add(2 * time.Minute)) // liveness bound, not a timing assertion
		if _, err := c.Write(codec.AppendRequest(nil, &req)); err != nil {
			return fmt.Errorf("request %d: %w", req.ID, err)
		}
		for {
			var resp wire.Response
			n, err := codec.DecodeResponse(buf, &resp)
			if err != nil {
				return fmt.Errorf("request %d: %w", req.ID, err)
			}
			if n == 0 {
				m, err := c.Read(tmp)
				if err != nil {
					return fmt.Errorf("request %d: no answer: %w", req.ID, err)
				}
				buf = append(buf, tmp[:m]...)
				continue
			}
			a := answer{ok: resp.Status == wire.StatusOK, sent: sent, read: phase.Load()}
			switch {
			case a.ok:
				if err := wire.Verify(&req, &resp); err != nil {
					return err
				}
			case resp.Status != wire.StatusUnavailable || resp.ID != req.ID || !strings.Contains(string(resp.Payload), "back end"):
				return fmt.Errorf("request %d: answer id %d, status %v, %q: want ok, or unavailable with the reason", req.ID, resp.ID, resp.Status, resp.Payload)
			}
			buf = buf[n:]
			mu.Lock()
			*got = append(*got, a)
			mu.Unlock()
			break
		}
	}
}

// startBackend starts a netpoll back end serving svc on addr; on a port
// in use (another socket took it for a moment: a front end's dial that
// connected to itself holds it until it sees so) it tries again.
func startBackend(t *testing.T, addr string, svc *service.Service) models.Server {
	t.Helper()
	for try := 0; ; try++ {
		back, err := netpoll.Start(models.Config{Addr: addr, Codec: newCodec(t, "binary"), Service: svc}, netpoll.Options{})
		if err == nil {
			return back
		}
		if !errors.Is(err, syscall.EADDRINUSE) || try == 1000 {
			t.Fatal(err)
		}
	}
}

// TestBackendRestart stops the back end under load and starts it again
// on the same port, in every hand-off mode and for both client
// protocols: every request is answered, ok or 503 with its reason; no
// 503 comes before the back end is stopped; each client gets ok again
// after the restart, and no 503 once it has (its link is back).
func TestBackendRestart(t *testing.T) {
	const clients, oks = 4, 20
	for _, mode := range []Handoff{Bound, PerThread, Queue} {
		for _, proto := range []string{"binary", "http"} {
			t.Run(fmt.Sprintf("handoff=%s/protocol=%s", mode, proto), func(t *testing.T) {
				svc := newService(t)
				back := startBackend(t, "127.0.0.1:0", svc)
				addr := back.Addr().String()
				front, err := Start(models.Config{Addr: "127.0.0.1:0", Codec: newCodec(t, proto), Service: svc},
					Options{Backend: addr, Handoff: mode, UpstreamConns: 2})
				if err != nil {
					back.Close()
					t.Fatal(err)
				}
				var phase atomic.Int32
				var mu sync.Mutex
				got := make([][]answer, clients)
				stop := make(chan struct{})
				errs := make(chan error, clients)
				for i := range clients {
					go func() {
						errs <- restartClient(front.Addr().String(), front.cfg.Codec, uint64(i)<<32+1, &phase, stop, &mu, &got[i])
					}()
				}
				count := func(pred func(answer) bool) func() bool {
					return func() bool {
						mu.Lock()
						defer mu.Unlock()
						for _, as := range got {
							n := 0
							for _, a := range as {
								if pred(a) {
									n++
								}
							}
							if n < oks {
								return false
							}
						}
						return true
					}
				}
				modeltest.WaitFor(t, "every client served by the first back end", count(func(a answer) bool { return a.ok }))
				phase.Store(phaseDown)
				if err := back.Close(); err != nil {
					t.Error(err)
				}
				modeltest.WaitFor(t, "every client answered 503 while the back end is down",
					count(func(a answer) bool { return !a.ok && a.sent == phaseDown }))
				back = startBackend(t, addr, svc)
				phase.Store(phaseRestarted)
				modeltest.WaitFor(t, "every client served by the restarted back end",
					count(func(a answer) bool { return a.ok && a.sent == phaseRestarted }))
				close(stop)
				for range clients {
					if err := <-errs; err != nil {
						t.Error(err)
					}
				}
				redials := front.Stats().Counters["upstream_redials"]
				if err := front.Close(); err != nil {
					t.Error(err)
				}
				if err := back.Close(); err != nil {
					t.Error(err)
				}
				for i, as := range got {
					back := false // the client has had ok from the restarted back end
					for k, a := range as {
						switch {
						case !a.ok && a.read == phaseUp:
							t.Errorf("client %d, answer %d: 503 while the back end was up", i, k)
						case !a.ok && back:
							t.Errorf("client %d, answer %d: 503 after its link was back", i, k)
						case a.ok && a.sent == phaseRestarted:
							back = true
						}
					}
				}
				if redials == 0 {
					t.Error("upstream_redials = 0: the links were never dialled again")
				}
			})
		}
	}
}

// TestUpstreamTimeout: a back end that accepts and reads requests but
// never answers makes the front end answer each request, after the
// upstream timeout, with status unavailable and the reason — in every
// hand-off mode, for both client protocols — and count the timeout; the
// link is dialled again for the next request, and times out in turn.
func TestUpstreamTimeout(t *testing.T) {
	for _, mode := range []Handoff{Bound, PerThread, Queue} {
		for _, proto := range []string{"binary", "http"} {
			t.Run(fmt.Sprintf("handoff=%s/protocol=%s", mode, proto), func(t *testing.T) {
				cfg := testConfig(t, proto)
				codec := cfg.Codec
				backend := fakeBackend(t, 0, false)
				srv := modeltest.Start(t, func() (*Server, error) {
					return Start(cfg, Options{Backend: backend, Handoff: mode, UpstreamTimeout: 50 * time.Millisecond})
				})
				// Two pipelined requests on one connection: the second goes
				// over a link dialled again, in every mode.
				reqs := []wire.Request{{ID: 1, Op: wire.OpWork, Size: 10}, {ID: 2, Op: wire.OpWork, Size: 10}}
				for k, raw := range exchange(t, srv.Addr().String(), codec, reqs) {
					var resp wire.Response
					if _, err := codec.DecodeResponse(raw, &resp); err != nil {
						t.Fatal(err)
					}
					if resp.ID != reqs[k].ID || resp.Status != wire.StatusUnavailable || !strings.Contains(string(resp.Payload), "no response within the upstream timeout") {
						t.Errorf("request %d: id %d, status %v, %q: want unavailable for the upstream timeout", k+1, resp.ID, resp.Status, resp.Payload)
					}
				}
				c := srv.Stats().Counters
				if c["upstream_timeouts"] < 2 || c["upstream_failed"] < 2 || c["upstream_redials"] < 1 {
					t.Errorf("upstream_timeouts %d, upstream_failed %d, upstream_redials %d: want 2, 2 and 1 or more", c["upstream_timeouts"], c["upstream_failed"], c["upstream_redials"])
				}
			})
		}
	}
}

// TestDefaultUpstreamTimeout: twice the longest a request may ask of the
// back end (CPU, blocking, a withdrawal's wait, each up to the limit),
// plus 10 s.
func TestDefaultUpstreamTimeout(t *testing.T) {
	if got := DefaultUpstreamTimeout(wire.Limits{}); got != 70*time.Second {
		t.Errorf("DefaultUpstreamTimeout(defaults) = %v, want 70s", got)
	}
	if got := DefaultUpstreamTimeout(wire.Limits{MaxWork: time.Second}); got != 16*time.Second {
		t.Errorf("DefaultUpstreamTimeout(1s of work) = %v, want 16s", got)
	}
}
