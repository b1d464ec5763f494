package activeobject

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// wireClient is a minimal client over one connection to a server started
// for the test.
type wireClient struct {
	t     *testing.T
	srv   *Server
	codec wire.Codec
	c     net.Conn
	in    []byte
}

// dialNew starts a server (2 active objects, 8 accounts of 100) speaking
// codec and connects to it; both are closed when the test ends.
func dialNew(t *testing.T, codec wire.Codec) *wireClient {
	t.Helper()
	svc, err := service.New(service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: svc}, Options{Objects: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitBound))
	return &wireClient{t: t, srv: srv, codec: codec, c: c}
}

// send writes reqs back to back in one write.
func (w *wireClient) send(reqs ...wire.Request) {
	w.t.Helper()
	var raw []byte
	for i := range reqs {
		raw = w.codec.AppendRequest(raw, &reqs[i])
	}
	if _, err := w.c.Write(raw); err != nil {
		w.t.Fatal(err)
	}
}

// recv reads the next response into resp and returns its raw bytes, valid
// until the next recv.
func (w *wireClient) recv(resp *wire.Response) []byte {
	w.t.Helper()
	for {
		n, err := w.codec.DecodeResponse(w.in, resp)
		if err != nil {
			w.t.Fatal(err)
		}
		if n > 0 {
			raw := w.in[:n]
			w.in = w.in[n:]
			return raw
		}
		buf := make([]byte, 64<<10)
		m, err := w.c.Read(buf)
		if m == 0 && err != nil {
			w.t.Fatal(err)
		}
		w.in = append(w.in, buf[:m]...)
	}
}

// TestResponsesMatchService sends ledger and work requests one at a time
// and checks that every response is byte for byte what service.Do (the
// monitor-object ledger every other model uses) answers to the same
// sequence.
func TestResponsesMatchService(t *testing.T) {
	all := []wire.Request{
		{ID: 1, Op: wire.OpDeposit, Account: 1, Amount: 50},
		{ID: 2, Op: wire.OpTransfer, Account: 1, To: 6, Amount: 120}, // between objects
		{ID: 3, Op: wire.OpTransfer, Account: 6, To: 7, Amount: 20},  // within one
		{ID: 4, Op: wire.OpBalance, Account: 6},
		{ID: 5, Op: wire.OpWithdraw, Account: 0, Amount: 500},
		{ID: 6, Op: wire.OpWithdraw, Account: 0, Amount: 500, Timeout: time.Millisecond},
		{ID: 7, Op: wire.OpWithdraw, Account: 2, Amount: 30, CPU: time.Microsecond},
		{ID: 8, Op: wire.OpBalance, Account: 99},
		{ID: 9, Op: wire.OpTransfer, Account: 1, To: 99, Amount: 1},
		{ID: 10, Op: wire.OpTransfer, Account: 99, To: 1, Amount: 1},
		{ID: 11, Op: wire.OpTransfer, Account: 2, To: 5, Amount: 1000},
		{ID: 12, Op: wire.OpTotal},
		{ID: 13, Op: wire.OpWork, Size: 300, CPU: 2 * time.Microsecond},
		{ID: 14, Op: wire.OpWork},
		{ID: 15, Op: wire.OpTotal, Close: true}, // HTTP only: a binary frame cannot ask to close
	}
	for _, proto := range wire.Protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			codec, err := wire.New(proto, wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := service.New(service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})
			if err != nil {
				t.Fatal(err)
			}
			reqs := all
			if proto == "binary" {
				reqs = all[:len(all)-1]
			}
			w := dialNew(t, codec)
			var resp wire.Response
			for _, r := range reqs {
				w.send(r)
				var want wire.Response
				ref.Do(&r, &want, nil)
				wantRaw := codec.AppendResponse(nil, &want)
				if got := w.recv(&resp); !bytes.Equal(got, wantRaw) {
					t.Fatalf("request %d (%v): response\n%q\nwant\n%q", r.ID, r.Op, got, wantRaw)
				}
			}
			if proto == "http" {
				// The last request asked to close: the server closes.
				if m, err := w.c.Read(make([]byte, 1)); m != 0 || err != io.EOF {
					t.Fatalf("after a closing request: read %d, %v; want EOF", m, err)
				}
			}
			a, err := w.srv.Proxy().Audit()
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Check(); err != nil {
				t.Fatal(err)
			}
			if err := ref.Ledger().Audit(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestResponsesLeaveInRequestOrder pipelines, on one connection, a
// withdrawal that must wait for a deposit (object 0), then a balance
// (object 1) and a work request. The later requests complete first; their
// responses must still leave after the withdrawal's, in request order.
func TestResponsesLeaveInRequestOrder(t *testing.T) {
	for _, proto := range wire.Protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			codec, err := wire.New(proto, wire.Limits{MaxWork: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			w := dialNew(t, codec)
			reqs := []wire.Request{
				{ID: 1, Op: wire.OpWithdraw, Account: 0, Amount: 500, Timeout: time.Hour},
				{ID: 2, Op: wire.OpBalance, Account: 7},
				{ID: 3, Op: wire.OpWork, Size: 40},
			}
			w.send(reqs...)
			// Object 1 has answered the balance, while the withdrawal waits.
			if !modeltest.Settle(func() bool { return w.srv.objs[1].calls.Load() >= 1 }) {
				t.Fatal("the balance request never ran")
			}
			if f := await(t, "deposit", w.srv.Proxy().Deposit(0, 1000)); f.Err() != nil {
				t.Fatal(f.Err())
			}
			var resp wire.Response
			for i := range reqs {
				w.recv(&resp)
				if err := wire.Verify(&reqs[i], &resp); err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				if resp.Status != wire.StatusOK {
					t.Fatalf("response %d: status %v", i, resp.Status)
				}
			}
		})
	}
}
