package results

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"concbench/loadgen"
)

// synthChain describes a synthetic traced run: Poisson intended sends at
// Rate, each sent Lag ns late, reaching the server Transit ns later. A
// thread that is idle when a request arrives wakes (Wake ns), reads it
// (Read ns) and serves it; one that is busy, after each service, writes
// the response (Write ns, which the response's return includes, and
// which occupies the thread), then reads the next request (Read ns). The
// service is exponential of mean Svc; the response arrives Write +
// Transit after the service's end. Threads share one queue (a request
// goes to the first thread free) or, Partitioned, each connection of
// Conns is bound to thread conn mod Threads and the requests are dealt
// to the connections round-robin, as the load generator does.
type synthChain struct {
	N, Threads, Conns                          int
	Partitioned                                bool
	Rate, Svc, Lag, Transit, Wake, Read, Write float64
	Seed                                       uint64
}

// trace runs s and returns the load result and the server's records, as
// the harness would collect them.
func (s synthChain) trace() (*loadgen.Result, []ServiceRecord) {
	rng := rand.New(rand.NewPCG(s.Seed, 1))
	threads, conns := max(s.Threads, 1), max(s.Conns, 1)
	free := make([]float64, threads) // when each thread has written its last response
	var gen []loadgen.TraceRecord
	var srv []ServiceRecord
	t := 1e9
	for i := range s.N {
		t += rng.ExpFloat64() * 1e9 / s.Rate
		sent := t + s.Lag
		arrive := sent + s.Transit
		k := 0
		if s.Partitioned {
			k = (i % conns) % threads
		} else {
			for j := range free {
				if free[j] < free[k] {
					k = j
				}
			}
		}
		start := free[k] + s.Read // busy: the thread reads it after its last write
		if free[k] <= arrive {
			start = arrive + s.Wake + s.Read
		}
		end := start + rng.ExpFloat64()*s.Svc
		free[k] = end + s.Write
		id := uint64(i + 1)
		gen = append(gen, loadgen.TraceRecord{ID: id, IntendedNs: int64(t), SentNs: int64(sent), RecvNs: int64(end + s.Write + s.Transit), Kernel: true})
		srv = append(srv, ServiceRecord{ID: id, StartNs: int64(start), EndNs: int64(end), Thread: int64(100 + k)})
	}
	window := int64(t - 1e9)
	r := &loadgen.Result{Valid: true, WindowNs: window, Trace: &loadgen.Trace{Records: gen}}
	r.Requests.OK = int64(s.N)
	return r, srv
}

// TestAnalyzeChain checks the analysis on synthetic traces whose answer is
// known: a server that pays a wake-up when idle and a write and a read
// between two services, which the plain M/G/c with the floor cannot
// describe (it adds the idle server's wake-up to every request and leaves
// out the busy server's overhead) and the queue on the effective service
// time can — one thread, four sharing one queue, four partitioned (whose
// split is the generator's round-robin, no random one) — and a chain
// whose generator sends late, which nothing on the server's side
// explains and which is not validated.
func TestAnalyzeChain(t *testing.T) {
	const svc = 100e3
	base := synthChain{Threads: 1, Conns: 16, Svc: svc, Transit: 5e3, Wake: 40e3, Read: 10e3, Write: 15e3}
	floorRun := base
	floorRun.N, floorRun.Rate, floorRun.Svc, floorRun.Seed = 3000, 100, 1, 9
	floorLoad, floorSrv := floorRun.trace()
	fparts, funm := Join(floorLoad.Trace.Records, floorSrv)
	floor := FloorOf(fparts, funm, 100)
	if !near(floor.InboundNs, 55e3, 0.01) || !near(floor.ReturnNs, 20e3, 0.01) {
		t.Fatalf("floor %+v, want 55 µs inbound (transit, wake-up, read) + 20 return (write, transit)", floor)
	}
	for _, tc := range []struct {
		name        string
		threads     int
		partitioned bool
		lag         float64
		wantPass    bool
		plainMisses bool // the plain model is off by more than the tolerance
	}{
		{name: "one thread", threads: 1, wantPass: true, plainMisses: true},
		{name: "four threads shared", threads: 4, wantPass: true},
		{name: "four threads partitioned", threads: 4, partitioned: true, wantPass: true, plainMisses: true},
		{name: "late generator", threads: 1, lag: 40e3, wantPass: false, plainMisses: true},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			run := base
			run.N, run.Threads, run.Partitioned, run.Lag, run.Seed = 60_000, tc.threads, tc.partitioned, tc.lag, 3
			run.Rate = 0.5 * float64(tc.threads) * 1e9 / svc
			load, srv := run.trace()
			e := AnalyzeChain(ChainInput{Name: tc.name, Work: "exp", AskedNs: svc, TargetRho: 0.5, Servers: tc.threads, Partitioned: tc.partitioned,
				Load: load, Server: srv, Floor: floor, Tolerance: 0.10, MaxJudgedRho: 0.7, Seed: 1})
			t.Logf("%s: measured %.1f µs, %s %.1f µs (ratio %.3f, p99 %.3f), %s %.1f µs (ratio %.3f, p99 %.3f)", tc.name, e.Measured.MeanNs/1e3,
				e.Predicted.Model, e.Predicted.MeanNs/1e3, e.Ratio, e.RatioP99, e.Plain.Model, e.Plain.MeanNs/1e3, e.PlainRatio, e.PlainRatioP99)
			if e.Decomposition.Requests != run.N || e.Decomposition.Unmatched != 0 || e.Decomposition.Negative != 0 {
				t.Fatalf("decomposition %+v", e.Decomposition)
			}
			if e.Pass != tc.wantPass || !e.Judged {
				t.Errorf("pass %v judged %v (ratio %.3f, reasons %v), want pass %v", e.Pass, e.Judged, e.Ratio, e.Reasons, tc.wantPass)
			}
			if tc.wantPass && math.Abs(e.Ratio-1) > 0.05 {
				t.Errorf("ratio %.3f on the effective service time: want it within 5%%", e.Ratio)
			}
			if off := math.Abs(e.PlainRatio-1) > 0.10; off != tc.plainMisses {
				t.Errorf("ratio %.3f on the plain model: off by more than 10%% %v, want %v", e.PlainRatio, off, tc.plainMisses)
			}
			if got, want := e.Gap.Total, e.Measured.MeanNs-e.Plain.MeanNs; math.Abs(got-want) > 1e-6*e.Measured.MeanNs {
				t.Errorf("gap %v, want measured − plain %v", got, want)
			}
			if !near(e.EffectiveServiceNs, svc+25e3, 0.03) || !near(e.RhoEffective, 0.5*(svc+25e3)/svc, 0.03) {
				t.Errorf("effective service %v, ρ %v: want ≈ %v (service + write + read), %v", e.EffectiveServiceNs, e.RhoEffective, svc+25e3, 0.625)
			}
			if e.Servers != tc.threads || e.Partitioned != tc.partitioned || !e.Textbook.Stable {
				t.Errorf("servers %d partitioned %v textbook %+v", e.Servers, e.Partitioned, e.Textbook)
			}
		})
	}
}

