package frontend

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/frontend/frontendtest"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// testLedger is the small ledger of the package's own tests.
var testLedger = service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1}

// newService returns a new service of testLedger.
func newService(t *testing.T) *service.Service {
	t.Helper()
	return modeltest.Service(t, testLedger)
}

// newCodec returns proto's codec with the default limits.
func newCodec(t *testing.T, proto string) wire.Codec {
	t.Helper()
	return modeltest.Codec(t, proto, wire.Limits{})
}

// testConfig returns the configuration of a front end for the package's
// own tests: speaking proto, serving a new service of testLedger.
func testConfig(t *testing.T, proto string) models.Config {
	t.Helper()
	return modeltest.Config(t, proto, 0, testLedger)
}

// exchange sends reqs pipelined over one new connection to addr and
// returns each response's raw bytes, in order.
func exchange(t *testing.T, addr string, codec wire.Codec, reqs []wire.Request) [][]byte {
	t.Helper()
	c, err := modeltest.Dial(addr, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := make([]*wire.Request, len(reqs))
	for i := range reqs {
		out[i] = &reqs[i]
	}
	if err := c.Send(out...); err != nil {
		t.Fatal(err)
	}
	var raw [][]byte
	var resp wire.Response
	for range reqs {
		b, err := c.RecvRaw(&resp)
		if err != nil {
			t.Fatalf("after %d responses: %v", len(raw), err)
		}
		raw = append(raw, append([]byte(nil), b...))
	}
	return raw
}

// TestExactlyTheBackendsResponses: over the front end, a binary client
// gets byte for byte what the back end answers the same requests (ids,
// statuses, bodies of every size, ledger answers and errors), in order;
// an HTTP client gets the same ids, statuses and payloads.
func TestExactlyTheBackendsResponses(t *testing.T) {
	reqs := []wire.Request{
		{ID: 1, Op: wire.OpWork, Size: 0},
		{ID: 2, Op: wire.OpWork, Size: 100},
		{ID: 1<<63 + 5, Op: wire.OpWork, Size: 5000}, // streamed: longer than wire.MaxInlineBody
		{ID: 7, Op: wire.OpBalance, Account: 3},
		{ID: 8, Op: wire.OpBalance, Account: 999}, // no_account
		{ID: 9, Op: wire.OpWork, Size: 1 << 20},
		{ID: 10, Op: wire.OpWithdraw, Account: 2, Amount: 1 << 40}, // insufficient_funds, no wait
		{ID: 11, Op: wire.OpTotal},
	}
	tests := []struct {
		name string
		opts Options
	}{
		{name: "handoff=bound", opts: Options{Handoff: Bound, UpstreamConns: 2}},
		{name: "handoff=perthread", opts: Options{Handoff: PerThread}},
		{name: "handoff=queue", opts: Options{Handoff: Queue}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			binCfg := testConfig(t, "binary")
			httpCfg := binCfg
			httpCfg.Codec = newCodec(t, "http")
			bin, http := binCfg.Codec, httpCfg.Codec
			binChain := modeltest.Start(t, func() (*frontendtest.Chain, error) { return startChain(binCfg, tc.opts) })
			httpFront := modeltest.Start(t, func() (*Server, error) {
				return Start(httpCfg, Options{Backend: binChain.Backend.Addr().String(), Handoff: tc.opts.Handoff, UpstreamConns: tc.opts.UpstreamConns})
			})

			direct := exchange(t, binChain.Backend.Addr().String(), bin, reqs)
			viaBin := exchange(t, binChain.Addr().String(), bin, reqs)
			viaHTTP := exchange(t, httpFront.Addr().String(), http, reqs)
			for i := range reqs {
				if string(viaBin[i]) != string(direct[i]) {
					t.Errorf("request %d (%v): binary response differs from the back end's (%d bytes, back end %d)", reqs[i].ID, reqs[i].Op, len(viaBin[i]), len(direct[i]))
				}
				var want, got wire.Response
				bin.DecodeResponse(direct[i], &want)
				http.DecodeResponse(viaHTTP[i], &got)
				if got.ID != want.ID || got.Status != want.Status || string(got.Payload) != string(want.Payload) || got.Checksum != want.Checksum {
					t.Errorf("request %d (%v): over HTTP id %d status %v %d bytes, back end id %d status %v %d bytes",
						reqs[i].ID, reqs[i].Op, got.ID, got.Status, len(got.Payload), want.ID, want.Status, len(want.Payload))
				}
			}
		})
	}
}

// fakeBackend accepts connections, reads binary requests and never
// answers; once it has read want requests in all, it dies: it closes its
// listener and every connection (with RST if reset). want 0: it never
// dies.
func fakeBackend(t *testing.T, want int, reset bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	codec := newCodec(t, "binary")
	var mu sync.Mutex
	var conns []*net.TCPConn
	seen := 0
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	closeAll := func() {
		ln.Close()
		for _, c := range conns {
			if reset {
				c.SetLinger(0)
			}
			c.Close()
		}
		close(done)
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c.(*net.TCPConn))
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				readRequests(c, codec, func(wire.Request) {
					mu.Lock()
					if seen++; seen == want {
						closeAll()
					}
					mu.Unlock()
				})
			}()
		}
	})
	return ln.Addr().String()
}

