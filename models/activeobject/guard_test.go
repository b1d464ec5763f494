package activeobject

import (
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// opName names a method request for execution traces.
func opName(mr MethodRequest) string {
	switch r := mr.(type) {
	case *withdrawRequest:
		return fmt.Sprintf("withdraw(%d,%d)", r.acct, r.amt)
	case *depositRequest:
		return fmt.Sprintf("deposit(%d,%d)", r.acct, r.amt)
	case *balanceRequest:
		return fmt.Sprintf("balance(%d)", r.acct)
	}
	return fmt.Sprintf("%T", mr)
}

// trace records the method requests executed, in order.
type trace struct {
	mu  sync.Mutex
	ops []string
}

func (tr *trace) observe(_ int, mr MethodRequest) {
	tr.mu.Lock()
	tr.ops = append(tr.ops, opName(mr))
	tr.mu.Unlock()
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.ops...)
}

// TestGuardDefersWithdrawal issues a withdrawal the balance cannot cover and
// then a deposit that covers it: the withdrawal, issued first, executes
// after the deposit because its guard did not hold until the deposit ran.
func TestGuardDefersWithdrawal(t *testing.T) {
	tr := &trace{}
	srv, p := startProxy(t, 8, 100, Options{Objects: 2, observe: tr.observe})
	w := p.Withdraw(5, 500, time.Hour) // balance 100: the guard fails
	d := p.Deposit(5, 1000)
	await(t, "withdraw", w)
	await(t, "deposit", d)
	if d.Err() != nil || d.Value() != 1100 {
		t.Fatalf("deposit: %d (%v), want 1100: the withdrawal must not have run before it", d.Value(), d.Err())
	}
	if w.Err() != nil || w.Value() != 600 {
		t.Fatalf("withdraw: %d (%v), want 600 (after the deposit)", w.Value(), w.Err())
	}
	if got, want := fmt.Sprint(tr.get()), "[deposit(5,1000) withdraw(5,500)]"; got != want {
		t.Fatalf("execution order %s, want %s", got, want)
	}
	if n := srv.Stats().Counters["guard_deferrals"]; n == 0 {
		t.Error("guard_deferrals is 0: the withdrawal was never passed over")
	}
}

// TestGuardKeepsArrivalOrderAmongRunnable: requests whose guards hold run in
// arrival order, and a deferred request runs as soon as the servant's state
// lets it, before requests that arrived after the one that enabled it.
func TestGuardKeepsArrivalOrderAmongRunnable(t *testing.T) {
	tr := &trace{}
	_, p := startProxy(t, 4, 100, Options{Objects: 1, observe: tr.observe})
	fs := []*Future{
		p.Withdraw(1, 150, time.Hour), // waits for the deposit
		p.Balance(2),
		p.Deposit(1, 100), // enables the withdrawal
		p.Balance(1),      // must see the withdrawal done
	}
	for i, f := range fs {
		await(t, fmt.Sprint("request ", i), f)
	}
	want := "[balance(2) deposit(1,100) withdraw(1,150) balance(1)]"
	if got := fmt.Sprint(tr.get()); got != want {
		t.Fatalf("execution order %s, want %s", got, want)
	}
	if fs[3].Value() != 50 {
		t.Fatalf("balance after deposit and withdrawal: %d, want 50", fs[3].Value())
	}
}

// TestDeadlineExpiresWithoutArrivals: a deferred withdrawal times out even
// though no other request arrives to make the scheduler look at it again —
// the scheduler sleeps on its queue only until the nearest deadline.
func TestDeadlineExpiresWithoutArrivals(t *testing.T) {
	srv, p := startProxy(t, 4, 100, Options{Objects: 2})
	// The request must be deferred before its deadline passes, or it tests
	// nothing about the scheduler waking by itself; on a slow machine the
	// first evaluation may come after a short deadline, so the timeout
	// doubles until a try was deferred.
	for timeout := time.Millisecond; ; timeout *= 2 {
		before := srv.Stats().Counters
		f := p.Withdraw(3, 5000, timeout)
		await(t, "withdraw", f)
		if f.Status() != wire.StatusTimeout || f.Err() != service.ErrTimeout {
			t.Fatalf("withdraw beyond the balance: status %v (%v), want timeout", f.Status(), f.Err())
		}
		after := srv.Stats().Counters
		if after["guard_timeouts"] != before["guard_timeouts"]+1 {
			t.Fatalf("guard_timeouts went from %d to %d, want one more", before["guard_timeouts"], after["guard_timeouts"])
		}
		if after["guard_deferrals"] > before["guard_deferrals"] {
			break // it waited in the activation list and the scheduler woke for it
		}
		if timeout > waitBound {
			t.Fatal("the withdrawal was never deferred")
		}
	}
	if b := await(t, "balance", p.Balance(3)); b.Value() != 100 {
		t.Fatalf("balance after the timed-out withdrawal: %d, want 100", b.Value())
	}
}

func TestWithdrawOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		acct    uint32
		amt     int64
		timeout time.Duration
		want    error
		value   int64
	}{
		{name: "covered", acct: 1, amt: 40, timeout: time.Hour, value: 60},
		{name: "short-no-wait", acct: 1, amt: 400, timeout: 0, want: service.ErrInsufficientFunds},
		{name: "no-account", acct: 99, amt: 1, timeout: time.Hour, want: service.ErrNoAccount},
		{name: "bad-amount", acct: 1, amt: 0, timeout: time.Hour, want: service.ErrBadAmount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, p := startProxy(t, 4, 100, Options{Objects: 2})
			f := await(t, "withdraw", p.Withdraw(tc.acct, tc.amt, tc.timeout))
			if f.Err() != tc.want || (tc.want == nil && f.Value() != tc.value) {
				t.Fatalf("withdraw(%d, %d, %v) = %d, %v; want %d, %v", tc.acct, tc.amt, tc.timeout, f.Value(), f.Err(), tc.value, tc.want)
			}
		})
	}
}

// TestSupplyBoundsTheLedger: the shards share one service.Supply, so a
// deposit on one object is refused once deposits on another have taken the
// ledger's money to math.MaxInt64, the total never wraps, and transfers
// between objects at the limit move the money without loss.
func TestSupplyBoundsTheLedger(t *testing.T) {
	_, p := startProxy(t, 4, 100, Options{Objects: 2}) // accounts 0,1 | 2,3
	big := int64(math.MaxInt64 - 400)
	if f := await(t, "deposit", p.Deposit(3, big)); f.Err() != nil {
		t.Fatal(f.Err())
	}
	f := await(t, "deposit", p.Deposit(0, 1))
	if f.Err() != service.ErrOverflow || f.Status() != wire.StatusOverflow {
		t.Fatalf("deposit beyond the limit on the other object: %v (%v), want %v", f.Err(), f.Status(), service.ErrOverflow)
	}
	if b := await(t, "balance", p.Balance(0)); b.Value() != 100 {
		t.Fatalf("balance after the refused deposit: %d, want 100", b.Value())
	}
	if f := await(t, "transfer", p.Transfer(3, 0, big)); f.Err() != nil || f.Value() != 100 {
		t.Fatalf("transfer at the limit: %d, %v; want 100, nil", f.Value(), f.Err())
	}
	if f := await(t, "total", p.Total()); f.Err() != nil || f.Value() != math.MaxInt64 {
		t.Fatalf("total at the limit: %d, %v; want %d", f.Value(), f.Err(), int64(math.MaxInt64))
	}
	a, err := p.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil || a.InFlight != 0 {
		t.Fatalf("audit at the limit: %+v, %v", a, err)
	}
	if f := await(t, "withdraw", p.Withdraw(0, 7, 0)); f.Err() != nil {
		t.Fatal(f.Err())
	}
	if f := await(t, "deposit", p.Deposit(2, 7)); f.Err() != nil {
		t.Fatalf("deposit into the room a withdrawal made: %v", f.Err())
	}
	if f := await(t, "deposit", p.Deposit(2, 1)); f.Err() != service.ErrOverflow {
		t.Fatalf("deposit beyond the limit again: %v, want %v", f.Err(), service.ErrOverflow)
	}
}

// TestTransferOverflowRefunds: without the shared Supply (the only way a
// balance can reach the limit), a transfer whose credit would overflow the
// destination (on another active object) fails as Ledger.Transfer does,
// and the money debited from the source comes back.
func TestTransferOverflowRefunds(t *testing.T) {
	_, p := startProxy(t, 4, 100, Options{Objects: 2, unboundedLedger: true}) // accounts 0,1 | 2,3
	if f := await(t, "deposit", p.Deposit(3, math.MaxInt64-150)); f.Err() != nil {
		t.Fatal(f.Err())
	}
	f := await(t, "transfer", p.Transfer(0, 3, 80))
	if f.Err() != service.ErrOverflow || f.Status() != wire.StatusOverflow {
		t.Fatalf("overflowing transfer: %v (%v), want %v", f.Err(), f.Status(), service.ErrOverflow)
	}
	if b := await(t, "balance", p.Balance(0)); b.Value() != 100 {
		t.Fatalf("source balance after the refund: %d, want 100", b.Value())
	}
	a, err := p.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil || a.InFlight != 0 {
		t.Fatalf("audit after refund: %+v, %v", a, err)
	}
	// The same transfer within one object fails the same way.
	if f := await(t, "transfer", p.Transfer(2, 3, 80)); f.Err() != service.ErrOverflow {
		t.Fatalf("overflowing transfer in one object: %v", f.Err())
	}
}

