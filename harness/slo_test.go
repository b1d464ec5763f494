package harness

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

// runSearch runs s against oracle, which says what a probe at a rate
// gives (and the percentile it measured, 0 for none), and returns its
// probes and result.
func runSearch(s sloSearch, oracle func(rate float64) (probeOutcome, string, float64)) ([]sloProbe, results.SLOResult) {
	var done []sloProbe
	for {
		r, ok := s.sloNext(done)
		if !ok {
			break
		}
		o, why, pct := oracle(r)
		done = append(done, sloProbe{rate: r, outcome: o, why: why, pctNs: pct})
	}
	return done, s.sloResult(done)
}

// threshold is an oracle that passes every rate up to t, measuring no
// percentile.
func threshold(t float64) func(float64) (probeOutcome, string, float64) {
	return func(r float64) (probeOutcome, string, float64) {
		if r <= t {
			return probePass, "p99 within", 0
		}
		return probeFail, "p99 above", 0
	}
}

// queue is an oracle whose percentile grows as p0/(1 − rate/c), against
// a bound of b: it reaches b at c·(1 − p0/b).
func queue(p0, c, b float64) func(float64) (probeOutcome, string, float64) {
	return func(r float64) (probeOutcome, string, float64) {
		p := 1e12
		if r < c {
			p = p0 / (1 - r/c)
		}
		if p <= b {
			return probePass, "p99 within", p
		}
		return probeFail, "p99 above", p
	}
}

func TestSLOSearchConverges(t *testing.T) {
	const capacity = 100_000
	for _, tc := range []struct {
		name   string
		oracle func(float64) (probeOutcome, string, float64)
		truth  float64
		probes int
		// within is the largest error of the result the search may
		// make, as a fraction of the truth.
		within float64
	}{
		// A server whose queue fills up before the closed-loop capacity:
		// the crossing interpolated from the probes' percentiles.
		{"queue, 3 probes", queue(100e3, 95_000, 1e6), 85_500, 3, 0.03},
		{"queue, 4 probes", queue(100e3, 95_000, 1e6), 85_500, 4, 0.02},
		{"queue, low", queue(400e3, 60_000, 1e6), 36_000, 3, 0.05},
		// No percentile to interpolate: bisection, and the midpoint.
		{"threshold, 3 probes", threshold(61_000), 61_000, 3, 0.1},
		{"threshold, 6 probes", threshold(61_000), 61_000, 6, 0.02},
		{"threshold above capacity", threshold(200_000), capacity, 8, SLOResolution},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sloSearch{capacity: capacity, boundNs: 1e6, probes: tc.probes}
			done, res := runSearch(s, tc.oracle)
			if len(done) > tc.probes {
				t.Fatalf("%d probes, at most %d allowed when one passes", len(done), tc.probes)
			}
			if res.Invalid != "" || res.Probes != len(done) {
				t.Fatalf("result %+v of %d probes", res, len(done))
			}
			if res.RatePerS < res.LoPerS || res.RatePerS > res.HiPerS || res.LoPerS > tc.truth || res.HiPerS < tc.truth && res.HiPerS != capacity {
				t.Fatalf("result %+v outside its bracket, or the bracket misses the truth %g; probes %+v", res, tc.truth, done)
			}
			if e := math.Abs(res.RatePerS-tc.truth) / tc.truth; e > tc.within {
				t.Errorf("result %g, truth %g: off by %.1f%%, want at most %.1f%%; probes %+v", res.RatePerS, tc.truth, 100*e, 100*tc.within, done)
			}
		})
	}
}

// TestSLOSearchCensored checks that a search bounded by the load
// generator's ceiling whose every probe passes is a lower bound, and
// one bounded by the server's own capacity is not.
func TestSLOSearchCensored(t *testing.T) {
	for _, capped := range []bool{false, true} {
		s := sloSearch{capacity: 100_000, boundNs: 1e6, probes: 3, capped: capped}
		_, res := runSearch(s, threshold(200_000))
		if res.Censored != capped || res.RatePerS == 0 {
			t.Errorf("capped %t: result %+v, want censored %t", capped, res, capped)
		}
		if p := (&results.Point{SLO: &res}); res.Capped() != capped {
			t.Errorf("capped %t: Capped() of %+v", capped, p.SLO)
		}
	}
}

