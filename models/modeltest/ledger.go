package modeltest

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"concbench/wire"
)

func testLedger(t *testing.T, e *env) {
	const conns, batches, depth = 16, 10, 4
	srv := e.startServer(t)
	addr := srv.Addr().String()
	err := parallel(conns, func(i int) error {
		c, err := dial(addr, e.codec)
		if err != nil {
			return err
		}
		defer c.close()
		x := uint64(i)*0x9e3779b97f4a7c15 + 1
		next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
		reqs := make([]*wire.Request, depth)
		for b := range batches {
			for k := range reqs {
				from := uint32(next() % ledgerAccounts)
				to := (from + 1 + uint32(next()%(ledgerAccounts-1))) % ledgerAccounts
				reqs[k] = &wire.Request{ID: uint64(b*depth + k), Op: wire.OpTransfer,
					Account: from, To: to, Amount: int64(1 + next()%200)}
			}
			if err := c.send(reqs...); err != nil {
				return err
			}
			var resp wire.Response
			for _, r := range reqs {
				if err := c.recvChecked(r, &resp); err != nil {
					return err
				}
				if resp.Status != wire.StatusOK && resp.Status != wire.StatusInsufficientFunds {
					return fmt.Errorf("transfer %d→%d of %d: status %v", r.Account, r.To, r.Amount, resp.Status)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, nil, addr, e.codec)
	total := &wire.Request{ID: 1, Op: wire.OpTotal}
	if err := c.send(total); err != nil {
		t.Fatal(err)
	}
	var resp wire.Response
	if err := c.recv(&resp); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(ledgerAccounts * ledgerInitial); resp.Status != wire.StatusOK || string(resp.Payload) != want {
		t.Fatalf("total after concurrent transfers: status %v, %q; want %s (money not conserved)", resp.Status, resp.Payload, want)
	}
}

// testLedgerLimits drives the ledger to its limit: a deposit that would
// take the ledger's money above math.MaxInt64 is refused with
// StatusOverflow and changes nothing, /total stays exact (never wraps) at
// the limit, transfers there succeed, and the test gives back what it
// deposited, so the suite's shared ledger is as it found it.
func testLedgerLimits(t *testing.T, e *env) {
	srv := e.startServer(t)
	c := connect(t, nil, srv.Addr().String(), e.codec)
	var id uint64
	do := func(r wire.Request) (wire.Status, int64) {
		t.Helper()
		id++
		r.ID = id
		if err := c.send(&r); err != nil {
			t.Fatal(err)
		}
		var resp wire.Response
		if err := c.recvChecked(&r, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Status != wire.StatusOK {
			return resp.Status, 0
		}
		v, err := strconv.ParseInt(string(resp.Payload), 10, 64)
		if err != nil {
			t.Fatalf("%v: payload %q: %v", r.Op, resp.Payload, err)
		}
		return resp.Status, v
	}
	expect := func(what string, r wire.Request, want wire.Status) {
		t.Helper()
		if st, _ := do(r); st != want {
			t.Fatalf("%s: status %v, want %v", what, st, want)
		}
	}
	total := func() int64 {
		t.Helper()
		st, v := do(wire.Request{Op: wire.OpTotal})
		if st != wire.StatusOK {
			t.Fatalf("total: status %v", st)
		}
		return v
	}
	const first, last = 0, ledgerAccounts - 1 // on different shards where a model shards the ledger
	t0 := total()
	room := int64(math.MaxInt64) - t0
	expect("deposit up to the limit", wire.Request{Op: wire.OpDeposit, Account: first, Amount: room}, wire.StatusOK)
	expect("deposit past the limit", wire.Request{Op: wire.OpDeposit, Account: last, Amount: 1}, wire.StatusOverflow)
	if got := total(); got != math.MaxInt64 {
		t.Fatalf("total at the limit: %d, want %d", got, int64(math.MaxInt64))
	}
	expect("transfer at the limit", wire.Request{Op: wire.OpTransfer, Account: first, To: last, Amount: room / 2}, wire.StatusOK)
	if got := total(); got != math.MaxInt64 {
		t.Fatalf("total after a transfer at the limit: %d, want %d", got, int64(math.MaxInt64))
	}
	expect("transfer back", wire.Request{Op: wire.OpTransfer, Account: last, To: first, Amount: room / 2}, wire.StatusOK)
	expect("withdraw the deposit", wire.Request{Op: wire.OpWithdraw, Account: first, Amount: room}, wire.StatusOK)
	if got := total(); got != t0 {
		t.Fatalf("total after giving the deposit back: %d, want %d", got, t0)
	}
}
