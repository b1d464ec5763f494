package plots

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
	"concbench/results/resultstest"
)

// connectionRun is a made-up connections run: two configurations at one
// rate over three connection counts, 6 repetitions; "flat" costs the same
// per request at every count, "capped" twice as much per request at 1000
// connections as at 100, and is over its cap (unavailable, with the
// reason) at 10000; one of flat's repetitions at 10000 is invalid. The
// control workload holds 100 active and 9900 idle connections: flat's
// p99 there is as high as with 10000 active.
func connectionRun() (*results.Run, []results.Point) {
	const rate = 5000
	r := &results.Run{ID: "connections-test", Profile: "connections"}
	cpuUs := map[string]map[int]float64{
		"flat":   {100: 20, 1000: 20, 10000: 21},
		"capped": {100: 20, 1000: 40},
	}
	var pts []results.Point
	for _, conns := range []int{100, 1000, 10000, -100} {
		idle := 0
		if conns < 0 { // the control
			conns, idle = -conns, 9900
		}
		for _, cfg := range []string{"flat", "capped"} {
			name := cfg + "/conns=" + itoa(conns)
			if idle > 0 {
				name += ",idle=" + itoa(idle)
			}
			r.Configs = append(r.Configs, results.ModelConfig{Name: name, Model: cfg})
			for rep := range 6 {
				p := results.Point{
					Run: r.ID, Config: results.ModelConfig{Name: name, Model: cfg}, Kind: results.KindRate,
					OfferedRatePerS: rate, Repetition: rep, Status: results.StatusOK,
					Workload: results.Workload{Protocol: "http", Conns: conns, Idle: idle},
				}
				cpu, ok := cpuUs[cfg][conns]
				if !ok {
					p.Status = results.StatusUnavailable
					p.Failure = "10000 connections exceed the model's limit of 4096: one thread per connection"
					pts = append(pts, p)
					continue
				}
				j := jitter(rep)
				lat := loadgen.Summary{Count: 15000, P50Ns: int64(50_000 * j), P99Ns: int64(200_000 * j * float64(conns+idle) / 100),
					P999Ns: int64(400_000 * j * float64(conns+idle) / 100)}
				p.Load = &loadgen.Result{Valid: !(cfg == "flat" && conns == 10000 && rep == 3), Latency: lat}
				if !p.Load.Valid {
					p.Load.Checks = []loadgen.Check{loadgen.CheckRate}
				}
				p.Server = results.ServerCost{
					Requests: 15000, CPUNsPerRequest: cpu * 1e3 * j, CtxswPerRequest: 0.5 * j,
					RSSBytes: int64(conns) << 14, Threads: 6, FDs: int64(conns + 8),
				}
				if cfg == "capped" {
					p.Server.Threads = int64(conns + 6)
				}
				pts = append(pts, p)
			}
		}
	}
	return r, pts
}

func itoa(n int) string { return results.FormatFloat(float64(n)) }

// jitter is a repeatable spread within ±3%.
func jitter(rep int) float64 { return 1 + 0.01*float64(rep%7-3) }

// TestConnectionsFigure checks the connections figure's data against its
// golden CSV, the CPU ratios and the cap in its caption, that it renders,
// and that a run without rate points neither draws it nor lists it as
// missing.
func TestConnectionsFigure(t *testing.T) {
	r, pts := connectionRun()
	a := Analyze(r, pts, Options{})
	f := connectionsFigure(a)
	if f == nil {
		t.Fatal("no connections figure for a run with rate points at three counts")
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "connections.csv"), figureCSV(t, f))
	checkCaption(t, f,
		"for 2 configuration(s) and their controls at one offered rate",
		"Per-request CPU at 10000 ÷ at the smallest count ≥ 100 connections",
		"flat: 1.05× [",
		"(10000 ÷ 100 connections)",
		"capped: no ratio at 10000 connections, not run there (below); at its largest count, 2× [",
		"(1000 ÷ 100 connections)",
		"capped stops at 10000 connections: 10000 connections exceed the model's limit of 4096: one thread per connection",
		"1 invalid repetition excluded",
		"Control (large rings",
		"flat with 100 active and 9900 idle: p99 19.9ms [19.4ms, 20.4ms], against 19.8ms [19.4ms, 20.4ms] 93.8% with all 10000 active",
		"capped with 100 active and 9900 idle: p99 19.9ms [19.4ms, 20.4ms], against not run with all 10000 active",
	)
	if slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "No control in this run") }) {
		t.Errorf("notes %q: a run with the control says it has none", f.Notes)
	}
	checkRenders(t, f, "svg", "png")

	t.Run("no rate points", func(t *testing.T) {
		_, r, pts := synthetic(t)
		figs, omitted := Figures(r, pts, Options{})
		checkNotDrawn(t, figs, "connections")
		checkNotListed(t, omitted, "connections")
	})
	t.Run("all invalid", func(t *testing.T) {
		bad := slices.Clone(pts)
		for i := range bad {
			if bad[i].Load != nil {
				l := *bad[i].Load
				l.Valid = false
				bad[i].Load = &l
			}
		}
		f := connectionsFigure(Analyze(r, bad, Options{}))
		if f == nil || !strings.Contains(f.Caption, "invalid repetitions excluded") {
			t.Fatalf("a run whose rate points are all invalid: figure %v; want one drawing them as excluded", f)
		}
	})
	t.Run("one count", func(t *testing.T) {
		var one []results.Point
		for _, p := range pts {
			if p.Workload.Conns == 100 && p.Workload.Idle == 0 {
				one = append(one, p)
			}
		}
		_, omitted := Figures(r, one, Options{})
		if !slices.ContainsFunc(omitted, func(o string) bool {
			return strings.Contains(o, "rate points measured at two or more connection counts")
		}) {
			t.Errorf("omitted %q: want the connections figure listed as not drawn", omitted)
		}
	})
}

// TestConnSeriesName checks how configurations under the connections
// profile's workloads become one series.
func TestConnSeriesName(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		conns, idle  int
		want         string
	}{
		{name: "profile workload", config: "leaderfollowers/lifo/conns=256", conns: 256, want: "leaderfollowers/lifo"},
		{name: "other workload name", config: "netpoll/http", conns: 256, want: "netpoll/http"},
		{name: "single workload", config: "netpoll", conns: 64, want: "netpoll"},
		{name: "control", config: "netpoll/conns=256,idle=9744", conns: 256, idle: 9744, want: "netpoll +idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &results.Group{Config: results.ModelConfig{Name: tc.config},
				Points: []*results.Point{{Workload: results.Workload{Conns: tc.conns, Idle: tc.idle}}}}
			if got := connSeriesName(g); got != tc.want {
				t.Errorf("connSeriesName(%s) = %q, want %q", tc.config, got, tc.want)
			}
		})
	}
}
