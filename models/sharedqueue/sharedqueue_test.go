package sharedqueue

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

const (
	testAccounts = 16
	testInitial  = 1000
)

// testConfig is a server of threads threads speaking the binary protocol,
// with a ledger of testAccounts accounts.
func testConfig(t *testing.T, threads int) models.Config {
	t.Helper()
	return modeltest.Config(t, "binary", threads, service.Config{Accounts: testAccounts, InitialBalance: testInitial, NsPerIter: 1})
}

// startTest starts a server with hooks and, when t ends, closes it and
// checks that no shard's handlers overlapped (unless the hooks break the
// strands on purpose) and that every shard's ledger passes its audit.
func startTest(t *testing.T, threads int, opts Options, hk hooks) *Server {
	t.Helper()
	s, err := start(testConfig(t, threads), opts, hk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if !hk.unserialized {
			checkNoOverlap(t, s)
		}
		for _, sh := range s.shards {
			if err := sh.ledger.Audit(int64(sh.ledger.Accounts()) * testInitial); err != nil {
				t.Errorf("shard %d: %v", sh.idx, err)
			}
		}
	})
	return s
}

// client is a modeltest.Client that fails t on errors.
type client struct {
	t *testing.T
	c *modeltest.Client
	n uint64
}

func dialTest(t *testing.T, s *Server) *client {
	t.Helper()
	c, err := modeltest.Dial(s.Addr().String(), s.cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c}
}

// send sends req with the client's next id and returns it.
func (c *client) send(req wire.Request) *wire.Request {
	c.t.Helper()
	c.n++
	req.ID = c.n
	if err := c.c.Send(&req); err != nil {
		c.t.Fatal(err)
	}
	return &req
}

// recv reads the response to req and returns its status and value.
func (c *client) recv(req *wire.Request) (wire.Status, int64) {
	c.t.Helper()
	var resp wire.Response
	if err := c.c.Recv(&resp); err != nil {
		c.t.Fatalf("request %d: %v", req.ID, err)
	}
	if err := wire.Verify(req, &resp); err != nil {
		c.t.Fatal(err)
	}
	if resp.Status != wire.StatusOK {
		return resp.Status, 0
	}
	v, err := strconv.ParseInt(string(resp.Payload), 10, 64)
	if err != nil {
		c.t.Fatalf("request %d: payload %q", req.ID, resp.Payload)
	}
	return resp.Status, v
}

// do is send then recv.
func (c *client) do(req wire.Request) (wire.Status, int64) {
	c.t.Helper()
	return c.recv(c.send(req))
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		shards, want int // want 0: refused
	}{
		{shards: 0, want: DefaultShards},
		{shards: 3, want: 3},
		{shards: testAccounts + 5, want: testAccounts},
		{shards: -1},
		{shards: MaxShards + 1},
	} {
		t.Run(fmt.Sprint(tc.shards), func(t *testing.T) {
			s, err := Start(testConfig(t, 1), Options{Shards: tc.shards})
			if tc.want == 0 {
				if err == nil {
					s.Close()
					t.Fatalf("shards %d accepted", tc.shards)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.Stats().Counters["shards"]; got != uint64(tc.want) {
				t.Fatalf("shards %d: %d shards, want %d", tc.shards, got, tc.want)
			}
		})
	}
}

// TestCompletion shows where each completion mode runs a write's
// completion: Posted posts one per response written at once, Inline none,
// and with either the acceptor posts itself once after taking the one
// connection. With Posted the handle is re-armed only by the write
// handler, so once a response arrives the posts of the responses before
// it have happened.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		mode   Completion
		posted bool
	}{
		{mode: Posted, posted: true},
		{mode: Inline},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			s := startTest(t, 2, Options{Completion: tc.mode}, hooks{})
			c := dialTest(t, s)
			const n = 10
			for i := range n + 1 {
				op := wire.OpBalance
				if i%2 == 0 {
					op = wire.OpDeposit
				}
				if st, _ := c.do(wire.Request{Op: op, Account: uint32(i % testAccounts), Amount: 1}); st != wire.StatusOK {
					t.Fatalf("request %d: status %v", i, st)
				}
			}
			st := s.Stats()
			if got := st.Counters["posted_writes"]; tc.posted && (got < n || got > n+1) || !tc.posted && got != 0 {
				t.Errorf("%d writes posted after %d responses, want %v", got, n+1, map[bool]string{true: "10 or 11", false: "0"}[tc.posted])
			}
			// The acceptor counts its post after registering the
			// connection, which may be served first.
			modeltest.WaitFor(t, "the accept posted after the one connection", func() bool {
				return s.Stats().Counters["posted_accepts"] == 1
			})
		})
	}
	if _, err := Start(testConfig(t, 1), Options{Completion: Inline + 1}); err == nil {
		t.Error("an unknown completion mode was accepted")
	}
}

