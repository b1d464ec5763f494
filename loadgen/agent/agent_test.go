package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"concbench/internal/testenv"
	"concbench/loadgen"
)

const token = "test-token"

// loaded is the clock bound for tests that run past the handshake: a
// loaded test machine may delay a pong beyond the default 1 ms bound;
// the bound's check is TestEstimate's.
const loaded = time.Second

// startAgent serves a on 127.0.0.1:0 until the test ends and returns its
// address.
func startAgent(t *testing.T, a *Agent) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// fakeRun is an Agent.Run that generates no load: it returns a valid
// Result whose histograms hold n values, as if the share had run from its
// StartAt, and counts its calls.
func fakeRun(n int64, calls *atomic.Int64) func(context.Context, loadgen.Config) (*loadgen.Result, error) {
	return func(_ context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
		calls.Add(1)
		cfg = cfg.WithDefaults()
		h := hdr.New(int64(cfg.HistLowest), int64(cfg.HistHighest), cfg.HistDigits)
		for i := range n {
			h.RecordValue(10_000 + 97*i)
		}
		s := loadgen.Summarize(h, 0)
		rate := float64(n) / cfg.Duration.Seconds()
		return &loadgen.Result{Config: cfg, Valid: true, Reasons: []string{}, Checks: []loadgen.Check{}, Errors: map[string]int64{},
			StartTime: cfg.StartAt.Add(cfg.Warmup), WindowNs: int64(cfg.Duration),
			ScheduledRatePerS: rate, SentRatePerS: rate, AchievedRatePerS: rate,
			Requests: loadgen.Counts{Scheduled: n, Sent: n, Completed: n, InWindow: n, OK: n},
			Latency:  s, Uncorrected: s, FromIntended: s, WithoutOwnLag: s}, nil
	}
}

func testConfig(addr string) loadgen.Config {
	return loadgen.Config{Addr: addr, Rate: 1000, Conns: 4, Duration: 200 * time.Millisecond, Warmup: 100 * time.Millisecond}
}

// TestRefusals checks that an agent refuses a coordinator without its
// token and a target outside its prefixes, before running anything, and
// that the coordinator then runs no agent and returns no Result.
func TestRefusals(t *testing.T) {
	testenv.EndToEnd(t)
	tests := []struct {
		name    string
		token   string
		allow   []netip.Prefix
		target  string
		wantErr string
	}{
		{name: "wrong token", token: "guess", target: "127.0.0.1:9", wantErr: "wrong token"},
		{name: "token prefix", token: token[:4], target: "127.0.0.1:9", wantErr: "wrong token"},
		{name: "target beyond loopback", token: token, target: "192.0.2.1:80", wantErr: "outside the addresses"},
		{name: "target beyond allow", token: token, allow: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}, target: "127.0.0.1:9", wantErr: "outside the addresses"},
		{name: "mapped address beyond allow", token: token, target: "[::ffff:192.0.2.1]:80", wantErr: "outside the addresses"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			good := startAgent(t, &Agent{Token: token, Allow: tc.allow, Run: fakeRun(10, &calls)})
			co := &Coordinator{Agents: []string{good}, Token: tc.token, Lead: 100 * time.Millisecond, MaxUncertainty: loaded}
			res, err := co.Run(context.Background(), testConfig(tc.target))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Run: %v, want an error containing %q", err, tc.wantErr)
			}
			if res != nil || calls.Load() != 0 {
				t.Errorf("a refused run returned %v and ran %d shares", res, calls.Load())
			}
		})
	}
}

// TestRefusalStopsTheOthers checks that when one agent refuses its share,
// an agent that had accepted its own abandons it: the coordinator's
// connection closing cancels its run.
func TestRefusalStopsTheOthers(t *testing.T) {
	testenv.EndToEnd(t)
	started, cancelled := make(chan struct{}), make(chan struct{})
	waiting := startAgent(t, &Agent{Token: token, Run: func(ctx context.Context, _ loadgen.Config) (*loadgen.Result, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}})
	var calls atomic.Int64
	refusing := startAgent(t, &Agent{Token: token, Allow: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}, Run: fakeRun(1, &calls)})
	co := &Coordinator{Agents: []string{waiting, refusing}, Token: token, Lead: 10 * time.Second, MaxUncertainty: loaded}
	if _, err := co.Run(context.Background(), testConfig("127.0.0.1:9")); err == nil || !strings.Contains(err.Error(), "agent 2") {
		t.Fatalf("Run: %v, want agent 2's refusal", err)
	}
	for _, c := range []struct {
		what string
		ch   chan struct{}
	}{{"started its share", started}, {"abandoned its share", cancelled}} {
		select {
		case <-c.ch:
		case <-time.After(time.Minute):
			t.Fatalf("agent 1 never %s", c.what)
		}
	}
}

