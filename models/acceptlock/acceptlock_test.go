package acceptlock

import (
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// TestAcceptMore plays bursts through acceptMore as
// cherokee_bind_accept_more would see them, one accept at a time: the
// limit each burst gets, given what the bursts before it took and
// whether they ended in a failed accept.
func TestAcceptMore(t *testing.T) {
	type burst struct {
		backlog int // connections waiting when the burst begins
		limit   int // the limit it must get
	}
	var a acceptMore
	play := func(bs []burst) {
		t.Helper()
		for i, b := range bs {
			got := a.limit()
			if got != b.limit {
				t.Fatalf("burst %d: limit %d, want %d (state %+v)", i, got, b.limit, a)
			}
			took := min(b.backlog, got)
			a.done(took, took < got) // the accept after the last one fails: EAGAIN
		}
	}
	// The first round relearns: 3 waiting, so the maximum is 3.
	play([]burst{{backlog: 3, limit: 64}})
	if a.max != 3 || a.recalculate != 10 || a.relearns != 1 {
		t.Fatalf("after relearning: %+v, want max 3, recalculate 10, one relearn", a)
	}
	// A storm is taken 3 at a time, without failing: no count-down.
	play([]burst{{backlog: 50, limit: 3}, {backlog: 47, limit: 3}})
	if a.recalculate != 10 {
		t.Fatalf("bursts that reached their limit counted down: %+v", a)
	}
	// Ten bursts that find the backlog empty before the limit count down
	// to a relearning round; it learns 1 (one waiting), which then holds.
	for range 10 {
		play([]burst{{backlog: 1, limit: 3}})
	}
	play([]burst{{backlog: 1, limit: 64}, {backlog: 40, limit: 1}, {backlog: 39, limit: 1}})
	if a.max != 1 || a.relearns != 2 {
		t.Fatalf("after the second relearning round: %+v, want max 1, two relearns", a)
	}
	// A maximum of 0 (a relearning round that found nothing) still
	// accepts one, as Cherokee checks the maximum after an accept.
	b := acceptMore{recalculate: 5}
	if got := b.limit(); got != 1 {
		t.Fatalf("limit with maximum 0: %d, want 1", got)
	}
	// A relearning round that reaches the cap without failing relearns
	// again next time.
	c := acceptMore{}
	c.done(64, false)
	if c.max != 64 || c.recalculate != 0 {
		t.Fatalf("a full relearning round: %+v, want max 64 and another relearning round", c)
	}
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