func TestSLOSearchNoPass(t *testing.T) {
	s := sloSearch{capacity: 100_000, boundNs: 1e6, probes: 4}
	done, res := runSearch(s, func(float64) (probeOutcome, string, float64) { return probeFail, "p99 3ms > 1ms", 3e6 })
	if len(done) <= 4 || len(done) > 8 || res.RatePerS != 0 || res.LoPerS != 0 || res.Invalid != "" {
		t.Fatalf("result %+v after %d probes, want 0 after 5 to 8", res, len(done))
	}
	last := done[len(done)-1].rate
	if len(done) < 8 && last/2 >= SLOResolution*s.capacity {
		t.Errorf("stopped after %d probes at %g req/s; the next halving, %g, was above %g", len(done), last, last/2, SLOResolution*s.capacity)
	}
	if !strings.Contains(res.Reason, "no probe met the objective") || !strings.Contains(res.Reason, "p99 3ms > 1ms") {
		t.Errorf("reason %q, want the lowest probe's failure", res.Reason)
	}
	if res.HiPerS != last {
		t.Errorf("bracket's upper end %g, want the lowest failing probe %g", res.HiPerS, last)
	}
}

// TestSLOSearchExtends checks that a search whose probes all failed goes
// on halving the lowest failing rate until one passes: its result is a
// rate that met the objective, not 0.
func TestSLOSearchExtends(t *testing.T) {
	s := sloSearch{capacity: 100_000, boundNs: 1e6, probes: 3}
	done, res := runSearch(s, threshold(6_000))
	// 50 000, 25 000 and 12 500 fail; then the halving 6 250 fails and
	// 3 125 passes: the result is within [3 125, 6 250].
	if len(done) != 5 || res.LoPerS != 3_125 || res.HiPerS != 6_250 || res.RatePerS < 3_125 || res.RatePerS > 6_250 || res.Invalid != "" {
		t.Fatalf("result %+v after probes %+v, want one in [3125, 6250] after 5", res, done)
	}
}

func TestSLOSearchGeneratorFault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  []int // the probes the generator spoils, in order of measurement
		invalid bool
	}{
		{"first probe, once", []int{0}, false},
		{"second probe, once", []int{1}, false},
		{"twice in a row", []int{1, 2}, true},
		{"twice apart", []int{0, 3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			s := sloSearch{capacity: 100_000, probes: 4}
			done, res := runSearch(s, func(r float64) (probeOutcome, string, float64) {
				defer func() { n++ }()
				if slices.Contains(tc.faults, n) {
					return probeGenerator, "invalid (generator-cpu)", 0
				}
				return threshold(70_000)(r)
			})
			_, got := results.SLOCapacity.Value(&results.Point{Kind: results.KindSLO, Status: results.StatusOK, SLO: &res})
			if !tc.invalid {
				if res.Invalid != "" || !got || res.LoPerS > 70_000 || res.HiPerS < 70_000 {
					t.Fatalf("result %+v after probes %+v, want a valid bracket of 70000", res, done)
				}
				if i := tc.faults[0]; done[i+1].rate != done[i].rate {
					t.Errorf("the spoiled probe at %g was followed by one at %g, want the same rate again", done[i].rate, done[i+1].rate)
				}
				return
			}
			if len(done) != tc.faults[1]+1 {
				t.Errorf("%d probes, want the search to stop at the second spoiled one (%d)", len(done), tc.faults[1]+1)
			}
			if !strings.Contains(res.Invalid, "generator-cpu") || got {
				t.Errorf("result %+v, want it invalid with the generator's reason and no SLO capacity", res)
			}
		})
	}
}

func TestSLOSearchNoCapacity(t *testing.T) {
	s := sloSearch{capacity: 0, probes: 3}
	if r, ok := s.sloNext(nil); ok {
		t.Fatalf("a search without capacity probes at %g", r)
	}
}

