package leaderfollowers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/wire"
)

// laneTestOpts returns lanes for a pool of threads (at least 2): half the
// threads, rounded up, for priorities below 128, the rest above.
func laneTestOpts(threads int) Options {
	threads = max(threads, 2)
	return Options{Lanes: []Lane{{MinPriority: 0, Threads: threads - threads/2}, {MinPriority: 128, Threads: threads / 2}}}
}

// TestLanesConformance runs the conformance suite on a server with two
// lanes. Its requests all have priority 0, so a hook places connections by
// descriptor parity: half move to the high lane before their first request
// is read, half stay, and both lanes' pools serve.
func TestLanesConformance(t *testing.T) {
	for _, d := range []Deactivation{Kernel, User} {
		t.Run("deactivation="+d.String(), func(t *testing.T) { lanesConformance(t, d) })
	}
}

func lanesConformance(t *testing.T, d Deactivation) {
	modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
		opts := laneTestOpts(cfg.WithDefaults(DefaultThreads).Threads)
		opts.Deactivation = d
		cfg.Threads = 0
		srv, err := start(cfg, opts, hooks{laneFor: func(fd int, _ uint8) int { return fd % 2 }})
		if errors.Is(err, ErrPriorityNotPermitted) {
			t.Skipf("lanes need SCHED_FIFO or negative nice values (root or CAP_SYS_NICE): %v", err)
		}
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { checkOneLeader(t, srv) })
		return srv, nil
	})
}

// TestLanePlacement checks that connections land in the lane of their first
// request's priority, by the lanes' counters, for both protocols.
func TestLanePlacement(t *testing.T) {
	for _, proto := range []string{"binary", "http"} {
		t.Run("protocol="+proto, func(t *testing.T) {
			cfg := testConfig(t, 0)
			codec := modeltest.Codec(t, proto, wire.Limits{})
			cfg.Codec = codec
			opts := Options{Lanes: []Lane{{MinPriority: 0, Threads: 1}, {MinPriority: 100, Threads: 1}, {MinPriority: 200, Threads: 1}}, LaneSched: SchedNice}
			skipUnlessLanesPermitted(t, cfg, opts)
			srv := startTest(t, cfg, opts, hooks{})
			prios := []uint8{0, 99, 100, 150, 200, 255, 7}
			want := map[string]uint64{"lane0_conns": 3, "lane1_conns": 2, "lane2_conns": 2, "lane_moves": 4, "lane_undecided": 0}
			wantReq := map[string]uint64{"lane0_requests": 3 * 3, "lane1_requests": 2 * 3, "lane2_requests": 2 * 3}
			for i, p := range prios {
				c, err := modeltest.Dial(srv.Addr().String(), codec)
				if err != nil {
					t.Fatal(err)
				}
				var reqs []*wire.Request
				for j := range 3 {
					reqs = append(reqs, &wire.Request{ID: uint64(10*i + j + 1), Op: wire.OpWork, Priority: p, Size: 16})
				}
				err = c.RoundTrip(reqs...)
				c.Close()
				if err != nil {
					t.Fatalf("priority %d: %v", p, err)
				}
			}
			st := srv.Stats()
			for k, v := range want {
				if st.Counters[k] != v {
					t.Errorf("%s = %d, want %d (counters %v)", k, st.Counters[k], v, st.Counters)
				}
			}
			for k, v := range wantReq {
				if st.Counters[k] != v {
					t.Errorf("%s = %d, want %d", k, st.Counters[k], v)
				}
			}
			if !strings.Contains(st.Variant, "lanes=0:1,100:1,200:1") || !strings.Contains(st.Variant, "lane1=nice/-5") || !strings.Contains(st.Variant, "lane2=nice/-10") {
				t.Errorf("Variant %q does not record the lanes and their nice values", st.Variant)
			}
		})
	}
}

