package plots

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestMechKindsCover checks the figure's segments: every kind of system
// call in exactly one, at most 6 (the legend's limit).
func TestMechKindsCover(t *testing.T) {
	if len(mechKinds) > 6 {
		t.Errorf("%d segments, want at most 6 legend entries", len(mechKinds))
	}
	seen := map[string]int{}
	for _, mk := range mechKinds {
		for _, k := range mk.kinds {
			seen[k]++
		}
	}
	for _, k := range results.SyscallKindNames() {
		if seen[k] != 1 {
			t.Errorf("kind %s is in %d segments, want 1", k, seen[k])
		}
		delete(seen, k)
	}
	if len(seen) > 0 {
		t.Errorf("segments of kinds that do not exist: %v", seen)
	}
}

// mechCounts are a configuration's mechanisms per request in a made-up
// run: system calls by kind, and "wakes" and "ipis".
type mechCounts map[string]float64

// withMechanisms returns pts with a mechanisms point in repetition 0 of
// every configuration of counts (by run name) at 1000 req/s over 1000
// requests, made from the run's first rate point: counted, or, for a
// configuration whose counts are nil, not counted for why.
func withMechanisms(t *testing.T, pts []results.Point, counts map[string]mechCounts, why string) []results.Point {
	t.Helper()
	var tmpl *results.Point
	for i := range pts {
		if pts[i].Kind == results.KindRate {
			tmpl = &pts[i]
			break
		}
	}
	if tmpl == nil {
		t.Fatal("no rate point to copy")
	}
	out := slices.Clone(pts)
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		c := counts[name]
		p := *tmpl
		load := *tmpl.Load
		p.Load, p.Kind, p.Repetition = &load, results.KindMechanisms, 0
		p.Config = results.ModelConfig{Name: name, Model: strings.Split(name, "/")[0]}
		p.Server = results.ServerCost{Requests: 1000}
		if c == nil {
			p.Server.MechanismsUnavailable = why
			out = append(out, p)
			continue
		}
		m := &results.Mechanisms{Syscalls: map[string]uint64{}, FutexWakes: uint64(c["wakes"] * 1000), WakeIPIs: uint64(c["ipis"] * 1000), IPICPUs: "0"}
		for _, k := range results.SyscallKindNames() {
			m.Syscalls[k] = uint64(c[k] * 1000)
			m.Total += m.Syscalls[k]
		}
		p.Server.Mechanisms = m
		out = append(out, p)
	}
	return out
}

// mechRun is the who-wins test's suite run (winnersRun) with mechanisms:
// under cpu, a (the CPU's winner) makes fewer futex calls than b, the
// runner-up; c's point is invalid; under block, every configuration is
// counted, c (the costs' winner) with the fewest system calls.
func mechRun(t *testing.T) (*results.Run, []results.Point) {
	r, pts := winnersRun(t, map[string][4][3]float64{
		"cpu":   {{90000, 50000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	pts = withMechanisms(t, pts, map[string]mechCounts{
		"a/cpu":   {"epoll_wait": 1, "epoll_ctl": 1, "read": 1, "write": 1, "futex": 0.1, "other": 0.2, "wakes": 0.02, "ipis": 0.5},
		"b/cpu":   {"epoll_wait": 0.5, "read": 1, "write": 1, "futex": 2, "other": 0.4, "wakes": 1, "ipis": 0.9},
		"c/cpu":   {"read": 1, "write": 1, "other": 1},
		"a/block": {"epoll_wait": 1, "epoll_ctl": 1, "read": 1, "write": 1, "futex": 1, "other": 1.5, "wakes": 0.5, "ipis": 0.6},
		"b/block": {"epoll_wait": 1, "epoll_ctl": 1, "read": 1, "write": 1, "futex": 1.2, "other": 1.4, "wakes": 0.6, "ipis": 0.7},
		"c/block": {"io_uring_enter": 1, "other": 1, "ipis": 0.1},
	}, "")
	for i := range pts {
		if p := &pts[i]; p.Kind == results.KindMechanisms && p.Config.Name == "c/cpu" {
			p.Load.Valid, p.Load.Reasons, p.Load.Checks = false, []string{"the generator's threads waited"}, []loadgen.Check{loadgen.CheckCPU}
		}
	}
	return r, pts
}

// TestMechanismsFigure renders the suite run's figure: a panel per
// workload, its CSV golden, every format drawn.
func TestMechanismsFigure(t *testing.T) {
	r, pts := mechRun(t)
	f := mechanismsFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no figure")
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "mechanisms_suite.csv"), figureCSV(t, f))
	checkRenders(t, f, Formats...)
	checkCaption(t, f, "cpu: fewest a (4.30), most b (4.90)", "block: fewest c (2.00), most b (6.60)")
}

// winnersRun builds a two-workload suite run from a valid synthetic
// point: configurations a, b and c under "cpu" and "block", 5
// repetitions of capacity, of its search's result (80% of the capacity,
// under an objective of p99 ≤ 1 ms for cpu and 2 ms for block) and of one
// equal-load rate per workload, each metric's values the given median
// times a small spread per repetition. want gives, per workload, the
// medians of capacity, p99 (µs), CPU per request (µs) and context
// switches per request of a, b and c.
func winnersRun(t *testing.T, want map[string][4][3]float64) (*results.Run, []results.Point) {
	t.Helper()
	r, tmpl := syntheticTemplate(t)
	names := []string{"a", "b", "c"}
	run := *r
	run.Configs = nil
	run.Experiment = map[string]any{
		"configs": nameList(names...),
		"workloads": []map[string]any{
			{"name": "cpu", "slo": map[string]any{"percentile": 99, "bound": "1ms"}},
			{"name": "block", "slo": map[string]any{"percentile": 99, "bound": "2ms"}},
		},
	}
	spread := []float64{0.97, 0.99, 1, 1.01, 1.03}
	var out []results.Point
	for _, wl := range []string{"cpu", "block"} {
		for ci, c := range names {
			name := c + "/" + wl
			run.Configs = append(run.Configs, results.ModelConfig{Name: name, Model: c})
			for rep := range spread {
				// Each configuration its own spread in a round, so that
				// paired differences vary as measured ones do.
				f := spread[(rep+ci)%len(spread)]
				for _, kind := range []results.Kind{results.KindCapacity, results.KindRate} {
					p := *tmpl
					load := *tmpl.Load
					p.Load, p.Config, p.Kind, p.Repetition = &load, results.ModelConfig{Name: name, Model: c}, kind, rep
					v := want[wl]
					if kind == results.KindCapacity {
						p.Fraction, p.OfferedRatePerS = 1, 0
						load.AchievedRatePerS = v[0][ci] * f
					} else {
						p.Fraction, p.OfferedRatePerS = 0, 1000
						load.Latency.P99Ns = int64(math.Round(v[1][ci] * 1e3 * f))
						p.Server.CPUNsPerRequest = v[2][ci] * 1e3 * f
						p.Server.CtxswPerRequest = v[3][ci] * f
					}
					out = append(out, p)
				}
				// The search's result: 80% of the capacity.
				out = append(out, results.Point{Config: results.ModelConfig{Name: name, Model: c}, Kind: results.KindSLO,
					Repetition: rep, Status: results.StatusOK, SLO: &results.SLOResult{Percentile: 99, BoundNs: 1e6,
						RatePerS: 0.8 * want[wl][0][ci] * f, LoPerS: 0.8 * want[wl][0][ci] * f, HiPerS: 0.85 * want[wl][0][ci] * f, CapacityPerS: want[wl][0][ci], Probes: 3}})
			}
		}
	}
	return &run, out
}
