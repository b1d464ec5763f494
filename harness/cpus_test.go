package harness

import (
	"slices"
	"strings"
	"testing"

	"concbench/internal/cpuset"
	"concbench/loadgen"
)

// TestSplitCPUs checks the automatic split of the server's and the load
// generator's CPUs, and the generator's automatic workers, on machines
// of 1 to 64 CPUs.
func TestSplitCPUs(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		cpus                 cpuset.Set
		wantServer, wantLoad string
		wantWorkers          int
		wantWorkerCPUs       string
	}{
		{name: "1cpu", cpus: cpuRange(0, 1), wantServer: "", wantLoad: "", wantWorkers: 1},
		{name: "2cpus", cpus: cpuRange(0, 2), wantServer: "0", wantLoad: "1", wantWorkers: 1},
		{name: "3cpus", cpus: cpuRange(0, 3), wantServer: "0", wantLoad: "1-2", wantWorkers: 1, wantWorkerCPUs: "2"},
		{name: "4cpus", cpus: cpuRange(0, 4), wantServer: "0-1", wantLoad: "2-3", wantWorkers: 1, wantWorkerCPUs: "3"},
		{name: "16cpus", cpus: cpuRange(0, 16), wantServer: "0-7", wantLoad: "8-15", wantWorkers: 7, wantWorkerCPUs: "9-15"},
		{name: "affinity-4-11", cpus: cpuRange(4, 8), wantServer: "4-7", wantLoad: "8-11", wantWorkers: 3, wantWorkerCPUs: "9-11"},
		{name: "128cpus", cpus: cpuRange(0, 128), wantServer: "0-63", wantLoad: "64-127", wantWorkers: 63, wantWorkerCPUs: "65-127"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, load := SplitCPUs(tc.cpus)
			if srv.String() != tc.wantServer || load.String() != tc.wantLoad {
				t.Errorf("SplitCPUs(%s) = %q, %q; want %q, %q", tc.cpus, srv, load, tc.wantServer, tc.wantLoad)
			}
			if len(srv) == 0 {
				return // Resolve would split this process's own CPUs
			}
			e := resolveDefault(t, srv.String(), load.String(), 0)
			if e.LoadWorkers != tc.wantWorkers || cpuset.Set(e.LoadWorkerCPUs).String() != tc.wantWorkerCPUs {
				t.Errorf("load workers on %s: %d on CPUs %q, want %d on %q", load, e.LoadWorkers, cpuset.Set(e.LoadWorkerCPUs), tc.wantWorkers, tc.wantWorkerCPUs)
			}
		})
	}
	t.Run("fixed workers", func(t *testing.T) {
		e := resolveDefault(t, "0-3", "4-7", 2)
		if e.LoadWorkers != 2 || len(e.LoadWorkerCPUs) != 0 {
			t.Errorf("load workers %d on %v, want the experiment's 2, unpinned", e.LoadWorkers, e.LoadWorkerCPUs)
		}
	})
}

// resolveDefault returns the default profile resolved with the given
// server and load generator CPUs and load workers (0: automatic): the
// sizing tests resolve for machines other than this one.
func resolveDefault(t *testing.T, server, load string, workers int) Experiment {
	t.Helper()
	def, err := Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	e := def.WithDefaults()
	e.ServerCPUs, e.LoadCPUs, e.LoadWorkers = server, load, workers
	if e, err = e.Resolve(); err != nil {
		t.Fatal(err)
	}
	return e
}