// bareServer is a server with shards and a scheduler but no threads, no
// handle set and no listener: the strands' logic alone, driven by the
// test.
func bareServer(t *testing.T, shards int) *Server {
	s := &Server{cfg: testConfig(t, 1), accounts: testAccounts}
	s.sched.wakeup.L = &s.sched.mu
	s.sched.taskInterrupted = true // no reactor to interrupt
	supply := service.NewSupply(testAccounts * testInitial)
	for i := range shards {
		first, n := shardRange(i, shards, testAccounts)
		s.shards = append(s.shards, &shard{idx: i, s: s, ledger: service.NewShard(first, n, testInitial, supply)})
	}
	return s
}

// request returns a connection of s with a ledger call of kind k begun.
func request(s *Server, k callKind, account uint32, amount int64) *conn {
	c := &conn{s: s}
	c.call = call{kind: k, account: account, amount: amount, c: c}
	c.state.Store(callRunning)
	return c
}

// TestStrand drives one strand by hand: handlers that arrive while it is
// held wait, in order, whether dispatched or posted; the holder's exit
// queues the strand on the scheduler with them, and its run executes them
// in arrival order and frees it; a free strand runs a dispatched handler
// at once, but a posted one only from the queue, and a dispatch behind
// that waits for it, in the strand's next run, which the run before
// queues as its continuation: on its thread's private queue, not the
// shared one.
func TestStrand(t *testing.T) {
	s := bareServer(t, 1)
	sh := s.shards[0]
	th := &thread{s: s}
	sh.locked = true // another thread is in the strand

	dep := request(s, kindDeposit, 0, 1000)
	sh.dispatch(&dep.call)
	wd := request(s, kindWithdraw, 0, 1500) // needs the deposit first
	sh.post(&wd.call)
	if dep.state.Load() != callRunning || wd.state.Load() != callRunning || !s.sched.queue.empty() {
		t.Fatal("a handler ran, or the strand was queued, while another thread held the strand")
	}
	if !sh.exitStrand() || !sh.locked {
		t.Fatal("the holder's exit unlocked the strand with handlers waiting")
	}
	s.sched.post(sh) // as the holder's dispatch does
	if o := s.sched.queue.pop(); o != op(sh) {
		t.Fatalf("after the holder's exit: queue held %v, want the strand", o)
	}
	sh.perform(th)
	if dep.call.v != 2000 || wd.call.err != nil || wd.call.v != 500 {
		t.Fatalf("deposit then withdrawal: %d, (%d, %v); want 2000, then 500", dep.call.v, wd.call.v, wd.call.err)
	}
	if sh.locked || !s.sched.queue.empty() {
		t.Fatal("the strand is held or queued after its run")
	}

	bal := request(s, kindBalance, 0, 0)
	sh.dispatch(&bal.call)
	if bal.state.Load() != callDone || bal.call.v != 500 {
		t.Fatal("a handler dispatched to a free strand did not run at once")
	}
	posted := request(s, kindDeposit, 0, 1)
	sh.post(&posted.call)
	after := request(s, kindBalance, 0, 0)
	sh.dispatch(&after.call)
	if posted.state.Load() != callRunning || after.state.Load() != callRunning {
		t.Fatal("a posted handler ran on the poster's thread, or a dispatch overtook it")
	}
	// The run takes the handlers ready when it was queued; the one that
	// arrived meanwhile runs in the strand's next run, queued by its exit.
	for run := range 2 {
		if o := s.sched.queue.pop(); o != op(sh) {
			t.Fatalf("run %d: queue held %v, want the strand", run, o)
		}
		sh.perform(th)
		if run == 0 && (!s.sched.queue.empty() || th.private.n != 1 || s.continuations.Load() != 1) {
			t.Fatal("the strand's next run was not queued as its run's continuation, on the thread's private queue")
		}
		s.sched.pushAll(&th.private) // as the thread does when its op returns
	}
	if posted.state.Load() != callDone || after.call.v != 501 || sh.locked || !s.sched.queue.empty() {
		t.Fatalf("balance after the posted deposit: %d (locked %v), want 501 and a free strand", after.call.v, sh.locked)
	}
	if sh.inline.Load() != 1 || sh.queued.Load() != 4 || sh.runs.Load() != 3 {
		t.Errorf("counters: %d inline, %d queued, %d runs; want 1, 4, 3", sh.inline.Load(), sh.queued.Load(), sh.runs.Load())
	}
}

