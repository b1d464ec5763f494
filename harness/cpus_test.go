package harness

import (
	"testing"

	"concbench/internal/cpuset"
	"concbench/loadgen"
)

// TestSplitCPUs checks the automatic split of the server's and the load
// generator's CPUs, and the thesis profile's load workers, on machines of
// 1 to 8 CPUs (and beyond the load generator's worker limit).
func TestSplitCPUs(t *testing.T) {
	thesis, err := Profile("thesis")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		cpus                 cpuset.Set
		wantServer, wantLoad string
		wantWorkers          int // the thesis profile's (its smallest workload has 16 connections)
	}{
		{name: "1cpu", cpus: cpuRange(0, 1), wantServer: "", wantLoad: "", wantWorkers: 1},
		{name: "2cpus", cpus: cpuRange(0, 2), wantServer: "0", wantLoad: "1", wantWorkers: 1},
		{name: "3cpus", cpus: cpuRange(0, 3), wantServer: "0", wantLoad: "1-2", wantWorkers: 2},
		{name: "4cpus", cpus: cpuRange(0, 4), wantServer: "0-1", wantLoad: "2-3", wantWorkers: 2},
		{name: "8cpus", cpus: cpuRange(0, 8), wantServer: "0-3", wantLoad: "4-7", wantWorkers: 4},
		{name: "affinity-4-11", cpus: cpuRange(4, 8), wantServer: "4-7", wantLoad: "8-11", wantWorkers: 4},
		{name: "64cpus", cpus: cpuRange(0, 64), wantServer: "0-31", wantLoad: "32-63", wantWorkers: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, load := SplitCPUs(tc.cpus)
			if srv.String() != tc.wantServer || load.String() != tc.wantLoad {
				t.Errorf("SplitCPUs(%s) = %q, %q; want %q, %q", tc.cpus, srv, load, tc.wantServer, tc.wantLoad)
			}
			if got := thesis.loadWorkersFor(load); got != tc.wantWorkers {
				t.Errorf("thesis load workers on %s = %d, want %d", load, got, tc.wantWorkers)
			}
		})
	}
	t.Run("max-workers", func(t *testing.T) {
		e := Experiment{Workloads: []Workload{{Workload: DefaultWorkload()}}}
		e.Workloads[0].Conns = loadgen.MaxConns
		if got := e.loadWorkersFor(cpuRange(0, 2*loadgen.MaxWorkers)); got != loadgen.MaxWorkers {
			t.Errorf("load workers on %d CPUs = %d, want loadgen's limit %d", 2*loadgen.MaxWorkers, got, loadgen.MaxWorkers)
		}
	})
}

// cpuRange returns CPUs from..from+n-1.
func cpuRange(from, n int) cpuset.Set {
	s := make(cpuset.Set, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

// TestResolveLoadWorkersPerCPU checks that the run gives the load
// generator a worker per load CPU when the experiment asks for it, and
// keeps the experiment's workers otherwise (resolve only: nothing is
// pinned or run).
func TestResolveLoadWorkersPerCPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		perCPU bool
		want   int
	}{
		{name: "per-cpu", perCPU: true, want: 3},
		{name: "fixed", perCPU: false, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Profile("thesis")
			if err != nil {
				t.Fatal(err)
			}
			e.ServerCPUs, e.LoadCPUs, e.LoadWorkersPerCPU = "0", "1-3", tc.perCPU
			r := &runner{exp: e.WithDefaults()}
			if err := r.resolve(); err != nil {
				t.Fatal(err)
			}
			if r.exp.LoadWorkers != tc.want {
				t.Errorf("load workers %d on load CPUs 1-3, want %d", r.exp.LoadWorkers, tc.want)
			}
		})
	}
}
