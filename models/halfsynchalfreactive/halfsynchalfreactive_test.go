package halfsynchalfreactive

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// variants are the model's two variants, as subtests name them.
var variants = []struct {
	name    string
	opts    Options
	variant string // Stats.Variant
}{
	{name: "default", opts: Options{}, variant: ""},
	{name: "pooled", opts: Options{Pooled: true}, variant: "pooled"},
	{name: "priority", opts: Options{Priority: true}, variant: "priority"},
}

func TestConformance(t *testing.T) {
	for _, v := range variants {
		t.Run("variant="+v.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				return Start(cfg, v.opts)
			})
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string // substring; empty: valid
	}{
		{name: "zero", opts: Options{}},
		{name: "one", opts: Options{QueueSize: 1}},
		{name: "max", opts: Options{QueueSize: MaxQueueSize, Pooled: true}},
		{name: "negative", opts: Options{QueueSize: -1}, wantErr: "queue size -1 out of range (accepted: 0 for the default 256, or 1..65536)"},
		{name: "too-large", opts: Options{QueueSize: MaxQueueSize + 1}, wantErr: "queue size 65537 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.wantErr)
			}
			if tc.wantErr != "" {
				cfg := models.Config{Addr: "127.0.0.1:0", Codec: newCodec(t, "http"), Service: newService(t)}
				if srv, err := Start(cfg, tc.opts); err == nil {
					srv.Close()
					t.Fatal("Start accepted invalid options")
				}
			}
		})
	}
}

// newService returns a service with a small ledger.
func newService(t testing.TB) *service.Service {
	t.Helper()
	return modeltest.Service(t, service.Config{Accounts: 8, InitialBalance: 1000})
}

// newCodec returns the protocol's codec, allowing work (and withdrawal
// timeouts) of up to a minute.
func newCodec(t testing.TB, proto string) wire.Codec {
	t.Helper()
	return modeltest.Codec(t, proto, wire.Limits{MaxWork: time.Minute})
}

// start starts the model and closes it when the test ends.
func start(t *testing.T, cfg models.Config, opts Options) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	return modeltest.Start(t, func() (*Server, error) { return Start(cfg, opts) })
}

// dial connects a client to srv, closed when t ends.
func dial(t *testing.T, srv *Server, codec wire.Codec) *modeltest.Client {
	t.Helper()
	return modeltest.Connect(t, nil, srv.Addr().String(), codec)
}

// protocolsAndVariants runs fn for every protocol and variant.
func protocolsAndVariants(t *testing.T, fn func(t *testing.T, proto string, opts Options)) {
	for _, proto := range wire.Protocols {
		for _, v := range variants {
			t.Run(fmt.Sprintf("protocol=%s/variant=%s", proto, v.name), func(t *testing.T) {
				fn(t, proto, v.opts)
			})
		}
	}
}

// TestOrderDecreasingWork pipelines requests whose CPU work decreases, with
// mixed priorities, on one connection served by several workers, so later
// requests tend to finish first (and, in the priority variant, are taken
// first); the responses must still come back in request order.
func TestOrderDecreasingWork(t *testing.T) {
	const n, rounds = 24, 4
	protocolsAndVariants(t, func(t *testing.T, proto string, opts Options) {
		codec := newCodec(t, proto)
		srv := start(t, models.Config{Threads: 4, Codec: codec, Service: newService(t)}, opts)
		c := dial(t, srv, codec)
		for round := range rounds {
			reqs := make([]*wire.Request, n)
			for i := range reqs {
				reqs[i] = &wire.Request{ID: uint64(round*n + i), Op: wire.OpWork,
					CPU: time.Duration(n-i) * 20 * time.Microsecond, Size: 32 + i,
					Priority: uint8(i * 37)} // mixed: the priority variant serves them out of order
			}
			if err := c.Send(reqs...); err != nil {
				t.Fatal(err)
			}
			if err := c.Expect(reqs...); err != nil {
				t.Fatal(err)
			}
		}
		st := srv.Stats()
		if st.Requests != n*rounds {
			t.Fatalf("served %d requests, sent %d", st.Requests, n*rounds)
		}
		t.Logf("responses completed out of order and parked: %d of %d", st.Counters["out_of_order"], n*rounds)
	})
}