// TestMoneyConserved runs transfers between random accounts of every
// shard over many connections while another connection takes Totals: each
// Total is the ledger's money at a consistent cut, so it never differs
// from the initial money, with transfers in flight between shards or not;
// no shard's handlers overlap (startTest).
func TestMoneyConserved(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	s := startTest(t, 4, Options{Shards: 4}, hooks{})
	const conns, rounds, depth = 8, 40, 4
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the connections close (cleanups run last first)
	var running atomic.Int32
	running.Store(conns)
	errs := make([]error, conns)
	for i := range conns {
		c := dialTest(t, s).c
		wg.Go(func() {
			defer running.Add(-1)
			errs[i] = transfers(c, uint64(i), rounds, depth)
		})
	}
	audit := dialTest(t, s)
	totals := 0
	for running.Load() > 0 || totals == 0 {
		if st, v := audit.do(wire.Request{Op: wire.OpTotal}); st != wire.StatusOK || v != testAccounts*testInitial {
			t.Fatalf("total %d (status %v) during transfers, want %d", v, st, testAccounts*testInitial)
		}
		totals++
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	t.Logf("%d totals; counters %v", totals, st.Counters)
	if st.Counters["cross_shard_transfers"] == 0 {
		t.Error("no transfer crossed shards")
	}
	var requests uint64
	for _, th := range st.PerThread {
		requests += th.Requests
	}
	if requests != st.Requests || st.Requests != uint64(conns*rounds*depth+totals) {
		t.Errorf("per-thread requests sum to %d, server %d, sent %d", requests, st.Requests, conns*rounds*depth+totals)
	}
}

// transfers makes rounds round trips of depth pipelined transfers
// between random accounts (seeded by seed) on c, and returns the first
// failure: an error, or a status other than ok and insufficient funds.
func transfers(c *modeltest.Client, seed uint64, rounds, depth int) error {
	x := seed*0x9e3779b97f4a7c15 + 1
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	reqs := make([]*wire.Request, depth)
	id := uint64(0)
	for range rounds {
		for k := range reqs {
			from := uint32(next() % testAccounts)
			to := (from + 1 + uint32(next()%(testAccounts-1))) % testAccounts
			id++
			reqs[k] = &wire.Request{ID: id, Op: wire.OpTransfer, Account: from, To: to, Amount: int64(1 + next()%300)}
		}
		if err := c.Send(reqs...); err != nil {
			return err
		}
		var resp wire.Response
		for _, r := range reqs {
			if err := c.Recv(&resp); err != nil {
				return err
			}
			if err := wire.Verify(r, &resp); err != nil {
				return err
			}
			if resp.Status != wire.StatusOK && resp.Status != wire.StatusInsufficientFunds {
				return fmt.Errorf("transfer %d→%d: status %v", r.Account, r.To, resp.Status)
			}
		}
	}
	return nil
}

// TestOwnerCheckDetectsOverlap breaks the strands on purpose (dispatch
// runs every handler at once) and checks that the owner check sees two
// handlers in one servant: the first handler in waits inside the servant
// until the check reports the second, which another thread runs for
// another connection. With the strand intact the second would wait for
// the first, and the first would wait in vain.
func TestOwnerCheckDetectsOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var first atomic.Bool
	s := startTest(t, 4, Options{Shards: 1}, hooks{unserialized: true, inServant: func(sh *shard) {
		if first.CompareAndSwap(false, true) {
			modeltest.Settle(func() bool { return sh.violations.Load() > 0 })
		}
	}})
	a, b := dialTest(t, s), dialTest(t, s)
	ra := a.send(wire.Request{Op: wire.OpBalance, Account: 1})
	modeltest.WaitFor(t, "the first handler inside the servant", first.Load)
	if st, v := b.do(wire.Request{Op: wire.OpBalance, Account: 2}); st != wire.StatusOK || v != testInitial {
		t.Fatalf("second balance: %v %d", st, v)
	}
	if st, v := a.recv(ra); st != wire.StatusOK || v != testInitial {
		t.Fatalf("first balance: %v %d", st, v)
	}
	if n := s.shards[0].violations.Load(); n == 0 {
		t.Fatal("the owner check saw no overlap")
	}
}

