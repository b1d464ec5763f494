package acceptmutex

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// testConfig returns a configuration for a test server with the given
// number of workers, speaking the binary protocol.
func testConfig(t testing.TB, threads int) models.Config {
	t.Helper()
	return modeltest.Config(t, "binary", threads, service.Config{Accounts: 64, NsPerIter: 1})
}

// startTest starts a server with hooks and closes it when t ends.
func startTest(t testing.TB, cfg models.Config, opts Options, hk hooks) *Server {
	t.Helper()
	return modeltest.Start(t, func() (*Server, error) { return start(cfg, opts, hk) })
}

// dialTest connects a client to s; the connection closes when t ends.
func dialTest(t testing.TB, s *Server) *modeltest.Client {
	t.Helper()
	return modeltest.Connect(t, nil, s.Addr().String(), s.g.Cfg.Codec)
}

// work is a small work request with id.
func work(id uint64) *wire.Request { return &wire.Request{ID: id, Op: wire.OpWork, Size: 16} }

// TestMutexNeverWaitedOn holds the accept mutex for a worker that does not
// exist: the workers keep trying it, each round, without ever waiting on
// it (their misses go on counting), nobody accepts, and once it is freed
// a worker takes it at its next try, which nobody woke it for, and serves
// the connection that waited in the backlog.
func TestMutexNeverWaitedOn(t *testing.T) {
	testenv.EndToEnd(t)
	const workers = 2
	cfg := testConfig(t, workers)
	s := startTest(t, cfg, Options{Accept: Mutex, AcceptDelay: 2 * time.Millisecond}, hooks{holdMutex: true})
	if h := s.mu.holder(); h != workers {
		t.Fatalf("the lock's holder is %d, want the test's %d", h, workers)
	}
	c := dialTest(t, s) // the kernel completes the handshake; the connection waits in the backlog
	req := work(1)
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	modeltest.WaitFor(t, "the workers to keep missing the lock", func() bool {
		return s.Stats().Counters["mutex_missed"] >= 10*workers
	})
	if st := s.Stats(); st.ConnsAccepted != 0 || st.Counters["mutex_taken"] != 0 || st.Counters["listener_adds"] != 0 {
		t.Fatalf("with the lock held elsewhere: %d accepted, counters %v; want nothing taken, added or accepted", st.ConnsAccepted, st.Counters)
	}
	s.mu.unlock(workers)
	if err := c.Expect(req); err != nil {
		t.Fatalf("after the lock was freed: %v", err)
	}
	if st := s.Stats(); st.ConnsAccepted != 1 || st.Counters["mutex_taken"] == 0 || st.Counters["listener_adds"] == 0 {
		t.Errorf("after the lock was freed: %d accepted, counters %v", st.ConnsAccepted, st.Counters)
	}
}

// TestSlotsRule fills a Mutex worker's slots: with under an eighth free
// before its last connection took one it sits out rounds of the lock
// (ngx_accept_disabled; 16 slots: the last takes the one free before it,
// under 2), and past its slots it refuses a connection with a reason that
// names --worker-conns, counted as refused; a connection closed frees a
// slot.
func TestSlotsRule(t *testing.T) {
	testenv.EndToEnd(t)
	const slots = 16
	cfg := testConfig(t, 1)
	s := startTest(t, cfg, Options{Accept: Mutex, WorkerConns: slots}, hooks{})
	var conns []*modeltest.Client
	for i := range slots {
		c := dialTest(t, s)
		if err := c.RoundTrip(work(uint64(i + 1))); err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, slots, err)
		}
		conns = append(conns, c)
	}
	modeltest.WaitFor(t, "the full worker to sit out a round of the lock", func() bool {
		return s.Stats().Counters["rounds_sat_out"] > 0
	})
	extra := dialTest(t, s)
	var resp wire.Response
	if err := extra.Recv(&resp); err != nil {
		t.Fatalf("connection past the slots: %v", err)
	}
	if reason := string(resp.Payload); resp.Status != wire.StatusUnavailable || !strings.Contains(reason, "--worker-conns") ||
		!strings.Contains(reason, fmt.Sprintf("all its %d connections", slots)) {
		t.Fatalf("connection past the slots: status %v, %q; want unavailable naming --worker-conns and %d", resp.Status, reason, slots)
	}
	modeltest.WaitFor(t, "the refusal counted", func() bool { return s.Stats().Errors[models.ErrRefused] == 1 })
	conns[0].Close()
	modeltest.WaitFor(t, "a slot freed", func() bool { return s.Stats().Counters["open_conns"] == slots-1 })
	if err := dialTest(t, s).RoundTrip(work(100)); err != nil {
		t.Fatalf("a connection in the freed slot: %v", err)
	}
}

