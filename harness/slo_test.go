package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

// runSearch runs s against oracle, which says what a probe at a rate
// gives, and returns its probes and result.
func runSearch(s sloSearch, oracle func(rate float64) (probeOutcome, string)) ([]sloProbe, results.SLOResult) {
	var done []sloProbe
	for {
		r, ok := s.sloNext(done)
		if !ok {
			break
		}
		o, why := oracle(r)
		done = append(done, sloProbe{rate: r, outcome: o, why: why})
	}
	return done, s.sloResult(done)
}

// threshold is an oracle that passes every rate up to t.
func threshold(t float64) func(float64) (probeOutcome, string) {
	return func(r float64) (probeOutcome, string) {
		if r <= t {
			return probePass, "p99 within"
		}
		return probeFail, "p99 above"
	}
}

func TestSLOSearchConverges(t *testing.T) {
	const capacity = 100_000
	for _, tc := range []struct {
		name      string
		threshold float64
		prior     float64
		probes    int
		// resolution is the widest bracket the search may leave.
		resolution float64
	}{
		{"bisection, 3 probes", 61_000, 0, 3, capacity / 8},
		{"bisection, 6 probes", 61_000, 0, 6, capacity / 64},
		{"bisection, low threshold", 3_000, 0, 6, capacity / 64},
		{"prior right, 3 probes", 61_000, 60_000, 3, 0.1 * 60_000 / 2},
		{"prior right, above it", 64_000, 60_000, 3, 0.1 * 60_000 / 2},
		{"prior right, 4 probes", 57_500, 60_000, 4, 0.1 * 60_000 / 4},
		{"prior too low", 90_000, 40_000, 5, capacity / 2},
		{"prior too high", 20_000, 60_000, 5, capacity},
		{"threshold above capacity", 200_000, 0, 8, SLOResolution * capacity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sloSearch{capacity: capacity, prior: tc.prior, probes: tc.probes}
			done, res := runSearch(s, threshold(tc.threshold))
			if len(done) > tc.probes {
				t.Fatalf("%d probes, at most %d allowed when one passes", len(done), tc.probes)
			}
			if res.Invalid != "" || res.Probes != len(done) {
				t.Fatalf("result %+v of %d probes", res, len(done))
			}
			truth := min(tc.threshold, capacity)
			if res.RatePerS > truth || res.LoPerS != res.RatePerS || res.HiPerS < truth && res.HiPerS != capacity {
				t.Fatalf("result %+v does not bracket the threshold %g", res, truth)
			}
			if w := res.HiPerS - res.LoPerS; w > tc.resolution+1 {
				t.Errorf("bracket [%g, %g] is %g wide, want at most %g; probes %+v", res.LoPerS, res.HiPerS, w, tc.resolution, done)
			}
			if res.RatePerS > capacity {
				t.Errorf("result %g above the capacity %g", res.RatePerS, float64(capacity))
			}
		})
	}
}

func TestSLOSearchNoPass(t *testing.T) {
	for _, tc := range []struct {
		name  string
		prior float64
	}{{"bisection", 0}, {"with a prior", 50_000}} {
		t.Run(tc.name, func(t *testing.T) {
			s := sloSearch{capacity: 100_000, prior: tc.prior, probes: 4}
			done, res := runSearch(s, func(float64) (probeOutcome, string) { return probeFail, "p99 3ms > 1ms" })
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
		})
	}
}

// TestSLOSearchExtends checks that a search whose probes all failed goes
// on halving the lowest failing rate until one passes: its result is a
// rate that met the objective, not 0.
func TestSLOSearchExtends(t *testing.T) {
	s := sloSearch{capacity: 100_000, prior: 50_000, probes: 3}
	done, res := runSearch(s, threshold(6_000))
	// 50 000, 45 000 and 36 450 (stepping out) fail; then the halvings
	// 18 225 and 9 113 fail and 4 557 passes.
	if len(done) != 6 || res.RatePerS != 4_557 || res.HiPerS != 9_113 || res.Invalid != "" {
		t.Fatalf("result %+v after probes %+v, want 4557 after 6", res, done)
	}
}

// TestSLOSearchChanceFailures checks that two chance failures at the
// prior and at its edge cost a search with a prior at most the next step
// out, (1−SLOPriorWidth)³ of the prior, not half of it: the prior is
// the median of the earlier results, so its probe fails about half the
// time.
func TestSLOSearchChanceFailures(t *testing.T) {
	const prior = 60_000
	for _, tc := range []struct {
		name    string
		unlucky int // the first probes that fail whatever their rate
		lo, hi  float64
	}{
		{"one", 1, 57_000, 60_000},
		{"two", 2, 43_740, 54_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			s := sloSearch{capacity: 100_000, prior: prior, probes: 3}
			done, res := runSearch(s, func(r float64) (probeOutcome, string) {
				defer func() { n++ }()
				if n < tc.unlucky {
					return probeFail, "p99 above (a stall)"
				}
				return threshold(61_000)(r)
			})
			if len(done) > s.probes || res.RatePerS != tc.lo || res.HiPerS != tc.hi {
				t.Fatalf("result [%g, %g] after probes %+v, want [%g, %g]", res.RatePerS, res.HiPerS, done, tc.lo, tc.hi)
			}
		})
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
			done, res := runSearch(s, func(r float64) (probeOutcome, string) {
				defer func() { n++ }()
				if slices.Contains(tc.faults, n) {
					return probeGenerator, "invalid (generator-cpu)"
				}
				return threshold(70_000)(r)
			})
			_, got := results.SLOCapacity.Value(&results.Point{Kind: results.KindSLO, Status: results.StatusOK, SLO: &res})
			if !tc.invalid {
				if res.Invalid != "" || !got || res.RatePerS > 70_000 || res.HiPerS < 70_000 {
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
		{"generator lag", results.Point{Status: results.StatusOK, Load: invalid(loadgen.CheckBias)}, probeGenerator},
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
