package results

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/stats"
)

// TestObjectiveBound: the published bound while the machine's floor takes
// at most a quarter of it; beyond, the floor plus three quarters of it —
// the same at the threshold, so that the bound grows smoothly.
func TestObjectiveBound(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct{ floor, want int64 }{
		{0, ms}, {100e3, ms}, {250e3, ms}, {663e3, 1413e3}, {2 * ms, 2750e3},
	} {
		if got := ObjectiveBound(ms, tc.floor); got != tc.want {
			t.Errorf("ObjectiveBound(1ms, floor %v) = %v, want %v", time.Duration(tc.floor), time.Duration(got), time.Duration(tc.want))
		}
	}
}

// latePoint is an equal-load point whose p99 is p99 and whose generator
// lateness accounts for late of it: invalid for generator-lag when that
// is more than half its own p99, as the generator's own verdict judges.
func latePoint(rep int, p99, late time.Duration) *Point {
	ls := loadgen.LagShare{Percentile: 99, LatencyNs: int64(p99), WithoutLagNs: int64(p99 - late), Judged: true,
		BoundNs: int64(p99 / 2), Exceeded: late > p99/2}
	l := &loadgen.Result{Valid: !ls.Exceeded, Latency: loadgen.Summary{Count: 10000, P99Ns: int64(p99)}, LagShares: []loadgen.LagShare{ls}}
	if ls.Exceeded {
		l.Checks = []loadgen.Check{loadgen.CheckBias}
	}
	return &Point{Kind: KindRate, Repetition: rep, Status: StatusOK, Load: l, Server: ServerCost{Requests: 10000, CPUNsPerRequest: 20e3}}
}

// TestSpoiledSymmetric: the same lateness of the generator spoils the
// points of a fast and of a slow configuration alike — never by a
// threshold relative to one point's own value, which left the fast one's
// point out and kept the slow one's.
func TestSpoiledSymmetric(t *testing.T) {
	lag := 500 * time.Microsecond // LagBound of a 1 ms objective
	fast, slow := latePoint(0, 400*time.Microsecond, 300*time.Microsecond), latePoint(0, 3*time.Millisecond, 300*time.Microsecond)
	if fast.Load.Valid || !slow.Load.Valid {
		t.Fatalf("the generator's own verdict: fast valid %t, slow valid %t; want the fast one invalid", fast.Load.Valid, slow.Load.Valid)
	}
	for _, m := range []Metric{LatencyP99, CPUPerReq} {
		for _, p := range []*Point{fast, slow} {
			if bad, why := Spoiled(p, m, lag); bad {
				t.Errorf("%s: a point with 300µs of lateness spoiled (%s), want kept: the bound is 500µs", m.Name, why)
			}
		}
		fast2, slow2 := latePoint(0, 900*time.Microsecond, 600*time.Microsecond), latePoint(0, 3*time.Millisecond, 600*time.Microsecond)
		for _, p := range []*Point{fast2, slow2} {
			if bad, _ := Spoiled(p, m, lag); !bad {
				t.Errorf("%s: a point with 600µs of lateness kept, want spoiled (bound 500µs)", m.Name)
			}
		}
	}
	// A point the generator's CPU spoiled is spoiled whatever its value;
	// one the server failed is kept.
	cpu := latePoint(0, time.Millisecond, 0)
	cpu.Load.Valid, cpu.Load.Checks = false, []loadgen.Check{loadgen.CheckCPU}
	over := latePoint(0, 9*time.Millisecond, 0)
	over.Load.Valid, over.Load.Checks = false, []loadgen.Check{loadgen.CheckOverCapacity}
	if bad, _ := Spoiled(cpu, LatencyP99, lag); !bad {
		t.Error("a point whose generator waited for its CPU is kept")
	}
	if bad, _ := Spoiled(over, LatencyP99, lag); bad {
		t.Error("a point the server failed (over capacity) is left out: its value is the server's")
	}
	// The same, while the host took the server's CPUs: the host's.
	over.Server.StealFraction = 0.2
	if bad, why := Spoiled(over, LatencyP99, lag); !bad || !strings.Contains(why, "20.0% of the server's CPUs") {
		t.Errorf("over capacity while the host took 20%% of the server's CPUs: spoiled %t (%s), want left out, saying why", bad, why)
	}
}