func TestJudgeProbe(t *testing.T) {
	slo := &SLO{Bound: Duration(time.Millisecond)}
	valid := func(p99 time.Duration) *loadgen.Result {
		return &loadgen.Result{Valid: true, Latency: loadgen.Summary{Count: 1000, P99Ns: int64(p99)}}
	}
	invalid := func(checks ...loadgen.Check) *loadgen.Result {
		return &loadgen.Result{Latency: loadgen.Summary{Count: 1000, P99Ns: int64(time.Microsecond)}, Checks: checks}
	}
	// The generator's own lateness: a p99 with it and one without.
	lagged := func(p99, without time.Duration) *loadgen.Result {
		return &loadgen.Result{Latency: loadgen.Summary{Count: 1000, P99Ns: int64(p99)}, Checks: []loadgen.Check{loadgen.CheckBias},
			LagShares: []loadgen.LagShare{{Percentile: 99, LatencyNs: int64(p99), WithoutLagNs: int64(without), Judged: true, Exceeded: true}}}
	}
	for _, tc := range []struct {
		name string
		p    results.Point
		want probeOutcome
	}{
		{"within", results.Point{Status: results.StatusOK, Load: valid(500 * time.Microsecond)}, probePass},
		{"at the bound", results.Point{Status: results.StatusOK, Load: valid(time.Millisecond)}, probePass},
		{"above", results.Point{Status: results.StatusOK, Load: valid(2 * time.Millisecond)}, probeFail},
		{"over capacity", results.Point{Status: results.StatusOK, Load: invalid(loadgen.CheckOverCapacity)}, probeFail},
		{"rate missed", results.Point{Status: results.StatusOK, Load: invalid(loadgen.CheckRate)}, probeFail},
		{"generator CPU", results.Point{Status: results.StatusOK, Load: invalid(loadgen.CheckCPU, loadgen.CheckRate)}, probeGenerator},
		// Lateness only adds latency: within the bound with it is a pass;
		// above it, the generator's only if within without it.
		{"generator lag, within", results.Point{Status: results.StatusOK, Load: lagged(900*time.Microsecond, 300*time.Microsecond)}, probePass},
		{"generator lag decides", results.Point{Status: results.StatusOK, Load: lagged(3*time.Millisecond, 800*time.Microsecond)}, probeGenerator},
		{"above, lag or not", results.Point{Status: results.StatusOK, Load: lagged(5*time.Millisecond, 2*time.Millisecond)}, probeFail},
		{"server died", results.Point{Status: results.StatusFailed, FailedBy: results.FailedServer, Failure: "exited"}, probeFail},
		{"load failed", results.Point{Status: results.StatusFailed, FailedBy: results.FailedLoad, Failure: "no connection"}, probeGenerator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := judgeProbe(&tc.p, slo); got != tc.want || why == "" {
				t.Errorf("judgeProbe = %v (%q), want %v", got, why, tc.want)
			}
		})
	}
}

func TestSLOValidate(t *testing.T) {
	base := func() Experiment {
		e := Experiment{Configs: []Config{{Name: "a", Model: "netpoll"}}, Workloads: []Workload{{Workload: DefaultWorkload()}},
			Fractions: []float64{0.5}, Repetitions: 1, Warmup: Duration(100 * time.Millisecond), Duration: Duration(time.Second)}
		e.Workloads[0].SLO = &SLO{Bound: Duration(time.Millisecond)}
		return e.WithDefaults()
	}
	for _, tc := range []struct {
		name string
		edit func(*Experiment)
		want string // "" valid
	}{
		{"defaults", func(*Experiment) {}, ""},
		{"percentile", func(e *Experiment) { e.Workloads[0].SLO.Percentile = 95 }, "SLO percentile 95"},
		{"bound", func(e *Experiment) { e.Workloads[0].SLO.Bound = 0 }, "SLO bound 0s out of range"},
		{"probes", func(e *Experiment) { e.SLOProbes = MaxSLOProbes + 1 }, "SLO probes"},
		{"warmup", func(e *Experiment) { e.SLOWarmup = Duration(time.Millisecond) }, "SLO warmup"},
		{"window", func(e *Experiment) { e.SLODuration = Duration(time.Millisecond) }, "SLO duration"},
		{"no capacity", func(e *Experiment) { e.Fractions, e.Rates = nil, []float64{1000} }, "no capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := base()
			tc.edit(&e)
			err := e.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if e := base(); e.SLOProbes != DefaultSLOProbes || time.Duration(e.SLODuration) != DefaultSLODuration {
		t.Errorf("defaults %d probes of %v", e.SLOProbes, e.SLODuration)
	}
}