// TestLaneSched checks the decision between SCHED_FIFO and nice values,
// and that what was refused is reported, not hidden.
func TestLaneSched(t *testing.T) {
	bounded := rtBudget{RuntimeUs: 950000, PeriodUs: 1000000}
	eperm := fmt.Errorf("sched_setattr: %w", errors.ErrUnsupported)
	ok := func(int) error { return nil }
	refuse := func(int) error { return eperm }
	tests := []struct {
		name         string
		mode         LaneSched
		budget       rtBudget
		fifo, nice   func(int) error
		want, reason string
		wantErr      bool
	}{
		{name: "auto/fifo permitted", mode: SchedAuto, budget: bounded, fifo: ok, nice: ok, want: "SCHED_FIFO/1"},
		{name: "auto/fifo refused", mode: SchedAuto, budget: bounded, fifo: refuse, nice: ok, want: "nice/-5", reason: "SCHED_FIFO refused"},
		{name: "auto/rt unbounded", mode: SchedAuto, budget: rtBudget{RuntimeUs: -1, PeriodUs: 1000000}, fifo: ok, nice: ok, want: "nice/-5", reason: "unbounded"},
		{name: "auto/rt unknown", mode: SchedAuto, budget: rtBudget{Err: errors.New("no /proc")}, fifo: ok, nice: ok, want: "nice/-5", reason: "unknown"},
		{name: "auto/both refused", mode: SchedAuto, budget: bounded, fifo: refuse, nice: refuse, wantErr: true},
		{name: "fifo/refused", mode: SchedFIFO, budget: bounded, fifo: refuse, nice: ok, wantErr: true},
		{name: "fifo/permitted", mode: SchedFIFO, budget: bounded, fifo: ok, nice: refuse, want: "SCHED_FIFO/1"},
		{name: "nice", mode: SchedNice, budget: bounded, fifo: refuse, nice: ok, want: "nice/-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := laneSched(tt.mode, 1, laneNice(1), tt.budget, tt.fifo, tt.nice)
			if tt.wantErr {
				if !errors.Is(err, ErrPriorityNotPermitted) {
					t.Fatalf("laneSched = %q, %v; want an error wrapping ErrPriorityNotPermitted", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, tt.reason) {
				t.Errorf("laneSched = %q, want %q with reason %q", got, tt.want, tt.reason)
			}
		})
	}
}

func TestParseLanes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		threads int
		wantErr string
	}{
		{name: "two", in: "0:2,128:2"},
		{name: "threads match", in: "0:3,200:1", threads: 4},
		{name: "threads differ", in: "0:2,128:2", threads: 3, wantErr: "differs"},
		{name: "one lane", in: "0:4", wantErr: "two or more"},
		{name: "first not 0", in: "1:2,128:2", wantErr: "want 0"},
		{name: "not increasing", in: "0:2,0:2", wantErr: "increasing"},
		{name: "no threads", in: "0:0,128:2", wantErr: "at least 1"},
		{name: "out of range", in: "0:1,256:1", wantErr: "0..255"},
		{name: "syntax", in: "0-2", wantErr: "MINPRIO:THREADS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lanes, err := ParseLanes(tt.in)
			if err == nil {
				_, err = validateLanes(lanes, tt.threads)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := FormatLanes(lanes); got != tt.in {
					t.Errorf("FormatLanes = %q, want %q", got, tt.in)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// skipUnlessLanesPermitted skips t if this process may not give the higher
// lanes their priority (not root, no CAP_SYS_NICE).
func skipUnlessLanesPermitted(t *testing.T, cfg models.Config, opts Options) {
	t.Helper()
	skipUnlessPermitted(t, cfg, opts, "lanes need SCHED_FIFO or negative nice values (root or CAP_SYS_NICE)")
}

// TestLanesUnderLoadgen drives a laned server with the load generator's
// two streams at once, as concbench priority does: a high-priority one and a
// low-priority one on connections of their own. Every high connection
// (primed with its priority) must land in the high lane and every low one
// in the low lane, and each lane must have served exactly its stream's
// requests, priming included.
func TestLanesUnderLoadgen(t *testing.T) {
	cfg := testConfig(t, 0)
	opts := Options{Lanes: []Lane{{MinPriority: 0, Threads: 2}, {MinPriority: 128, Threads: 1}}, LaneSched: SchedNice}
	skipUnlessLanesPermitted(t, cfg, opts)
	srv := startTest(t, cfg, opts, hooks{})
	const highConns, lowConns, requests = 2, 6, 300
	results := make(chan error, 2)
	for _, s := range []struct {
		conns int
		prio  float64
	}{{highConns, 200}, {lowConns, 0}} {
		go func() {
			_, err := loadgen.Run(context.Background(), loadgen.Config{Addr: srv.Addr().String(), Protocol: "binary",
				Conns: s.conns, Closed: true, Requests: requests, Priority: loadgen.Fixed(s.prio), Accounts: 64})
			results <- err
		}()
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	st := srv.Stats()
	want := map[string]uint64{
		"lane0_conns": lowConns, "lane1_conns": highConns, "lane_undecided": 0,
		"lane0_requests": lowConns + requests, "lane1_requests": highConns + requests,
	}
	for k, v := range want {
		if st.Counters[k] != v {
			t.Errorf("%s = %d, want %d (counters %v)", k, st.Counters[k], v, st.Counters)
		}
	}
}
