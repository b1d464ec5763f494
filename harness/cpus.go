package harness

import (
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

// loadWorkersFor returns the load workers for load CPUs when the
// experiment asks for one per load CPU (LoadWorkersPerCPU): one per CPU,
// at least 1, at most loadgen's limit of one per connection of the
// smallest workload and MaxWorkers.
func (e *Experiment) loadWorkersFor(load cpuset.Set) int {
	n := max(1, len(load))
	for _, w := range e.Workloads {
		n = min(n, max(1, w.Conns))
	}
	return min(n, loadgen.MaxWorkers)
}
