// Package plotstest builds the made-up runs that the tests of packages
// plots and report draw and report on, each from a valid point of the
// synthetic run (resultstest.Main writes it; dir is its folder).
package plotstest

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
)

// The model names of the made-up runs; they must match plots.ModelLF and
// plots.ModelHSHR (plots' tests cannot import plots through this package).
const (
	modelLF   = "leaderfollowers"
	modelHSHR = "halfsynchalfreactive"
)

// SyntheticFigures are the figures the synthetic run has data for, in
// report order.
var SyntheticFigures = []string{"latency", "spectrum", "capacity", "ctxsw", "cpu", "allocs", "mechanisms", "threads"}

// Synthetic reads the synthetic run in dir and returns an empty folder to
// render it into.
func Synthetic(t *testing.T, dir string) (string, *results.Run, []results.Point) {
	t.Helper()
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return t.TempDir(), r, pts
}

// NameList is names as a run's experiment lists its configurations or
// workloads, [{"name": …}, …]: the order analyze reads them in.
func NameList(names ...string) []map[string]any {
	var out []map[string]any
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return out
}

// Mutate returns a copy of pts with f applied to each.
func Mutate(pts []results.Point, f func(p *results.Point)) []results.Point {
	out := append([]results.Point(nil), pts...)
	for i := range out {
		if out[i].Load != nil {
			l := *out[i].Load
			out[i].Load = &l
		}
		out[i].Server.PerThread = append([]models.ThreadStats(nil), out[i].Server.PerThread...)
		f(&out[i])
	}
	return out
}

// Template returns the synthetic run and a copy of its first
// valid open-loop point, for tests that build runs of their own from it.
func Template(t *testing.T, dir string) (*results.Run, *results.Point) {
	t.Helper()
	_, r, pts := Synthetic(t, dir)
	return r, ValidOpenPoint(t, pts)
}

// ValidOpenPoint returns a valid open-loop point of the synthetic run
// whose p99 is trusted and whose server answered, to copy into made-up
// runs.
func ValidOpenPoint(t *testing.T, pts []results.Point) *results.Point {
	t.Helper()
	for i := range pts {
		p := &pts[i]
		if p.Kind == results.KindOpen && !p.Invalid() && p.Status == results.StatusOK && p.Load != nil && p.Load.Trusted(99) && p.Server.Requests > 0 {
			return p
		}
	}
	t.Fatal("the synthetic run has no valid open point to copy")
	return nil
}

// MechCounts are a configuration's mechanisms per request in a made-up
// run: system calls by kind, and "wakes" and "ipis".
type MechCounts map[string]float64

// WithMechanisms returns pts with a mechanisms point in repetition 0 of
// every configuration of counts (by run name) at 1000 req/s over 1000
// requests, made from the run's first rate point: counted, or, for a
// configuration whose counts are nil, not counted for why.
func WithMechanisms(t *testing.T, pts []results.Point, counts map[string]MechCounts, why string) []results.Point {
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

// MechRun is the who-wins test's suite run (WinnersRun) with mechanisms:
// under cpu, a (the CPU's winner) makes fewer futex calls than b, the
// runner-up; c's point is invalid; under block, every configuration is
// counted, c (the costs' winner) with the fewest system calls.
func MechRun(t *testing.T, dir string) (*results.Run, []results.Point) {
	r, pts := WinnersRun(t, dir, map[string][4][3]float64{
		"cpu":   {{90000, 50000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	pts = WithMechanisms(t, pts, map[string]MechCounts{
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

// WinnersRun builds a two-workload suite run from a valid synthetic
// point: configurations a, b and c under "cpu" and "block", 5
// repetitions of capacity, of its search's result (80% of the capacity,
// under an objective of p99 ≤ 1 ms for cpu and 2 ms for block) and of one
// equal-load rate per workload, each metric's values the given median
// times a small spread per repetition. want gives, per workload, the
// medians of capacity, p99 (µs), CPU per request (µs) and context
// switches per request of a, b and c.
func WinnersRun(t *testing.T, dir string, want map[string][4][3]float64) (*results.Run, []results.Point) {
	t.Helper()
	r, tmpl := Template(t, dir)
	names := []string{"a", "b", "c"}
	run := *r
	run.Configs = nil
	run.Experiment = map[string]any{
		"configs": NameList(names...),
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

// ClaimsRun builds a suite run of the given workloads from a valid
// synthetic point: every configuration of ClaimsConfigs under each, as
// "<config>/<workload>", 6 repetitions of one equal-load rate point,
// their context switches, CPU (µs) and allocations per request all the
// value cost gives the configuration under the workload, times a small
// spread per repetition.
func ClaimsRun(t *testing.T, dir string, workloads []string, cost func(cfg, workload string) float64) (*results.Run, []results.Point) {
	t.Helper()
	r, tmpl := Template(t, dir)
	run := *r
	run.Configs = nil
	var names []string
	for _, c := range ClaimsConfigs {
		names = append(names, c.Name)
	}
	run.Experiment = map[string]any{"configs": NameList(names...), "workloads": NameList(workloads...)}
	spread := []float64{0.97, 0.98, 0.99, 1.01, 1.02, 1.03}
	var out []results.Point
	for _, w := range workloads {
		for ci, c := range ClaimsConfigs {
			cfg := c
			cfg.Name = c.Name + "/" + w
			run.Configs = append(run.Configs, cfg)
			for rep := range spread {
				f := spread[(rep+ci)%len(spread)]
				p := *tmpl
				load := *tmpl.Load
				p.Load, p.Config, p.Kind, p.Repetition = &load, cfg, results.KindRate, rep
				p.Fraction, p.OfferedRatePerS = 0, 1000
				v := cost(c.Name, w) * f
				p.Server.CtxswPerRequest, p.Server.CPUNsPerRequest, p.Server.AllocsPerRequest = v, v*1e3, v
				out = append(out, p)
			}
		}
	}
	return &run, out
}

// ClaimsConfigs are the configurations of ClaimsRun: the default pair,
// a variant of each model that the table must not pair, and a model it
// does not test.
var ClaimsConfigs = []results.ModelConfig{
	{Name: "leaderfollowers/lifo", Model: modelLF, Args: []string{"--promotion", "lifo", "--gomaxprocs", "1"}},
	{Name: "leaderfollowers/fifo", Model: modelLF, Args: []string{"--promotion", "fifo"}},
	{Name: "halfsynchalfreactive", Model: modelHSHR, Args: []string{"--gomaxprocs", "2"}},
	{Name: "halfsynchalfreactive/pooled", Model: modelHSHR, Args: []string{"--hshr-pooled"}},
	{Name: "netpoll", Model: "netpoll"},
}
