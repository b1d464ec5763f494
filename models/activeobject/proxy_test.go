package activeobject

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"concbench/models/modeltest"
	"concbench/service"
)

// waitBound bounds every wait for a future in these tests. It is a liveness
// bound (a hung scheduler fails the test instead of hanging it), never a
// timing assertion.
const waitBound = 30 * time.Second

// startProxy starts a server over a fresh service with the given ledger and
// returns it with its proxy; the server is closed when the test ends.
func startProxy(t *testing.T, accounts int, initial int64, opts Options) (*Server, *Proxy) {
	t.Helper()
	cfg := modeltest.Config(t, "binary", 0, service.Config{Accounts: accounts, InitialBalance: initial, NsPerIter: 1})
	srv := modeltest.Start(t, func() (*Server, error) { return Start(cfg, opts) })
	return srv, srv.Proxy()
}

// eachObjectCount runs fn as the subtest "objects=N" for N of 2 and 3:
// the tests of money moving between active objects, over one pair of
// objects and over more than one.
func eachObjectCount(t *testing.T, fn func(t *testing.T, objects int)) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("objects=%d", n), func(t *testing.T) { fn(t, n) })
	}
}

// await waits for f within waitBound.
func await(t *testing.T, what string, f *Future) *Future {
	t.Helper()
	if !f.WaitTimeout(waitBound) {
		t.Fatalf("%s: no result within %v", what, waitBound)
	}
	return f
}

// within receives from ch within waitBound (a liveness bound, not a timing
// assertion).
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing within %v", what, waitBound)
		panic("unreachable")
	}
}

func TestOwnerMapsEveryAccountToItsShard(t *testing.T) {
	tests := []struct {
		name              string
		accounts, objects int
	}{
		{name: "even", accounts: 64, objects: 2},
		{name: "uneven", accounts: 10, objects: 3},
		{name: "one-each", accounts: 5, objects: 5},
		{name: "single", accounts: 7, objects: 1},
		{name: "large", accounts: 1 << 20, objects: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Proxy{accounts: uint32(tc.accounts)}
			next := uint32(0)
			for i := range tc.objects {
				first, n := shardRange(i, tc.objects, uint32(tc.accounts))
				if first != next || n == 0 {
					t.Fatalf("object %d owns [%d, %d+%d), want a non-empty range from %d", i, first, first, n, next)
				}
				next = first + n
				p.objs = append(p.objs, &scheduler{index: i})
			}
			if next != uint32(tc.accounts) {
				t.Fatalf("shards cover %d accounts, want %d", next, tc.accounts)
			}
			step := max(1, tc.accounts/4096)
			for a := 0; a < tc.accounts; a += step {
				i := p.owner(uint32(a)).index
				first, n := shardRange(i, tc.objects, uint32(tc.accounts))
				if uint32(a) < first || uint32(a) >= first+n {
					t.Fatalf("account %d mapped to object %d, which owns [%d, %d)", a, i, first, first+n)
				}
			}
			if p.owner(uint32(tc.accounts)) != nil {
				t.Errorf("account %d (does not exist) has an owner", tc.accounts)
			}
		})
	}
}