// TestExclusionOnOneSide: a round spoiled for one configuration is left
// out of that configuration's comparisons for both sides — the rival's
// value of that round is not compared with anything — and only there.
func TestExclusionOnOneSide(t *testing.T) {
	w := &SuiteWorkload{Name: "cpu", Runs: []string{"a", "b", "c"}, Names: []string{"a", "b", "c"}, BoundNs: int64(time.Millisecond)}
	col := WinnerColumns[2] // CPU per request
	group := func(name string, cpu float64, spoiled int) *Group {
		g := &Group{Config: ModelConfig{Name: name}, Kind: KindRate, RatePerS: 1000}
		for r := range 6 {
			p := latePoint(r, 500*time.Microsecond, 0)
			p.Config, p.OfferedRatePerS = g.Config, 1000
			p.Server.CPUNsPerRequest = cpu * 1e3 * (1 + 0.01*float64(r%3))
			if r == spoiled {
				p.Load.Valid, p.Load.Checks = false, []loadgen.Check{loadgen.CheckCPU}
			}
			g.Points = append(g.Points, p)
		}
		return g
	}
	c := DecideCell([]*Group{group("a", 20, -1), group("b", 30, 2), group("c", 40, -1)}, w, col, 1000, nil)
	if ex := c.Excluded["b"]; len(ex) != 1 {
		t.Errorf("b's exclusions %v, want round 2", ex)
	}
	for _, r := range c.Decision.Rivals {
		want := 6
		if r.Name == "b" {
			want = 5
		}
		if r.Rounds != want {
			t.Errorf("%s compared on %d rounds, want %d", r.Name, r.Rounds, want)
		}
	}
}

// TestControl: the A/A control decides a cell again with the twin beside
// its original; a twin measured like its original is not separated, and
// one whose values were (falsely) far from its original's would be — the
// check that a false decision is reported.
func TestControl(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := &SuiteWorkload{Name: "cpu", Runs: []string{"a", "b"}, Names: []string{"a", "b"}, Twin: "a/twin", TwinName: "a/twin", Of: "a", Objective: "p99 ≤ 1ms"}
	col := WinnerColumns[0] // SLO capacity, ±10 %
	vals := func(m float64) map[int]float64 {
		v := map[int]float64{}
		for r := range 8 {
			v[r] = m * math.Exp(0.02*rng.NormFloat64())
		}
		return v
	}
	t.Run("a true twin", func(t *testing.T) {
		c := DecideCell([]*Group{sloGroup("a", vals(1000)), sloGroup("b", vals(600)), sloGroup("a/twin", vals(1000))}, w, col, 0, nil)
		if c.Control == nil || c.Control.Separated || !Decided(c.Control.Decision) {
			t.Fatalf("control %+v, want decided and not separated", c.Control)
		}
		if len(c.Decision.Rivals) != 1 || c.Decision.Verdict != stats.Winner {
			t.Errorf("the answer %s has the twin in it, or is not a's", c.Decision)
		}
	})
	t.Run("a twin that differs", func(t *testing.T) {
		c := DecideCell([]*Group{sloGroup("a", vals(1000)), sloGroup("b", vals(600)), sloGroup("a/twin", vals(700))}, w, col, 0, nil)
		if c.Control == nil || !c.Control.Separated || c.Control.Why == "" {
			t.Fatalf("control %+v, want the twin separated, and how", c.Control)
		}
	})
}

// TestCensoredSLO: a search capped by the generator's ceiling is a lower
// bound and one that met nothing an upper bound at its lowest failing
// rate; two capped configurations are never equivalent.
func TestCensoredSLO(t *testing.T) {
	capped := &Point{Kind: KindSLO, Status: StatusOK, SLO: &SLOResult{RatePerS: 50000, LoPerS: 50000, HiPerS: 52000, CapacityPerS: 52000, Censored: true}}
	if v, c := Bound(capped, SLOCapacity, 50000); v != 50000 || c != stats.AtLeast {
		t.Errorf("capped: %g %v, want ≥ 50000", v, c)
	}
	none := &Point{Kind: KindSLO, Status: StatusOK, SLO: &SLOResult{RatePerS: 0, HiPerS: 400, CapacityPerS: 20000}}
	if v, c := Bound(none, SLOCapacity, 0); v != 400 || c != stats.AtMost {
		t.Errorf("met nothing: %g %v, want < 400", v, c)
	}
	w := &SuiteWorkload{Name: "tiny", Runs: []string{"a", "b"}, Names: []string{"a", "b"}, Objective: "p99 ≤ 1ms"}
	g := func(name string) *Group {
		gr := sloGroup(name, map[int]float64{0: 50000, 1: 50000, 2: 50000, 3: 50000, 4: 50000})
		for _, p := range gr.Points {
			p.SLO.Censored = true
		}
		return gr
	}
	c := DecideCell([]*Group{g("a"), g("b")}, w, WinnerColumns[0], 0, nil)
	if c.Decision.Verdict != stats.Undecided || c.Decision.Rivals[0].Status != stats.Undetermined {
		t.Errorf("two configurations beyond the generator: %s, want undecided", c.Decision)
	}
}
