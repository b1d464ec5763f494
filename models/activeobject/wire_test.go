package activeobject

import (
	"bytes"
	"io"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// wireClient is a client over one connection to a server started for
// the test.
type wireClient struct {
	*modeltest.Client
	srv *Server
}

// dialNew starts a server (2 active objects, 8 accounts of 100) speaking
// codec and connects to it; both are closed when the test ends.
func dialNew(t *testing.T, codec wire.Codec) *wireClient {
	t.Helper()
	cfg := models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: modeltest.Service(t, service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})}
	srv := modeltest.Start(t, func() (*Server, error) { return Start(cfg, Options{Objects: 2}) })
	return &wireClient{Client: modeltest.Connect(t, nil, srv.Addr().String(), codec), srv: srv}
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
			codec := modeltest.Codec(t, proto, wire.Limits{})
			ref := modeltest.Service(t, service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})
			reqs := all
			if proto == "binary" {
				reqs = all[:len(all)-1]
			}
			w := dialNew(t, codec)
			var resp wire.Response
			for _, r := range reqs {
				if err := w.Send(&r); err != nil {
					t.Fatal(err)
				}
				var want wire.Response
				ref.Do(&r, &want, nil)
				wantRaw := codec.AppendResponse(nil, &want)
				got, err := w.RecvRaw(&resp)
				if err != nil {
					t.Fatalf("request %d (%v): %v", r.ID, r.Op, err)
				}
				if !bytes.Equal(got, wantRaw) {
					t.Fatalf("request %d (%v): response\n%q\nwant\n%q", r.ID, r.Op, got, wantRaw)
				}
			}
			if proto == "http" {
				// The last request asked to close: the server closes.
				if m, err := w.Conn().Read(make([]byte, 1)); m != 0 || err != io.EOF {
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
			codec := modeltest.Codec(t, proto, wire.Limits{MaxWork: time.Hour})
			w := dialNew(t, codec)
			reqs := []*wire.Request{
				{ID: 1, Op: wire.OpWithdraw, Account: 0, Amount: 500, Timeout: time.Hour},
				{ID: 2, Op: wire.OpBalance, Account: 7},
				{ID: 3, Op: wire.OpWork, Size: 40},
			}
			if err := w.Send(reqs...); err != nil {
				t.Fatal(err)
			}
			// Object 1 has answered the balance, while the withdrawal waits.
			if !modeltest.Settle(func() bool { return w.srv.objs[1].calls.Load() >= 1 }) {
				t.Fatal("the balance request never ran")
			}
			if f := await(t, "deposit", w.srv.Proxy().Deposit(0, 1000)); f.Err() != nil {
				t.Fatal(f.Err())
			}
			if err := w.Expect(reqs...); err != nil {
				t.Fatal(err)
			}
		})
	}
}