// TestValidationJudge checks the overall verdict from the experiments'.
func TestValidationJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		exps []ChainExperiment
		want bool
	}{
		{name: "all pass", exps: []ChainExperiment{{Judged: true, Pass: true}, {Judged: false}}, want: true},
		{name: "one fails", exps: []ChainExperiment{{Judged: true, Pass: true}, {Name: "x", Judged: true, Reasons: []string{"r"}}}},
		{name: "none judged", exps: []ChainExperiment{{Judged: false, Pass: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Validation{Experiments: tc.exps, Tolerance: 0.1}
			v.Judge()
			if v.Validated != tc.want || v.Verdict == "" {
				t.Errorf("validated %v (%q), want %v", v.Validated, v.Verdict, tc.want)
			}
		})
	}
}

// TestAnalyzeChainMMc checks the limit of a server without overhead: four
// threads sharing one queue, nothing between two services, no loopback.
// The measured response times are M/M/4's, and the judged prediction (on
// measured inputs) agrees with Erlang C with the asked work (Textbook).
func TestAnalyzeChainMMc(t *testing.T) {
	const svc = 100e3
	run := synthChain{N: 80_000, Threads: 4, Rate: 0.7 * 4 * 1e9 / svc, Svc: svc, Seed: 8}
	load, srv := run.trace()
	e := AnalyzeChain(ChainInput{Name: "M/M/4 ρ=0.7", Work: "exp", AskedNs: svc, TargetRho: 0.7, Servers: 4,
		Load: load, Server: srv, Tolerance: 0.10, MaxJudgedRho: 0.7, Seed: 2})
	if e.Textbook.Model != "M/M/4" || !e.Pass {
		t.Fatalf("textbook %+v, pass %v (ratio %.3f, reasons %v)", e.Textbook, e.Pass, e.Ratio, e.Reasons)
	}
	for _, c := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"measured mean vs Erlang C", e.Measured.MeanNs, e.Textbook.MeanNs, 0.04},
		{"measured p99 vs Erlang C", e.Measured.P99Ns, e.Textbook.P99Ns, 0.06},
		{"predicted mean vs Erlang C", e.Predicted.MeanNs, e.Textbook.MeanNs, 0.04},
		{"predicted p99 vs Erlang C", e.Predicted.P99Ns, e.Textbook.P99Ns, 0.06},
	} {
		if !near(c.got, c.want, c.tolerance) {
			t.Errorf("%s: %.4g, want %.4g within %.0f%%", c.name, c.got, c.want, 100*c.tolerance)
		}
	}
}