// TestTransfersConserveMoney runs concurrent transfers between accounts of
// different active objects through the Proxy while an auditor keeps asking
// for the Total: the total must be exact at every moment (money in flight
// between objects included), and once every transfer is done nothing may be
// in flight and the balances alone must hold all the money.
func TestTransfersConserveMoney(t *testing.T) {
	eachObjectCount(t, func(t *testing.T, objects int) {
		const accounts, initial = 48, 1000
		const clients, rounds, depth = 8, 60, 8
		srv, p := startProxy(t, accounts, initial, Options{Objects: objects})
		want := int64(accounts * initial)

		var wg sync.WaitGroup
		errs := make(chan error, clients+1)
		for i := range clients {
			wg.Go(func() {
				x := uint64(i)*0x9e3779b97f4a7c15 + 1
				next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
				fs := make([]*Future, depth)
				for range rounds {
					for k := range fs {
						from := uint32(next() % accounts)
						to := uint32(next() % accounts)
						fs[k] = p.Transfer(from, to, int64(1+next()%300))
					}
					for _, f := range fs {
						if !f.WaitTimeout(waitBound) {
							errs <- errors.New("transfer: no result")
							return
						}
						if f.Err() != nil && f.Err() != service.ErrInsufficientFunds {
							errs <- fmt.Errorf("transfer: %v", f.Err())
							return
						}
					}
				}
			})
		}
		// The auditor: Total and Audit while transfers are in flight.
		stop := make(chan struct{})
		audited := make(chan [2]int)
		go func() {
			audits, inFlight := 0, 0
			defer func() { audited <- [2]int{audits, inFlight} }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f := p.Total()
				if !f.WaitTimeout(waitBound) {
					errs <- errors.New("total: no result")
					return
				}
				if f.Err() != nil || f.Value() != want {
					errs <- fmt.Errorf("total during transfers: %d (%v), want %d", f.Value(), f.Err(), want)
					return
				}
				a, err := p.Audit()
				if err == nil {
					err = a.Check()
				}
				if err != nil {
					errs <- fmt.Errorf("audit during transfers: %v", err)
					return
				}
				audits++
				if a.InFlight != 0 {
					inFlight++
				}
			}
		}()
		wg.Wait()
		close(stop)
		n := <-audited
		t.Logf("%d audits during the transfers, %d of them with money in flight", n[0], n[1])
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}

		a, err := p.Audit()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
		if a.InFlight != 0 || a.Balances != want || a.Initial != want {
			t.Fatalf("after all transfers completed: balances %d, in flight %d, initial %d; want %d, 0, %d",
				a.Balances, a.InFlight, a.Initial, want, want)
		}
		if f := await(t, "total", p.Total()); f.Value() != want {
			t.Fatalf("total after transfers: %d, want %d", f.Value(), want)
		}
		if n := srv.Stats().Counters["cross_shard_transfers"]; n == 0 {
			t.Fatal("no transfer crossed active objects: the test did not exercise the protocol")
		}
	})
}

// TestFlowConservesMoney mixes deposits, withdrawals and transfers from many
// goroutines and checks the audit against the clients' own record of the
// money that entered and left.
func TestFlowConservesMoney(t *testing.T) {
	const accounts, initial = 32, 500
	const clients, ops = 6, 400
	_, p := startProxy(t, accounts, initial, Options{Objects: 2})
	var mu sync.Mutex
	var deposited, withdrawn int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			x := uint64(i)*0x2545f4914f6cdd1d + 7
			next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
			var dep, wd int64
			for range ops {
				a, b, amt := uint32(next()%accounts), uint32(next()%accounts), int64(1+next()%400)
				var f *Future
				op := next() % 3
				switch op {
				case 0:
					f = p.Deposit(a, amt)
				case 1:
					f = p.Withdraw(a, amt, 0)
				default:
					f = p.Transfer(a, b, amt)
				}
				if !f.WaitTimeout(waitBound) {
					errs <- errors.New("no result")
					return
				}
				switch {
				case f.Err() == service.ErrInsufficientFunds:
				case f.Err() != nil:
					errs <- fmt.Errorf("op %d: %v", op, f.Err())
					return
				case op == 0:
					dep += amt
				case op == 1:
					wd += amt
				}
			}
			mu.Lock()
			deposited += dep
			withdrawn += wd
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	a, err := p.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	want := int64(accounts*initial) + deposited - withdrawn
	if a.Deposited != deposited || a.Withdrawn != withdrawn || a.InFlight != 0 || a.Balances != want {
		t.Fatalf("audit %+v; clients deposited %d, withdrew %d: want balances %d, nothing in flight",
			a, deposited, withdrawn, want)
	}
}
