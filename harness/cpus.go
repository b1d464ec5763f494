package harness

import (
	"fmt"
	"slices"

	"concbench/internal/cpuset"
	"concbench/loadgen"
)

// SplitCPUs returns the automatic CPU split of cpus (this process's
// CPUs, in order): the server the first half, rounded down, the load
// generator the rest — on 2 CPUs CPU 0 and CPU 1, on 4 CPUs 0-1 and
// 2-3, on 8 CPUs 0-3 and 4-7. With fewer than 2 CPUs both are empty:
// the server and the generator then run unpinned on the one CPU.
func SplitCPUs(cpus cpuset.Set) (server, load cpuset.Set) {
	if len(cpus) < 2 {
		return nil, nil
	}
	half := len(cpus) / 2
	return cpus[:half], cpus[half:]
}

// Resolve returns e with what it leaves automatic fixed: the CPU split
// (SplitCPUs of this process's CPUs), the load generator's workers and
// their CPUs (loadgen.Placement), and every configuration's size under
// every workload (Sizes: the sizing rule from its server CPUs, or its
// fixed values). It is what Run measures and what "bench
// --print-experiment" prints.
func (e Experiment) Resolve() (Experiment, error) {
	cur, err := cpuset.Current()
	if err != nil {
		return e, fmt.Errorf("harness: %w", err)
	}
	if e.ServerCPUs == "" {
		if srv, load := SplitCPUs(cur); len(srv) > 0 {
			e.ServerCPUs, e.LoadCPUs = srv.String(), load.String()
		}
	}
	if _, err := cpuset.Parse(e.ServerCPUs); err != nil {
		return e, fmt.Errorf("harness: server CPUs: %w", err)
	}
	load, err := cpuset.Parse(e.LoadCPUs)
	if err != nil {
		return e, fmt.Errorf("harness: load CPUs: %w", err)
	}
	if e.LoadWorkers == 0 {
		smallest := 0
		for _, w := range e.Workloads {
			if smallest == 0 || w.Conns < smallest {
				smallest = w.Conns
			}
		}
		e.LoadWorkers, e.LoadWorkerCPUs = loadgen.Placement(load, smallest)
	}
	n := e.serverCPUCount()
	e.expand(n)
	e.Sizes = map[string]Size{}
	for _, w := range e.Workloads {
		for _, c := range e.Configs {
			if !w.runs(c.Name) {
				continue
			}
			k := n
			if c.CPUs > 0 {
				if c.CPUs > n {
					return e, fmt.Errorf("harness: configuration %q runs on %d CPUs, and the server has %d (%s)", c.Name, c.CPUs, n, e.ServerCPUs)
				}
				k = c.CPUs
			}
			s := c.size(&w, k)
			if s.Err != "" {
				return e, fmt.Errorf("harness: configuration %q: %s", c.Name, s.Err)
			}
			e.Sizes[e.runName(c.Name, &w)] = s
		}
	}
	return e, nil
}

// serverCPUsOf returns the server CPUs configuration c runs on: the
// first c.CPUs of the experiment's, or all of them.
func (e *Experiment) serverCPUsOf(c *Config) string {
	srv, _ := cpuset.Parse(e.ServerCPUs) // validated
	if c.CPUs > 0 && c.CPUs < len(srv) {
		return srv[:c.CPUs].String()
	}
	return e.ServerCPUs
}

// runName is the name of configuration c under w, as points and figures
// label it: c, followed by "/" and the workload's name when there are
// several workloads.
func (e *Experiment) runName(c string, w *Workload) string {
	if len(e.Workloads) > 1 {
		return c + "/" + w.Name
	}
	return c
}

// expand replaces e's sweep (Experiment.Sweep) by its configurations for
// a server of n CPUs.
func (e *Experiment) expand(n int) {
	switch e.Sweep {
	case SweepThreads:
		// The sweep of the models the experiment names (bench --models).
		var cs []Config
		for _, c := range ThreadsConfigs(n) {
			if slices.ContainsFunc(e.Configs, func(o Config) bool { return o.Model == c.Model }) {
				cs = append(cs, c)
			}
		}
		e.Configs = cs
	case SweepCores:
		var cs []Config
		names := map[string][]string{}
		for _, c := range e.Configs {
			for _, k := range CoreCounts(n) {
				ck := c
				ck.Name, ck.CPUs = fmt.Sprintf("%s%s%d", c.Name, CPUsSuffix, k), k
				cs = append(cs, ck)
				names[c.Name] = append(names[c.Name], ck.Name)
			}
		}
		e.Configs = cs
		e.Workloads = slices.Clone(e.Workloads)
		for i := range e.Workloads {
			var ls []string
			for _, name := range e.Workloads[i].Configs {
				ls = append(ls, names[name]...)
			}
			e.Workloads[i].Configs = ls
		}
	}
	e.Sweep = ""
}

// serverCPUCount is the number of CPUs the server runs on: its CPU list's,
// or, unpinned, this process's.
func (e *Experiment) serverCPUCount() int {
	if srv, _ := cpuset.Parse(e.ServerCPUs); len(srv) > 0 {
		return len(srv)
	}
	cur, _ := cpuset.Current()
	return max(len(cur), 1)
}