// TestExclusiveReorders checks that an Exclusive worker re-registers the
// listener on its 1st, 17th, 33rd… accept event, and that every accepted
// connection is counted by the worker that accepted it.
func TestExclusiveReorders(t *testing.T) {
	testenv.EndToEnd(t)
	const workers, n = 2, 40
	cfg := testConfig(t, workers)
	s, err := Start(cfg, Options{Accept: Exclusive})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c, err := modeltest.Dial(s.Addr().String(), cfg.Codec)
		if err != nil {
			t.Fatal(err)
		}
		err = c.RoundTrip(work(uint64(i + 1)))
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The workers have exited: their fields are this goroutine's to read.
	var calls, want uint64
	var accepted uint64
	for i, w := range s.workers {
		calls += w.calls
		want += (w.calls + ReorderEvery - 1) / ReorderEvery
		if got := w.adds.Load(); got != 1+w.reorders.Load() {
			t.Errorf("worker %d: %d registrations, want the first and one per reorder (%d)", i, got, w.reorders.Load())
		}
		accepted += st.PerThread[i].Accepted
	}
	if calls != n || st.Counters["reorders"] != want {
		t.Errorf("%d accept events, %d reorders; want %d events (one connection each) and %d reorders", calls, st.Counters["reorders"], n, want)
	}
	if accepted != n || st.ConnsAccepted != n {
		t.Errorf("workers accepted %d, server %d; want %d", accepted, st.ConnsAccepted, n)
	}
	// Every listener event either took a connection or found the backlog
	// empty; the total of empty ones is the workers' sum.
	var empty uint64
	for i, w := range s.workers {
		key := fmt.Sprintf("w%d_empty_accepts", i)
		got, ok := st.Counters[key]
		if !ok || got != w.empty.Load() {
			t.Errorf("%s = %d (present %v), worker counted %d", key, got, ok, w.empty.Load())
		}
		empty += got
	}
	if st.Counters["empty_accepts"] != empty {
		t.Errorf("empty_accepts %d, workers' sum %d", st.Counters["empty_accepts"], empty)
	}
}

// TestExclusiveSlots fills an Exclusive worker's slots one connection at
// a time. ngx_accept_disabled is computed before a connection takes its
// slot, so the last slot's connection (one of 8 free before it) does not
// make the worker short of slots, and it reorders on its first accept
// only; the connection past the slots is refused and, as nginx returns on
// it before ngx_reorder_accept_events, neither reorders nor counts as a
// reorder's accept event.
func TestExclusiveSlots(t *testing.T) {
	testenv.EndToEnd(t)
	const slots = 8
	cfg := testConfig(t, 1)
	s, err := Start(cfg, Options{Accept: Exclusive, WorkerConns: slots})
	if err != nil {
		t.Fatal(err)
	}
	for i := range slots {
		c, err := modeltest.Dial(s.Addr().String(), cfg.Codec)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.RoundTrip(work(uint64(i + 1))); err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, slots, err)
		}
	}
	// One worker: its accept of the last connection ended before it
	// served that connection's request.
	if got := s.Stats().Counters["reorders"]; got != 1 {
		t.Errorf("%d reorders with every slot taken, want 1 (the first accept's)", got)
	}
	extra, err := modeltest.Dial(s.Addr().String(), cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	var resp wire.Response
	if err := extra.Recv(&resp); err != nil || resp.Status != wire.StatusUnavailable {
		t.Fatalf("connection past the slots: status %v, %v; want unavailable", resp.Status, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The worker has exited: its fields are this goroutine's to read.
	w := s.workers[0]
	if w.calls != slots || w.reorders.Load() != 1 || w.acc.disabled != 1 {
		t.Errorf("after the refusal: %d accept events counted, %d reorders, disabled %d; want %d, 1, 1",
			w.calls, w.reorders.Load(), w.acc.disabled, slots)
	}
}

// TestReusePortOnePort checks that every worker's socket is bound to the
// server's one address.
func TestReusePortOnePort(t *testing.T) {
	testenv.EndToEnd(t)
	s := startTest(t, testConfig(t, 3), Options{Accept: ReusePort}, hooks{})
	if len(s.lns) != 3 {
		t.Fatalf("%d listening sockets for 3 workers", len(s.lns))
	}
	for i, ln := range s.lns {
		if ln.Addr() != s.Addr() || s.workers[i].own == nil {
			t.Errorf("worker %d's socket on %v (own listener %v), server on %v", i, ln.Addr(), s.workers[i].own != nil, s.Addr())
		}
	}
}