// TestCloseWakesEverything: Close wakes a scheduler with a deferred request,
// a client blocked enqueuing on a full activation queue, and a client
// waiting on a future; every future completes with ErrClosed and every
// scheduler thread exits.
func TestCloseWakesEverything(t *testing.T) {
	svcSrv, p := startProxy(t, 4, 100, Options{Objects: 1, QueueCapacity: 1})
	w := p.Withdraw(0, 1000, time.Hour) // deferred: holds the only slot
	if !modeltest.Settle(func() bool { return svcSrv.Stats().Counters["guard_deferrals"] > 0 }) {
		t.Fatal("the withdrawal was never deferred")
	}
	blocked := make(chan *Future)
	go func() { blocked <- p.Deposit(0, 5000) }() // blocks: the queue is full
	q := svcSrv.objs[0].queue
	if !modeltest.Settle(func() bool { return q.stats().enqWaiting == 1 }) {
		t.Fatal("the deposit never blocked on the full queue")
	}
	waited := make(chan bool)
	go func() { w.Wait(); waited <- true }()

	var tids []int
	for _, th := range svcSrv.Stats().PerThread {
		// The main thread (m0) is never destroyed: a locked goroutine that
		// exits on it leaves it wedged (modeltest skips it too).
		if th.Role == "scheduler" && th.TID != os.Getpid() {
			tids = append(tids, th.TID)
		}
	}
	if err := svcSrv.Close(); err != nil {
		t.Fatal(err)
	}
	d := within(t, "blocked deposit", blocked)
	within(t, "client waiting on a future", waited)
	for name, f := range map[string]*Future{"deferred withdrawal": w, "blocked deposit": d} {
		if !f.Ready() || f.Err() != ErrClosed || f.Status() != wire.StatusUnavailable {
			t.Errorf("%s after Close: ready %v, %v (%v); want %v", name, f.Ready(), f.Err(), f.Status(), ErrClosed)
		}
	}
	if f := await(t, "after close", p.Balance(0)); f.Err() != ErrClosed {
		t.Errorf("a call after Close: %v, want %v", f.Err(), ErrClosed)
	}
	for _, tid := range tids {
		if !modeltest.Settle(func() bool { _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); return err != nil }) {
			t.Errorf("scheduler thread %d alive after Close", tid)
		}
	}
}

// TestRefundWaitsForRoomAndStaysAudited drives the rarest path of a
// transfer between objects, reachable only without the shared Supply: the
// credit overflows the destination, and by the
// time the refund reaches the source, the source account has no room for
// it either. The refund waits in the activation list (its guard), its money
// is counted in flight by every snapshot meanwhile, and it completes once a
// withdrawal makes room.
func TestRefundWaitsForRoomAndStaysAudited(t *testing.T) {
	reached, release := make(chan bool, 1), make(chan struct{})
	var once sync.Once
	hook := func(_ int, mr MethodRequest) {
		if _, ok := mr.(*transferInRequest); ok {
			once.Do(func() { reached <- true; <-release })
		}
	}
	srv, p := startProxy(t, 4, 100, Options{Objects: 2, observe: hook, unboundedLedger: true}) // accounts 0,1 | 2,3
	if f := await(t, "deposit", p.Deposit(3, math.MaxInt64-150)); f.Err() != nil {
		t.Fatal(f.Err())
	}
	tr := p.Transfer(0, 3, 80)        // debits 0 to 20; the credit to 3 will overflow
	within(t, "transfer in", reached) // object 1 is about to run the TransferIn
	if f := await(t, "deposit", p.Deposit(0, math.MaxInt64-50)); f.Err() != nil {
		t.Fatal(f.Err()) // account 0 now has no room for the refund of 80
	}
	before := srv.Stats().Counters["guard_deferrals"]
	close(release)
	if !modeltest.Settle(func() bool { return srv.Stats().Counters["guard_deferrals"] > before }) {
		t.Fatal("the refund was never deferred")
	}
	if tr.Ready() {
		t.Fatalf("transfer completed (%v) while its refund waits for room", tr.Err())
	}
	d1, d2 := int64(math.MaxInt64-150), int64(math.MaxInt64-50)
	deposited := d1 + d2 // wraps, as the ledger's flow counters do
	a, err := p.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil || a.InFlight != 80 || a.Deposited != deposited {
		t.Fatalf("audit while the refund waits: %+v (%v); want 80 in flight", a, err)
	}
	if f := await(t, "withdraw", p.Withdraw(0, 1000, 0)); f.Err() != nil {
		t.Fatal(f.Err())
	}
	await(t, "transfer", tr)
	if tr.Err() != service.ErrOverflow {
		t.Fatalf("transfer: %v, want %v", tr.Err(), service.ErrOverflow)
	}
	a, err = p.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil || a.InFlight != 0 {
		t.Fatalf("audit after the refund: %+v (%v); want nothing in flight", a, err)
	}
	if b := await(t, "balance", p.Balance(0)); b.Value() != math.MaxInt64-50+100-1000 {
		t.Fatalf("balance of the source: %d, want %d", b.Value(), int64(math.MaxInt64-50+100-1000))
	}
}
