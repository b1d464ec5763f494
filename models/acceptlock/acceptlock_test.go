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

// startTest starts a server of threads threads speaking the binary
// protocol, with a ledger of 8 accounts, closed when t ends.
func startTest(t *testing.T, threads int) (*Server, models.Config) {
	t.Helper()
	cfg := modeltest.Config(t, "binary", threads, service.Config{Accounts: 8, NsPerIter: 1})
	return modeltest.Start(t, func() (*Server, error) { return Start(cfg, Options{}) }), cfg
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
	srv, cfg := startTest(t, 2)
	addr := srv.Addr().String()

	a := modeltest.Connect(t, nil, addr, cfg.Codec)
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

	if err := modeltest.Connect(t, nil, addr, cfg.Codec).RoundTrip(&wire.Request{ID: 2, Op: wire.OpDeposit, Account: 3, Amount: 1000}); err != nil {
		t.Fatalf("deposit: %v", err)
	}
	if err := a.Expect(withdraw); err != nil {
		t.Fatalf("withdrawal: %v", err)
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
	srv, cfg := startTest(t, 3)
	const conns, rounds = 6, 5
	var clients []*modeltest.Client
	for range conns {
		clients = append(clients, modeltest.Connect(t, nil, srv.Addr().String(), cfg.Codec))
	}
	id := uint64(0)
	for range rounds {
		for _, c := range clients {
			id++
			if err := c.RoundTrip(&wire.Request{ID: id, Op: wire.OpWork, Size: 100}); err != nil {
				t.Fatal(err)
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