// TestGuardedWithdraw: a withdrawal short of funds waits in its shard,
// holding no thread, until a deposit to the shard or a credit from
// another shard covers it; one whose timeout passes first fails with
// StatusTimeout, on an otherwise idle server, so the reactor must wake for
// its deadline.
func TestGuardedWithdraw(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	s := startTest(t, 2, Options{Shards: 2}, hooks{})
	a, b := dialTest(t, s), dialTest(t, s)
	waits := func(n uint64) func() bool { return func() bool { return s.Stats().Counters["guard_waits"] == n } }

	// Covered by a deposit to the same account.
	w := a.send(wire.Request{Op: wire.OpWithdraw, Account: 3, Amount: 1500, Timeout: wire.DefaultMaxWork})
	modeltest.WaitFor(t, "the withdrawal waiting", waits(1))
	if st, _ := b.do(wire.Request{Op: wire.OpDeposit, Account: 3, Amount: 1000}); st != wire.StatusOK {
		t.Fatalf("deposit: %v", st)
	}
	if st, v := a.recv(w); st != wire.StatusOK || v != 500 {
		t.Fatalf("withdrawal after the deposit: %v %d, want ok 500", st, v)
	}

	// Covered by a transfer from the other shard.
	last := uint32(testAccounts - 1)
	w = a.send(wire.Request{Op: wire.OpWithdraw, Account: last, Amount: 1500, Timeout: wire.DefaultMaxWork})
	modeltest.WaitFor(t, "the second withdrawal waiting", waits(2))
	if st, v := b.do(wire.Request{Op: wire.OpTransfer, Account: 0, To: last, Amount: 600}); st != wire.StatusOK || v != 400 {
		t.Fatalf("transfer: %v %d, want ok 400", st, v)
	}
	if st, v := a.recv(w); st != wire.StatusOK || v != 100 {
		t.Fatalf("withdrawal after the transfer: %v %d, want ok 100", st, v)
	}

	// Never covered.
	if st, _ := a.do(wire.Request{Op: wire.OpWithdraw, Account: 5, Amount: 5000, Timeout: 20 * time.Millisecond}); st != wire.StatusTimeout {
		t.Fatalf("withdrawal never covered: %v, want timeout", st)
	}
	if st := s.Stats(); st.Counters["guard_timeouts"] != 1 || st.Counters["cross_shard_transfers"] != 1 {
		t.Errorf("counters %v", st.Counters)
	}
	// The deposit stays; give the withdrawn money back for the audit.
	for _, r := range []wire.Request{
		{Op: wire.OpDeposit, Account: 3, Amount: 1500},
		{Op: wire.OpWithdraw, Account: 3, Amount: 1000},
		{Op: wire.OpDeposit, Account: last, Amount: 1500},
		{Op: wire.OpTransfer, Account: last, To: 0, Amount: 600},
	} {
		if st, _ := b.do(r); st != wire.StatusOK {
			t.Fatalf("%v: %v", r.Op, st)
		}
	}
	if st, v := b.do(wire.Request{Op: wire.OpTotal}); st != wire.StatusOK || v != testAccounts*testInitial {
		t.Fatalf("total %d, want %d", v, testAccounts*testInitial)
	}
}