// TestVersionRefused checks that an agent refuses another protocol
// version, naming both.
func TestVersionRefused(t *testing.T) {
	testenv.EndToEnd(t)
	var calls atomic.Int64
	addr := startAgent(t, &Agent{Token: token, Run: fakeRun(1, &calls)})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := writeMsg(c, &message{Type: msgHello, Version: Version + 1, Token: token}); err != nil {
		t.Fatal(err)
	}
	_, err = expect(c, msgWelcome, 10*time.Second)
	var pe *PeerError
	if !errors.As(err, &pe) || !strings.Contains(pe.Text, "version 2 refused") || !strings.Contains(pe.Text, "version 1") {
		t.Fatalf("hello with version %d: %v, want a refusal naming both versions", Version+1, err)
	}
}

// TestCheckTarget checks the agent's target rule against parsed --allow
// lists.
func TestCheckTarget(t *testing.T) {
	testenv.EndToEnd(t)
	tests := []struct {
		name, allow, target, want string
	}{
		{name: "loopback by default", target: "127.0.0.1:80", want: "127.0.0.1:80"},
		{name: "ipv6 loopback by default", target: "[::1]:80", want: "[::1]:80"},
		{name: "other address by default", target: "10.0.0.1:80"},
		{name: "in prefix", allow: "10.0.0.0/24", target: "10.0.0.200:80", want: "10.0.0.200:80"},
		{name: "beyond prefix", allow: "10.0.0.0/24", target: "10.0.1.1:80"},
		{name: "single address", allow: "10.0.0.5,192.168.1.0/24", target: "10.0.0.5:8080", want: "10.0.0.5:8080"},
		{name: "next to single address", allow: "10.0.0.5", target: "10.0.0.6:8080"},
		{name: "no port", target: "127.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{Token: token}
			if tc.allow != "" {
				var err error
				if a.Allow, err = ParseAllow(tc.allow); err != nil {
					t.Fatal(err)
				}
			}
			got, err := a.CheckTarget(context.Background(), tc.target)
			switch {
			case tc.want == "" && err == nil:
				t.Errorf("CheckTarget(%q) = %q, want a refusal", tc.target, got)
			case tc.want != "" && (err != nil || got != tc.want):
				t.Errorf("CheckTarget(%q) = %q, %v; want %q", tc.target, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "10.0.0.0/33", "example", ","} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}

// TestEstimate checks the offset estimate on synthetic exchanges with a
// known offset: the sample with the shortest round trip is used, the true
// offset is within the uncertainty, and unusable samples are left out.
func TestEstimate(t *testing.T) {
	testenv.EndToEnd(t)
	const off = 3_000_000 // the agent's clock is 3 ms ahead
	// sample: sent at t1 (coordinator), taking out and back ns each way
	// and hold ns inside the agent.
	sample := func(t1, out, back, hold int64) Sample {
		return Sample{T1: t1, T2: t1 + out + off, T3: t1 + out + hold + off, T4: t1 + out + hold + back}
	}
	tests := []struct {
		name     string
		samples  []Sample
		wantRTT  int64
		wantOff  int64
		wantFail bool
	}{
		{name: "symmetric", samples: []Sample{sample(0, 50_000, 50_000, 1_000)}, wantRTT: 100_000, wantOff: off},
		{name: "asymmetric", samples: []Sample{sample(0, 90_000, 10_000, 0)}, wantRTT: 100_000, wantOff: off + 40_000},
		{name: "shortest wins", samples: []Sample{sample(0, 400_000, 20_000, 0), sample(1e6, 30_000, 30_000, 5_000), sample(2e6, 100_000, 300_000, 0)}, wantRTT: 60_000, wantOff: off},
		{name: "negative round trip left out", samples: []Sample{{T1: 0, T2: off, T3: off + 10_000, T4: 5_000}, sample(1e6, 70_000, 70_000, 0)}, wantRTT: 140_000, wantOff: off},
		{name: "none usable", samples: []Sample{{T1: 0, T2: off, T3: off + 10_000, T4: 5_000}}, wantFail: true},
		{name: "none", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Estimate(tc.samples)
			if tc.wantFail {
				if err == nil {
					t.Fatalf("Estimate = %+v, want an error", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.RTTNs != tc.wantRTT || o.OffsetNs != tc.wantOff || o.UncertaintyNs != tc.wantRTT/2 || o.Samples != len(tc.samples) {
				t.Errorf("Estimate = %+v, want offset %d, round trip %d", o, tc.wantOff, tc.wantRTT)
			}
			if d := o.OffsetNs - off; d > o.UncertaintyNs || -d > o.UncertaintyNs {
				t.Errorf("true offset %d outside %d ± %d", off, o.OffsetNs, o.UncertaintyNs)
			}
		})
	}
	bounds := []struct {
		name string
		o    Offset
		ok   bool
	}{
		{name: "within", o: Offset{OffsetNs: -5e6, UncertaintyNs: 50_000}, ok: true},
		{name: "uncertain", o: Offset{OffsetNs: 0, UncertaintyNs: 2e6}},
		{name: "far", o: Offset{OffsetNs: -2e9, UncertaintyNs: 50_000}},
	}
	for _, b := range bounds {
		if err := b.o.check(DefaultMaxOffset, DefaultMaxUncertainty); (err == nil) != b.ok {
			t.Errorf("%s: check(%+v) = %v", b.name, b.o, err)
		}
	}
}

// TestSplit checks that shares add up to the run: connections and rate,
// with a seed of each agent's own.
func TestSplit(t *testing.T) {
	testenv.EndToEnd(t)
	for _, n := range []int{1, 2, 3, 7} {
		cfg := loadgen.Config{Addr: "127.0.0.1:1", Rate: 10_000, Conns: 50, Workers: 4, Duration: time.Second, Seed: 5}
		shares, err := Split(cfg, n)
		if err != nil {
			t.Fatal(err)
		}
		conns, rate, seeds := 0, 0.0, map[uint64]bool{}
		for _, s := range shares {
			conns += s.Conns
			rate += s.Rate
			seeds[s.Seed] = true
			if s.Workers > s.Conns || s.Conns < 50/n {
				t.Errorf("n=%d: share of %d connections, %d workers", n, s.Conns, s.Workers)
			}
		}
		if conns != 50 || rate < 10_000-1e-6 || rate > 10_000+1e-6 || len(seeds) != n {
			t.Errorf("n=%d: %d connections, %g req/s, %d seeds; want 50, 10000, %d", n, conns, rate, len(seeds), n)
		}
	}
	if _, err := Split(loadgen.Config{Addr: "127.0.0.1:1", Rate: 1, Conns: 2, Duration: time.Second}, 3); err == nil {
		t.Error("2 connections split over 3 agents")
	}
	co := &Coordinator{Agents: []string{"127.0.0.1:1"}, Token: token}
	if _, err := co.Run(context.Background(), loadgen.Config{Addr: "127.0.0.1:1", Rate: 1, Requests: 10}); err == nil {
		t.Error("a request-count run over agents was accepted")
	}
}

// TestAgentLostMidRun checks that an agent whose connection ends during
// its run makes the merged verdict invalid, naming it, while the other
// agent's result is merged.
func TestAgentLostMidRun(t *testing.T) {
	testenv.EndToEnd(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // an agent that dies once its run has started
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		a := &Agent{Token: token, Run: func(ctx context.Context, _ loadgen.Config) (*loadgen.Result, error) {
			c.Close()
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		a.ServeConn(context.Background(), c)
	}()
	t.Cleanup(wg.Wait)
	var calls atomic.Int64
	good := startAgent(t, &Agent{Token: token, Run: fakeRun(500, &calls)})
	co := &Coordinator{Agents: []string{ln.Addr().String(), good}, Token: token, Lead: 100 * time.Millisecond, MaxUncertainty: loaded}
	res, err := co.Run(context.Background(), testConfig("127.0.0.1:9"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || len(res.Checks) == 0 || res.Checks[0] != loadgen.CheckAborted ||
		!strings.Contains(res.Reasons[0], "agent 1") || !strings.Contains(res.Reasons[0], "lost mid-run") {
		t.Fatalf("valid %v, checks %q, reasons %q; want invalid, aborted, agent 1 lost mid-run", res.Valid, res.Checks, res.Reasons)
	}
	if res.Agents[0].Error == "" || res.Agents[0].Result != nil || res.Agents[1].Result == nil {
		t.Errorf("agent reports %+v", res.Agents)
	}
	if res.Requests.OK != 500 || res.Latency.Count != 500 {
		t.Errorf("merged %d ok, %d latencies; want the surviving agent's 500", res.Requests.OK, res.Latency.Count)
	}
}

// checkMerged checks that a run's merged result is what its agents
// measured: every share reported, connections and rates adding up, and
// every histogram the bucket-by-bucket sum of the agents'.
func checkMerged(t *testing.T, cfg loadgen.Config, res *Result) {
	t.Helper()
	var conns int
	var ok, sent int64
	var achieved, asked float64
	var reasons int
	sums := map[string]map[int64]int64{}
	hists := map[string]func(*loadgen.Result) loadgen.Summary{
		"latency":     func(r *loadgen.Result) loadgen.Summary { return r.Latency },
		"uncorrected": func(r *loadgen.Result) loadgen.Summary { return r.Uncorrected },
		"send lag":    func(r *loadgen.Result) loadgen.Summary { return r.SendLag },
	}
	for _, a := range res.Agents {
		if a.Result == nil {
			t.Fatalf("%s: no result: %s", a.Label, a.Error)
		}
		conns += a.Conns
		asked += a.RatePerS
		ok += a.Result.Requests.OK
		sent += a.Result.Requests.Sent
		achieved += a.Result.AchievedRatePerS
		reasons += len(a.Result.Reasons)
		if a.Result.Config.Conns != a.Conns {
			t.Errorf("%s ran %d connections, was given %d", a.Label, a.Result.Config.Conns, a.Conns)
		}
		for name, get := range hists {
			if sums[name] == nil {
				sums[name] = map[int64]int64{}
			}
			for v, n := range bucketCounts(t, get(a.Result)) {
				sums[name][v] += n
			}
		}
	}
	if conns != cfg.Conns || asked < cfg.Rate*(1-1e-9) || asked > cfg.Rate*(1+1e-9) {
		t.Errorf("agents given %d connections, %g req/s; want %d, %g", conns, asked, cfg.Conns, cfg.Rate)
	}
	if res.Requests.OK != ok || res.Requests.Sent != sent || res.AchievedRatePerS != achieved {
		t.Errorf("merged %d ok, %d sent, %g req/s; agents %d, %d, %g", res.Requests.OK, res.Requests.Sent, res.AchievedRatePerS, ok, sent, achieved)
	}
	if ok == 0 {
		t.Error("no request was answered")
	}
	for name, get := range hists {
		got := bucketCounts(t, get(res.Result))
		if len(got) != len(sums[name]) {
			t.Errorf("%s: %d distinct values merged, the agents' sum has %d", name, len(got), len(sums[name]))
		}
		for v, n := range sums[name] {
			if got[v] != n {
				t.Errorf("%s: %d values at %d merged, the agents measured %d", name, got[v], v, n)
				break
			}
		}
	}
	if res.Valid != (reasons == 0 && len(res.Reasons) == 0) || len(res.Reasons) < reasons {
		t.Errorf("merged verdict valid %v with %d reasons, the agents' have %d", res.Valid, len(res.Reasons), reasons)
	}
}

// bucketCounts returns a summary's histogram as counts per value.
func bucketCounts(t *testing.T, s loadgen.Summary) map[int64]int64 {
	t.Helper()
	m := map[int64]int64{}
	if s.Histogram == "" {
		return m
	}
	h, err := loadgen.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			m[b.From] += b.Count
		}
	}
	return m
}
