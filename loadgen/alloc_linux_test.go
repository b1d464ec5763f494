package loadgen

import (
	"math"
	"testing"
	"time"

	"concbench/wire"
)

// newTestWorker connects a worker for cfg to addr, as Run does, and primes
// it; the worker is cleaned up with the test.
func newTestWorker(t testing.TB, cfg Config) *worker {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.WithDefaults()
	codec, err := wire.New(cfg.Protocol, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sa, family, err := resolve(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	for range cfg.Conns {
		fd, err := dial(sa, family, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	w, err := newWorker(&cfg, 0, 1, fds, codec, sa, family, time.Now(), newShared(&cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cleanup(); w.closeWake() })
	if err := w.prime(); err != nil {
		t.Fatal(err)
	}
	w.start = w.clock()
	w.measureAt = w.start
	w.endAt = math.MaxInt64
	w.limited = true // the callers issue requests by raising w.quota
	return w
}

// TestSteadyStateAllocs checks that the worker's request path — schedule,
// request mix, encoding, write, epoll, read, decoding, verification,
// histogram recording — allocates nothing once warm: each iteration issues
// one measured request through the worker's own loop and waits for its
// response. The in-process server does not allocate either, so any
// allocation counted is the generator's.
func TestSteadyStateAllocs(t *testing.T) {
	for _, proto := range protocols {
		for _, closed := range []bool{false, true} {
			name := "protocol=" + proto + "/loop=open"
			if closed {
				name = "protocol=" + proto + "/loop=closed"
			}
			t.Run(name, func(t *testing.T) {
				s := startServer(t, proto, nil)
				cfg := Config{
					Addr: s.addr(), Protocol: proto, Conns: 2, Requests: 1, Seed: 1,
					CPU: Exp(1000), Size: Bimodal(0.5, 16, 100), Priority: Bimodal(0.5, 3, 200), PriorityClasses: []int{2, 128},
					Ops: OpMix{Work: 4, Balance: 1, Deposit: 1, Withdraw: 1, Transfer: 1},
				}
				if closed {
					cfg.Closed = true
				} else {
					cfg.Rate = 1e7 // the next arrival is always due: no waiting on the clock
				}
				w := newTestWorker(t, cfg)
				one := func() {
					w.quota = w.issued + 1
					w.sending = true
					if closed {
						w.fill(w.conns[int(w.issued)%len(w.conns)], w.clock())
					}
					w.loop(true)
				}
				for range 100 { // warm: buffers and rings reach their working size
					one()
				}
				before := w.st.ok
				if allocs := testing.AllocsPerRun(500, one); allocs != 0 {
					t.Errorf("%.2f allocations per request, want 0", allocs)
				}
				if got := w.st.ok - before; got < 500 {
					t.Errorf("%d requests answered during the measurement, want ≥ 500", got)
				}
			})
		}
	}
}
