package acceptlock

import (
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(cfg models.Config) (models.Server, error) { return Start(cfg, Options{}) })
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		watch time.Duration
		want  time.Duration // 0: an error
	}{
		{name: "default", watch: 0, want: DefaultWatch},
		{name: "1ms", watch: time.Millisecond, want: time.Millisecond},
		{name: "max", watch: MaxWatch, want: MaxWatch},
		{name: "negative", watch: -time.Second},
		{name: "under 1ms", watch: time.Microsecond},
		{name: "over max", watch: MaxWatch + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Options{Watch: tc.watch}.withDefaults()
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("watch %v accepted as %v", tc.watch, o.Watch)
			case tc.want != 0 && (err != nil || o.Watch != tc.want):
				t.Fatalf("watch %v: %v, %v; want %v", tc.watch, o.Watch, err, tc.want)
			}
		})
	}
}

// testConfig is a server of threads threads speaking the binary protocol,
// with a ledger of 8 accounts.
func testConfig(t *testing.T, threads int) models.Config {
	t.Helper()
	codec, err := wire.New("binary", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{Accounts: 8, NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	return models.Config{Addr: "127.0.0.1:0", Threads: threads, Codec: codec, Service: svc}
}

// do sends req on c and returns its response's status.
func do(t *testing.T, c *modeltest.Client, req *wire.Request) wire.Status {
	t.Helper()
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	var resp wire.Response
	if err := c.Recv(&resp); err != nil {
		t.Fatalf("request %d: %v", req.ID, err)
	}
	if err := wire.Verify(req, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

// TestServingThreadDoesNotLead: a thread serving its connection has
// released the listeners' lock, so a connection that arrives meanwhile is
// accepted by the other thread, which was blocked on the lock because it
// owned nothing. The first connection's thread is held in its request (a
// guarded withdrawal that waits for funds) until the second connection,
// served by the other thread, deposits them; a leader that kept the lock
// while serving would never accept the second connection and the
// withdrawal would time out.
func TestServingThreadDoesNotLead(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	cfg := testConfig(t, 2)
	srv, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr := srv.Addr().String()

	a, err := modeltest.Dial(addr, cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	withdraw := &wire.Request{ID: 1, Op: wire.OpWithdraw, Account: 3, Amount: 1500, Timeout: wire.DefaultMaxWork}
	if err := a.Send(withdraw); err != nil {
		t.Fatal(err)
	}
	// The thread that accepted a has taken the withdrawal's event, its
	// second (the listener's was its first): it is in its request,
	// waiting for funds.
	owner := -1
	modeltest.WaitFor(t, "the first connection's request in service", func() bool {
		for i, th := range srv.Stats().PerThread {
			if th.Accepted == 1 && th.Events == 2 {
				owner = i
				return true
			}
		}
		return false
	})

	b, err := modeltest.Dial(addr, cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if st := do(t, b, &wire.Request{ID: 2, Op: wire.OpDeposit, Account: 3, Amount: 1000}); st != wire.StatusOK {
		t.Fatalf("deposit: status %v", st)
	}
	var resp wire.Response
	if err := a.Recv(&resp); err != nil {
		t.Fatal(err)
	}
	if err := wire.Verify(withdraw, &resp); err != nil || resp.Status != wire.StatusOK {
		t.Fatalf("withdrawal: status %v, %v", resp.Status, err)
	}
	st := srv.Stats()
	for i, th := range st.PerThread {
		if th.Accepted != 1 {
			t.Errorf("thread %d accepted %d connections, want 1 each (thread %d served the first)", i, th.Accepted, owner)
		}
	}
	if st.Counters["lock_blocks"] == 0 {
		t.Errorf("no thread blocked on the listeners' lock: %v", st.Counters)
	}
}

// TestStats: the per-thread counts add up to the server's, and each
// connection's requests are counted by the thread that accepted it.
func TestStats(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	cfg := testConfig(t, 3)
	srv, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const conns, rounds = 6, 5
	var clients []*modeltest.Client
	for range conns {
		c, err := modeltest.Dial(srv.Addr().String(), cfg.Codec)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	id := uint64(0)
	for range rounds {
		for _, c := range clients {
			id++
			if st := do(t, c, &wire.Request{ID: id, Op: wire.OpWork, Size: 100}); st != wire.StatusOK {
				t.Fatalf("request %d: status %v", id, st)
			}
		}
	}
	st := srv.Stats()
	var accepted, requests, promotions uint64
	for _, th := range st.PerThread {
		accepted += th.Accepted
		requests += th.Requests
		promotions += th.Promotions
		if th.Requests%rounds != 0 || th.Requests != th.Accepted*rounds {
			t.Errorf("thread %+v: its connections' requests are not all its own", th)
		}
	}
	if accepted != conns || st.ConnsAccepted != conns || requests != st.Requests || st.Requests != conns*rounds {
		t.Errorf("per thread: %d accepted, %d requests; server: %d accepted, %d requests; want %d and %d",
			accepted, requests, st.ConnsAccepted, st.Requests, conns, conns*rounds)
	}
	if st.Counters["open_conns"] != conns || promotions == 0 || st.Counters["accept_batches"] == 0 {
		t.Errorf("counters %v, %d promotions", st.Counters, promotions)
	}
}