// cpuRange returns CPUs from..from+n-1.
func cpuRange(from, n int) cpuset.Set {
	s := make(cpuset.Set, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

// TestPool checks the sizing rule's thread count: a thread per CPU
// without blocking work, Little's law with it, never more than the
// requests in flight.
func TestPool(t *testing.T) {
	const us = 1000.0
	for _, tc := range []struct {
		name         string
		n            int
		cpu, block   float64
		conns, depth int
		want         int
	}{
		{name: "1 CPU", n: 1, cpu: 10 * us, conns: 64, depth: 1, want: 1},
		{name: "2 CPUs", n: 2, cpu: 10 * us, conns: 64, depth: 1, want: 2},
		{name: "8 CPUs", n: 8, cpu: 10 * us, conns: 64, depth: 1, want: 8},
		{name: "64 CPUs", n: 64, cpu: 10 * us, conns: 64, depth: 1, want: 64},
		{name: "64 CPUs, 16 connections", n: 64, cpu: 10 * us, conns: 16, depth: 1, want: 16},
		{name: "1 CPU, blocking", n: 1, cpu: 10 * us, block: 300 * us, conns: 64, depth: 1, want: 31},
		{name: "2 CPUs, blocking", n: 2, cpu: 10 * us, block: 300 * us, conns: 64, depth: 1, want: 62},
		{name: "8 CPUs, blocking", n: 8, cpu: 10 * us, block: 300 * us, conns: 64, depth: 1, want: 64},
		{name: "8 CPUs, blocking, pipelined", n: 8, cpu: 10 * us, block: 300 * us, conns: 64, depth: 4, want: 248},
		{name: "64 CPUs, blocking", n: 64, cpu: 10 * us, block: 300 * us, conns: 10000, depth: 1, want: 1984},
		{name: "blocking without CPU work", n: 2, block: 300 * us, conns: 64, depth: 1, want: 64},
		{name: "no CPUs given", n: 0, cpu: 10 * us, conns: 64, depth: 1, want: 1},
		{name: "no work at all", n: 2, conns: 64, depth: 1, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pool(tc.n, tc.cpu, tc.block, tc.conns, tc.depth); got != tc.want {
				t.Errorf("Pool(%d, %g, %g, %d, %d) = %d, want %d", tc.n, tc.cpu, tc.block, tc.conns, tc.depth, got, tc.want)
			}
		})
	}
}

// TestResolveSizes checks what every family runs with under the rule on
// servers of 1, 8 and 64 CPUs, under the cpu and the block workload: the
// threads, GOMAXPROCS and flags each model gets, and the rule recorded.
func TestResolveSizes(t *testing.T) {
	type want struct {
		threads, gomaxprocs int
		args                string
	}
	for _, tc := range []struct {
		server, load string
		wants        map[string]want // by run name
	}{
		{server: "0", load: "1", wants: map[string]want{
			"leaderfollowers/lifo/cpu":   {1, 2, "--promotion lifo"},
			"leaderfollowers/lifo/block": {31, 32, "--promotion lifo"},
			"halfsynchalfreactive/cpu":   {1, 3, ""},
			"halfsynchalfreactive/block": {31, 33, ""},
			"proactor/cpu":               {1, 2, ""},
			"proactor/block":             {31, 32, ""},
			"activeobject/cpu":           {1, 3, "--ao-objects 1"},
			"activeobject/block":         {1, 33, "--ao-objects 31"},
			"threadperconn/cpu":          {128, 66, ""},
			"netpoll/cpu":                {0, 1, ""},
			"netpoll/block":              {0, 1, ""},
		}},
		{server: "0-7", load: "8-15", wants: map[string]want{
			"leaderfollowers/lifo/cpu":   {8, 9, "--promotion lifo"},
			"leaderfollowers/lifo/block": {64, 65, "--promotion lifo"},
			"halfsynchalfreactive/cpu":   {8, 10, ""},
			"proactor/cpu":               {8, 9, ""},
			"activeobject/cpu":           {8, 17, "--ao-objects 8"},
			"activeobject/block":         {8, 73, "--ao-objects 64"},
			"netpoll/cpu":                {0, 8, ""},
		}},
		{server: "0-63", load: "64-127", wants: map[string]want{
			"leaderfollowers/lifo/cpu":   {64, 65, "--promotion lifo"},
			"leaderfollowers/lifo/block": {64, 65, "--promotion lifo"},
			"halfsynchalfreactive/cpu":   {64, 66, ""},
			"activeobject/cpu":           {64, 129, "--ao-objects 64"},
			"netpoll/cpu":                {0, 64, ""},
		}},
	} {
		t.Run(tc.server, func(t *testing.T) {
			e := resolveDefault(t, tc.server, tc.load, 0)
			for name, w := range tc.wants {
				s, ok := e.Sizes[name]
				if !ok {
					t.Errorf("%s: no size", name)
					continue
				}
				var c *Config
				for i := range e.Configs {
					if strings.HasPrefix(name, e.Configs[i].Name+"/") {
						c = &e.Configs[i]
					}
				}
				args := strings.Join(append(slices.Clone(c.Args), s.Args...), " ")
				if s.Threads != w.threads || s.GOMAXPROCS != w.gomaxprocs || args != w.args || !strings.HasPrefix(s.Rule, "rule: ") {
					t.Errorf("%s on %s: threads %d, GOMAXPROCS %d, args %q, rule %q; want %d, %d, %q, a rule",
						name, tc.server, s.Threads, s.GOMAXPROCS, args, s.Rule, w.threads, w.gomaxprocs, w.args)
				}
			}
		})
	}
}

// TestPlacementBound checks that the automatic workers never exceed the
// smallest workload's connections.
func TestPlacementBound(t *testing.T) {
	e := Experiment{Workloads: []Workload{{Workload: DefaultWorkload()}}, Configs: Families()}
	e.Workloads[0].Conns = 4
	e.ServerCPUs, e.LoadCPUs = "0-15", "16-31"
	e, err := e.WithDefaults().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if e.LoadWorkers != 4 || len(e.LoadWorkerCPUs) != 4 || e.LoadWorkers > loadgen.MaxWorkers {
		t.Errorf("load workers %d on %v for 4 connections, want 4 pinned", e.LoadWorkers, e.LoadWorkerCPUs)
	}
}