// readRequests decodes the binary requests arriving on c and calls fn
// with each (its Payload cleared), until c fails or closes.
func readRequests(c net.Conn, codec wire.Codec, fn func(wire.Request)) {
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		n, err := c.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
		for {
			var req wire.Request
			k, err := codec.DecodeRequest(buf, &req)
			if err != nil || k == 0 {
				break
			}
			req.Payload = nil
			fn(req)
			buf = buf[k:]
		}
	}
}

// TestBackendFails: a back end that dies, closing (FIN) or resetting its
// connections with requests outstanding, makes the front end answer every
// affected request — and every later one, whose re-dial fails — with
// status unavailable (HTTP 503) and a reason, in order, counted as
// upstream_failed; no client hangs.
func TestBackendFails(t *testing.T) {
	const clients, depth = 3, 2
	for _, mode := range []Handoff{Bound, PerThread, Queue} {
		for _, reset := range []bool{false, true} {
			t.Run(fmt.Sprintf("handoff=%s/reset=%v", mode, reset), func(t *testing.T) {
				cfg := testConfig(t, "http")
				codec := cfg.Codec
				// Each client's first request reaches the back end; its
				// second waits for the first's answer.
				addr := fakeBackend(t, clients, reset)
				srv := modeltest.Start(t, func() (*Server, error) {
					return Start(cfg, Options{Backend: addr, Handoff: mode, UpstreamConns: 1})
				})
				var wg sync.WaitGroup
				errs := make(chan error, clients)
				for i := range clients {
					wg.Go(func() {
						errs <- failedRoundTrip(srv.Addr().String(), codec, uint64(i*depth), depth)
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
				if got := srv.Stats().Counters["upstream_failed"]; got != clients*depth {
					t.Errorf("upstream_failed = %d, want %d", got, clients*depth)
				}
			})
		}
	}
}

// failedRoundTrip sends depth pipelined requests and expects each to be
// answered, in order, with status unavailable and a reason.
func failedRoundTrip(addr string, codec wire.Codec, base uint64, depth int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute)) // liveness bound, not a timing assertion
	var out []byte
	for k := range depth {
		out = codec.AppendRequest(out, &wire.Request{ID: base + uint64(k), Op: wire.OpWork, Size: 10})
	}
	if _, err := c.Write(out); err != nil {
		return err
	}
	var buf []byte
	tmp := make([]byte, 4096)
	for k := 0; k < depth; {
		var resp wire.Response
		n, err := codec.DecodeResponse(buf, &resp)
		if err != nil {
			return err
		}
		if n == 0 {
			m, err := c.Read(tmp)
			if err != nil && err != io.EOF {
				return fmt.Errorf("request %d: %w", base+uint64(k), err)
			}
			if m == 0 {
				return fmt.Errorf("request %d: connection closed without an answer", base+uint64(k))
			}
			buf = append(buf, tmp[:m]...)
			continue
		}
		if resp.ID != base+uint64(k) || resp.Status != wire.StatusUnavailable || len(resp.Payload) == 0 {
			return fmt.Errorf("request %d: answer id %d status %v %q; want status unavailable with a reason", base+uint64(k), resp.ID, resp.Status, resp.Payload)
		}
		buf = buf[n:]
		k++
	}
	return nil
}

// TestHandoffCounters: every response is counted once, as a hand-off or
// as its own thread's read, and the modes differ as documented: perthread
// has only own reads, queue only hand-offs, bound at least one own read
// (every leadership turn ends with one; whether it has hand-offs depends
// on the interleaving, which TestBoundHandoff scripts).
func TestHandoffCounters(t *testing.T) {
	const clients, n = 8, 20
	tests := []struct {
		name   string
		opts   Options
		own    bool // own responses are present (else absent)
		off    bool // hand-offs are present (else absent)
		anyOff bool // hand-offs may or may not be present
	}{
		{name: "handoff=bound", opts: Options{Handoff: Bound, UpstreamConns: 1}, own: true, anyOff: true},
		{name: "handoff=perthread", opts: Options{Handoff: PerThread}, own: true},
		{name: "handoff=queue", opts: Options{Handoff: Queue, UpstreamConns: 1}, off: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "binary")
			codec := cfg.Codec
			srv := modeltest.Start(t, func() (*frontendtest.Chain, error) { return startChain(cfg, tc.opts) })
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					for k := range n {
						// one request at a time: all clients' requests interleave on the link
						exchange(t, srv.Addr().String(), codec, []wire.Request{{ID: uint64(i*n + k), Op: wire.OpWork, Block: 20 * time.Microsecond}})
					}
				})
			}
			wg.Wait()
			c := srv.Stats().Counters
			if c["own_responses"]+c["handoffs"] != clients*n {
				t.Errorf("own %d + hand-offs %d responses, want %d", c["own_responses"], c["handoffs"], clients*n)
			}
			if (c["own_responses"] > 0) != tc.own || !tc.anyOff && (c["handoffs"] > 0) != tc.off {
				t.Errorf("own %d, hand-offs %d: want own>0 %v, hand-offs>0 %v", c["own_responses"], c["handoffs"], tc.own, tc.off)
			}
		})
	}
}