// stall starts withdrawals that cannot be satisfied from accounts 0..n-1 on
// their own connection, so that n workers block in the ledger's guarded
// withdrawal until release deposits the funds. It waits until the workers
// have taken them.
func stall(t *testing.T, srv *Server, codec wire.Codec, svc *service.Service, n int) (release func()) {
	t.Helper()
	const amount = 1 << 30
	c := dial(t, srv, codec)
	reqs := make([]*wire.Request, n)
	for i := range reqs {
		reqs[i] = &wire.Request{ID: uint64(1000 + i), Op: wire.OpWithdraw, Account: uint32(i), Amount: amount, Timeout: time.Minute}
	}
	if err := c.Send(reqs...); err != nil {
		t.Fatal(err)
	}
	modeltest.WaitFor(t, "the workers to take the withdrawals", func() bool {
		var taken uint64
		for _, th := range srv.Stats().PerThread {
			if th.Role == "worker" {
				taken += th.Events
			}
		}
		return taken >= uint64(n)
	})
	released := false
	deposit := func() {
		if released {
			return
		}
		released = true
		for i := range n {
			if _, err := svc.Ledger().Deposit(uint32(i), amount); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(deposit) // before Close, if the test failed before release
	return func() {
		deposit()
		if err := c.Expect(reqs...); err != nil {
			t.Errorf("stalled withdrawals: %v", err)
		}
	}
}

// TestOrderParked makes a connection's second response complete before its
// first, deterministically: the first request is a withdrawal that waits
// for funds, the second is served by the other worker meanwhile and must be
// parked until the test deposits the funds; then both arrive in order.
func TestOrderParked(t *testing.T) {
	protocolsAndVariants(t, func(t *testing.T, proto string, opts Options) {
		codec := newCodec(t, proto)
		svc := newService(t)
		srv := start(t, models.Config{Threads: 2, Codec: codec, Service: svc}, opts)
		c := dial(t, srv, codec)
		first := &wire.Request{ID: 1, Op: wire.OpWithdraw, Account: 3, Amount: 1 << 30, Timeout: time.Minute}
		second := &wire.Request{ID: 2, Op: wire.OpWork, Size: 100}
		if err := c.Send(first, second); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Ledger().Deposit(3, 1<<30) }) // if the test fails before its deposit
		modeltest.WaitFor(t, "the second response to be parked", func() bool { return srv.Stats().Counters["out_of_order"] == 1 })
		if st := srv.Stats(); st.Requests != 1 {
			t.Fatalf("%d requests served while the withdrawal waits, want 1", st.Requests)
		}
		if _, err := svc.Ledger().Deposit(3, 1<<30); err != nil {
			t.Fatal(err)
		}
		if err := c.Expect(first, second); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBackPressureQueueFull runs many pipelining connections through a
// queue of one slot while every worker is blocked: the reactor must block on
// the full queue (counted), and once the workers resume every request is
// served, none lost.
func TestBackPressureQueueFull(t *testing.T) {
	const conns, depth, workers = 32, 16, 2
	protocolsAndVariants(t, func(t *testing.T, proto string, opts Options) {
		codec := newCodec(t, proto)
		svc := newService(t)
		opts.QueueSize = 1
		srv := start(t, models.Config{Threads: workers, Codec: codec, Service: svc}, opts)
		release := stall(t, srv, codec, svc, workers)

		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i := range conns {
			c := dial(t, srv, codec)
			reqs := make([]*wire.Request, depth)
			for k := range reqs {
				reqs[k] = &wire.Request{ID: uint64(i*depth + k), Op: wire.OpWork, Size: 10 + k, CPU: time.Microsecond}
			}
			wg.Go(func() {
				if err := c.Send(reqs...); err != nil {
					errs <- err
					return
				}
				if err := c.Expect(reqs...); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
				}
			})
		}
		modeltest.WaitFor(t, "the reactor to block on the full queue", func() bool {
			return srv.Stats().Counters["reactor_blocked"] > 0
		})
		release()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		st := srv.Stats()
		want := uint64(conns*depth + workers)
		if st.Requests != want || st.Counters["handoffs"] != want {
			t.Errorf("served %d requests, %d hand-offs; want %d of each", st.Requests, st.Counters["handoffs"], want)
		}
		if hw := st.Counters["queue_high_water"]; hw != 1 {
			t.Errorf("queue high water %d with capacity 1", hw)
		}
		if len(st.Errors) != 0 {
			t.Errorf("errors: %v", st.Errors)
		}
		t.Logf("reactor blocked %d times", st.Counters["reactor_blocked"])
	})
}

// TestInFlightBound pipelines more than models.MaxInFlight requests on one
// connection while the workers are blocked: the reactor dispatches exactly
// models.MaxInFlight of them and holds the rest back until responses are
// written.
func TestInFlightBound(t *testing.T) {
	const n, workers = models.MaxInFlight + 36, 2
	protocolsAndVariants(t, func(t *testing.T, proto string, opts Options) {
		codec := newCodec(t, proto)
		svc := newService(t)
		srv := start(t, models.Config{Threads: workers, Codec: codec, Service: svc}, opts)
		release := stall(t, srv, codec, svc, workers)
		c := dial(t, srv, codec)
		reqs := make([]*wire.Request, n)
		for k := range reqs {
			reqs[k] = &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: 8}
		}
		if err := c.Send(reqs...); err != nil {
			t.Fatal(err)
		}
		modeltest.WaitFor(t, "the connection to reach its in-flight bound", func() bool {
			return srv.Stats().Counters["handoffs"] >= workers+models.MaxInFlight
		})
		release()
		if err := c.Expect(reqs...); err != nil {
			t.Fatal(err)
		}
		st := srv.Stats()
		if hw := st.Counters["conn_inflight_high_water"]; hw != models.MaxInFlight {
			t.Errorf("a connection had %d requests in flight, bound %d", hw, models.MaxInFlight)
		}
		if st.Requests != n+workers {
			t.Errorf("served %d requests, want %d", st.Requests, n+workers)
		}
	})
}

func TestStats(t *testing.T) {
	const workers = 3
	for _, v := range variants {
		t.Run("variant="+v.name, func(t *testing.T) {
			codec := newCodec(t, "binary")
			opts := v.opts
			opts.QueueSize = 17
			srv := start(t, models.Config{Threads: workers, Codec: codec, Service: newService(t)}, opts)
			c := dial(t, srv, codec)
			reqs := []*wire.Request{{ID: 1, Op: wire.OpWork, Size: 3}, {ID: 2, Op: wire.OpWork, Size: 5, Payload: []byte("abc")}}
			if err := c.Send(reqs...); err != nil {
				t.Fatal(err)
			}
			if err := c.Expect(reqs...); err != nil {
				t.Fatal(err)
			}
			st := srv.Stats()
			wantVariant := v.variant
			if st.Model != Model || st.Variant != wantVariant || st.Threads != workers {
				t.Errorf("model %q variant %q threads %d; want %q %q %d", st.Model, st.Variant, st.Threads, Model, wantVariant, workers)
			}
			if len(st.PerThread) != workers+1 || st.PerThread[0].Role != "reactor" {
				t.Fatalf("per-thread stats %+v; want the reactor then %d workers", st.PerThread, workers)
			}
			var served uint64
			for i, th := range st.PerThread {
				if th.TID == 0 {
					t.Errorf("thread %d (%s) reports no TID", i, th.Role)
				}
				if i > 0 {
					if th.Role != "worker" {
						t.Errorf("thread %d has role %q, want worker", i, th.Role)
					}
					served += th.Requests
				}
			}
			if served != 2 || st.PerThread[0].Requests != 0 || st.PerThread[0].Events == 0 {
				t.Errorf("workers served %d, reactor served %d with %d events; want 2, 0, > 0",
					served, st.PerThread[0].Requests, st.PerThread[0].Events)
			}
			want := map[string]uint64{"queue_capacity": 17, "handoffs": 2, "reactor_blocked": 0}
			for k, n := range want {
				if st.Counters[k] != n {
					t.Errorf("counter %s = %d, want %d", k, st.Counters[k], n)
				}
			}
			for _, k := range []string{"queue_high_water", "request_allocs", "out_of_order", "conn_inflight_high_water", "notifications"} {
				if _, ok := st.Counters[k]; !ok {
					t.Errorf("counter %s missing", k)
				}
			}
			if hw := st.Counters["queue_high_water"]; hw < 1 || hw > 2 {
				t.Errorf("queue high water %d after 2 requests", hw)
			}
			if a := st.Counters["request_allocs"]; !v.opts.Pooled && a != 2 {
				t.Errorf("default variant allocated %d request objects for 2 requests", a)
			}
		})
	}
}

// TestCloseWaitsForInFlight checks that a connection is closed only when no
// worker holds a request of it, so that its descriptor number cannot be
// reused while a worker may still write to it: a client whose request is
// being served half-closes (the response must still arrive) or resets (the
// connection must stay open, broken, until the worker is done).
func TestCloseWaitsForInFlight(t *testing.T) {
	tests := []struct {
		name  string
		reset bool
	}{
		{name: "half-close", reset: false},
		{name: "reset", reset: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			codec := newCodec(t, "binary")
			svc := newService(t)
			srv := start(t, models.Config{Threads: 2, Codec: codec, Service: svc}, Options{})
			c := dial(t, srv, codec)
			req := &wire.Request{ID: 5, Op: wire.OpWithdraw, Account: 2, Amount: 1 << 30, Timeout: time.Minute}
			if err := c.Send(req); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Ledger().Deposit(2, 1<<30) }) // if the test fails before its deposit
			modeltest.WaitFor(t, "a worker to take the withdrawal", func() bool { return srv.Stats().Counters["handoffs"] == 1 })
			tcp := c.Conn()
			if tc.reset {
				tcp.SetLinger(0)
				tcp.Close()
				modeltest.WaitFor(t, "the reactor to see the reset", func() bool { return srv.Stats().Errors[models.ErrPeerReset] == 1 })
			} else {
				tcp.CloseWrite()
				// Events: the listener's, the request's, and the end of input
				// (the request was read before the client half-closed).
				modeltest.WaitFor(t, "the reactor to read the end of input", func() bool { return srv.Stats().PerThread[0].Events >= 3 })
			}
			if st := srv.Stats(); st.ConnsClosed != 0 {
				t.Fatalf("the connection was closed while a worker served its request")
			}
			if _, err := svc.Ledger().Deposit(2, 1<<30); err != nil {
				t.Fatal(err)
			}
			if !tc.reset {
				if err := c.Expect(req); err != nil {
					t.Fatalf("response after the client's half-close: %v", err)
				}
				var resp wire.Response
				if err := c.Recv(&resp); err != io.EOF {
					t.Fatalf("after the last response: %v, want the end of the stream", err)
				}
			}
			modeltest.WaitFor(t, "the connection to close", func() bool { return srv.Stats().ConnsClosed == 1 })
			st := srv.Stats()
			delete(st.Errors, models.ErrPeerReset)
			if len(st.Errors) != 0 {
				t.Errorf("errors: %v", st.Errors)
			}
		})
	}
}
