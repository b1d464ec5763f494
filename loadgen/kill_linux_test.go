package loadgen

import (
	"fmt"
	"testing"
	"time"
)

// soakMix is a mix of every operation, money moving both ways.
var soakMix = OpMix{Work: 2, Balance: 1, Deposit: 2, Withdraw: 2, Transfer: 2, Total: 0.5}

// TestKillEveryKeepsMoneyExact kills connections about every 50
// responses, closed loop and pipelined, against a server with a real
// ledger: every request is answered or abandoned (none lost), nothing
// fails but the ledger's own refusals, every deposit and withdrawal has a
// known outcome, every total lies within its bounds, and the ledger's
// money after the run is its money before plus what the acknowledged
// deposits and withdrawals moved.
func TestKillEveryKeepsMoneyExact(t *testing.T) {
	const requests = 3000
	for _, proto := range protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			s := startServer(t, proto, nil)
			money := s.svc.Ledger().Total()
			r := mustRun(t, Config{
				Addr: s.addr(), Protocol: proto, Conns: 4, Closed: true, Depth: 2, Outstanding: 8,
				Requests: requests, Ops: soakMix, Amount: 3, WithdrawWait: time.Millisecond,
				LedgerMoney: money, KillEvery: 50, Seed: 1,
			})
			q := r.Requests
			if q.Kills == 0 || q.Reconnects == 0 {
				t.Errorf("kills %d, reconnects %d: want connections killed and reopened", q.Kills, q.Reconnects)
			}
			if q.Sent != requests || q.Completed+q.Abandoned != q.Sent {
				t.Errorf("requests %+v: want %d sent, each completed or abandoned", q, requests)
			}
			for k, n := range r.Errors {
				if !ExpectedOutcome(k) {
					t.Errorf("errors[%s] = %d, want none but the ledger's refusals (all: %v)", k, n, r.Errors)
				}
			}
			l := r.Ledger
			if l == nil {
				t.Fatal("no ledger flow in the result")
			}
			if l.Unknown != 0 || l.Totals == 0 || l.Deposits == 0 || l.Withdrawals == 0 {
				t.Errorf("ledger %+v: want deposits, withdrawals and totals checked, none of unknown outcome", *l)
			}
			if got, want := s.svc.Ledger().Total(), money+l.Delta(); got != want {
				t.Errorf("the ledger holds %d after the run, want %d + %d = %d", got, money, l.Delta(), want)
			}
		})
	}
}

// TestLedgerFaultsCaught: a ledger that answers a wrong total fails the
// totals' check (verify_total), and an answer that is not a balance
// fails verification (verify_body).
func TestLedgerFaultsCaught(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*testServer)
		ops   OpMix
		kind  string
	}{
		{name: "total", setup: func(s *testServer) { s.skewTotals = 1 << 40 }, ops: soakMix, kind: "verify_total"},
		{name: "balance", setup: func(s *testServer) { s.fault = faultAt(10, faultBody) }, ops: OpMix{Deposit: 1}, kind: "verify_body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, "binary", tc.setup)
			r := mustRun(t, Config{Addr: s.addr(), Protocol: "binary", Conns: 2, Closed: true, Requests: 400,
				Ops: tc.ops, LedgerMoney: s.svc.Ledger().Total(), Seed: 1})
			if r.Errors[tc.kind] == 0 || r.Valid {
				t.Errorf("errors %v, valid %t: want %s counted and the run invalid", r.Errors, r.Valid, tc.kind)
			}
		})
	}
}

// TestDuplicateResponse: a response sent twice is counted as a duplicate
// and skipped, so that every request is still answered by its own
// response.
func TestDuplicateResponse(t *testing.T) {
	const requests = 40
	for _, proto := range protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			s := startServer(t, proto, func(s *testServer) { s.fault = faultAt(10, faultTwice) })
			r := mustRun(t, Config{Addr: s.addr(), Protocol: proto, Conns: 1, Closed: true, Outstanding: 2,
				Requests: requests, Size: Fixed(32), Seed: 1})
			if len(r.Errors) != 1 || r.Errors["verify_duplicate"] != 1 {
				t.Errorf("errors %v, want verify_duplicate 1 alone", r.Errors)
			}
			if q := r.Requests; q.OK != requests || q.Completed != requests {
				t.Errorf("requests %+v: want all %d answered ok", q, requests)
			}
		})
	}
}

