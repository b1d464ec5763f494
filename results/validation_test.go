package results

import (
	"math"
	"math/rand/v2"
	"testing"

	"concbench/loadgen"
)

// chainTrace simulates a traced single-server run: Poisson intended
// sends at rate, each sent lag ns late, reaching the server inbound ns
// later, served FCFS with exponential service of mean svcNs (plus extra
// ns per request that the server spends after it has timed the service
// and before it takes the next request, if any: an untimed write),
// answered back in ret ns. It
// returns the load result and the server's records, as the harness would
// collect them.
func chainTrace(n int, rate, svcNs, lag, inbound, ret, extra float64, seed uint64) (*loadgen.Result, []ServiceRecord) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var gen []loadgen.TraceRecord
	var srv []ServiceRecord
	t, free := 1e9, 0.0
	for i := range n {
		t += rng.ExpFloat64() * 1e9 / rate
		sent := t + lag
		start := math.Max(sent+inbound, free)
		end := start + rng.ExpFloat64()*svcNs
		free = end + extra
		id := uint64(i + 1)
		gen = append(gen, loadgen.TraceRecord{ID: id, IntendedNs: int64(t), SentNs: int64(sent), RecvNs: int64(end + ret), Kernel: true})
		srv = append(srv, ServiceRecord{ID: id, StartNs: int64(start), EndNs: int64(end)})
	}
	window := int64(t - 1e9)
	r := &loadgen.Result{Valid: true, WindowNs: window, Trace: &loadgen.Trace{Records: gen}}
	r.Requests.OK = int64(n)
	return r, srv
}

// TestAnalyzeChain checks the analysis on synthetic traces whose answer is
// known: a chain that adds only a fixed loopback to an M/M/1 server is
// validated (the floor accounts for it); one whose server spends 40 µs
// per request after the timed service (an untimed write) is not — its
// queue grows beyond M/G/1's, the gap shows in the queue and dispatch
// parts — and the M/G/1 with the measured gap between services explains
// it.
func TestAnalyzeChain(t *testing.T) {
	const svc = 100e3
	floorLoad, floorSrv := chainTrace(3000, 100, 1, 0, 30e3, 20e3, 0, 9)
	fparts, funm := Join(floorLoad.Trace.Records, floorSrv)
	floor := FloorOf(fparts, funm, 100)
	if !near(floor.MeanNs, 50e3, 0.01) || !near(floor.InboundNs, 30e3, 0.01) {
		t.Fatalf("floor %+v, want 50 µs = 30 inbound + 20 return", floor)
	}
	for _, tc := range []struct {
		name     string
		extra    float64 // ns per request the server does not time
		wantPass bool
	}{
		{name: "loopback only", wantPass: true},
		{name: "untimed work", extra: 40e3, wantPass: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load, srv := chainTrace(60_000, 5000, svc, 0, 30e3, 20e3, tc.extra, 3)
			e := AnalyzeChain(ChainInput{Name: tc.name, Work: "exp", AskedNs: svc, TargetRho: 0.5, Load: load, Server: srv,
				Floor: floor, Tolerance: 0.10, MaxJudgedRho: 0.7, Seed: 1})
			if e.Decomposition.Requests != 60_000 || e.Decomposition.Unmatched != 0 {
				t.Fatalf("joined %d, unmatched %d", e.Decomposition.Requests, e.Decomposition.Unmatched)
			}
			if e.Pass != tc.wantPass || !e.Judged {
				t.Errorf("pass %v judged %v (ratio %.3f, reasons %v), want pass %v", e.Pass, e.Judged, e.Ratio, e.Reasons, tc.wantPass)
			}
			if got, want := e.Gap.Total, e.Measured.MeanNs-e.Predicted.MeanNs; math.Abs(got-want) > 1e-6*e.Measured.MeanNs {
				t.Errorf("gap %v, want measured − predicted %v", got, want)
			}
			if !near(e.WithSetup.MeanNs, e.Measured.MeanNs, 0.05) {
				t.Errorf("M/G/1 with setup and gap %v, measured %v", e.WithSetup.MeanNs, e.Measured.MeanNs)
			}
			if e.Decomposition.GenLag != 0 {
				t.Errorf("generator lag %v, want 0", e.Decomposition.GenLag)
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