// TestRefusedConnectionResent: a server at its limit refuses some of
// the connections the generator reopens after its kills (every other
// one): their requests, which the server never read, are resent on the
// other connections, and the refused connection is reopened after a
// backoff; nothing fails, and the money stays exact.
func TestRefusedConnectionResent(t *testing.T) {
	for _, proto := range protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			const conns = 2
			s := startServer(t, proto, func(s *testServer) {
				s.refuseConn = func(n int64) bool { return n > conns && n%2 == 1 }
			})
			money := s.svc.Ledger().Total()
			r := mustRun(t, Config{
				Addr: s.addr(), Protocol: proto, Conns: conns, Closed: true, Outstanding: 4,
				Requests: 2000, Ops: soakMix, LedgerMoney: money, KillEvery: 100, Seed: 1,
			})
			q := r.Requests
			if q.Refused == 0 || q.Kills == 0 {
				t.Errorf("refused %d, kills %d: want reopened connections refused", q.Refused, q.Kills)
			}
			for k, n := range r.Errors {
				if !ExpectedOutcome(k) {
					t.Errorf("errors[%s] = %d, want none but the ledger's refusals (all: %v)", k, n, r.Errors)
				}
			}
			if q.Completed+q.Abandoned != q.Sent || r.Ledger.Unknown != 0 {
				t.Errorf("requests %+v, ledger %+v: want each answered or abandoned, every money outcome known", q, *r.Ledger)
			}
			if got, want := s.svc.Ledger().Total(), money+r.Ledger.Delta(); got != want {
				t.Errorf("the ledger holds %d after the run, want %d", got, want)
			}
		})
	}
}

// TestConnRequests: with a connection per request (ConnRequests 1) every
// measured request travels on a connection of its own — the server
// accepts a connection per request — and nothing fails; with 3, a
// connection carries 3 requests before it is closed and reopened.
func TestConnRequests(t *testing.T) {
	for _, per := range []int{1, 3} {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprintf("per=%d/closed=%t", per, closed), func(t *testing.T) {
				s := startServer(t, "http", nil)
				// A window of 1 s at 1000 req/s: on a machine busy enough to
				// hold a 300 ms window's every connect past its end ("completed
				// 0", once, in a whole-tree test run), most of these still
				// complete.
				cfg := Config{Addr: s.addr(), Protocol: "http", Conns: 4, ConnRequests: per, Seed: 1,
					Warmup: 100 * time.Millisecond, Duration: time.Second, Limits: Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}}
				if closed {
					cfg.Closed, cfg.Outstanding, cfg.Duration = true, 1, 0
					cfg.Requests = 600
				} else {
					cfg.Rate = 1000
				}
				r := mustRun(t, cfg)
				q := r.Requests
				t.Logf("completed %d, warm-up %d, recycled %d, reconnects %d", q.Completed, q.Warmup, q.Recycled, q.Reconnects)
				if len(r.Errors) != 0 || q.Completed == 0 {
					t.Fatalf("errors %v, requests %+v: want every request answered", r.Errors, q)
				}
				// Every connection but the last few of each worker was closed
				// after exactly per requests and reopened.
				carried := q.Completed + q.Warmup
				if q.Recycled < carried/int64(per)-int64(cfg.Conns) || q.Recycled > carried/int64(per) {
					t.Errorf("recycled %d connections for %d requests, want about %d", q.Recycled, carried, carried/int64(per))
				}
				s.mu.Lock()
				got := int64(len(s.conns))
				s.mu.Unlock()
				if got < q.Recycled {
					t.Errorf("the server accepted %d connections, fewer than the %d the generator reopened", got, q.Recycled)
				}
			})
		}
	}
}
