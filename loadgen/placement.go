package loadgen

import "concbench/internal/cpuset"

// Placement returns how many workers a generator pinned to cpus runs by
// default, and the CPU each one is pinned to (Config.WorkerCPUs): a
// busy-polling worker per CPU but the first, which is left to the
// process's other threads (the Go runtime's sysmon, collector and
// timers, the harness's own goroutines) and to the kernel's work on
// those CPUs; with a single CPU, one worker, unpinned. At most maxWorkers
// (one per connection of the smallest workload; 0: no bound) and
// MaxWorkers.
//
// Note: a worker on every CPU was the first rule. With nothing idle,
// whatever else has to run on the generator's CPUs preempts a
// busy-polling worker for a scheduler slice: the generator's send lag
// grew by orders of magnitude against one worker with idle CPUs beside
// it (docs/findings.md, "Its own stalls with a busy worker on every
// CPU").
func Placement(cpus cpuset.Set, maxWorkers int) (workers int, workerCPUs []int) {
	switch {
	case len(cpus) == 0:
		return 1, nil
	case len(cpus) == 1:
		workers = 1
	default:
		workers = len(cpus) - 1
		workerCPUs = append([]int(nil), cpus[1:]...)
	}
	if maxWorkers > 0 {
		workers = min(workers, maxWorkers)
	}
	workers = min(workers, MaxWorkers)
	if len(workerCPUs) > workers {
		workerCPUs = workerCPUs[:workers]
	}
	return workers, workerCPUs
}

// Procs returns the GOMAXPROCS a generator process with workers
// busy-polling workers needs: a P per worker, and enough more that the
// Go collector's dedicated mark workers — a quarter of GOMAXPROCS —
// find Ps of their own instead of taking the P of a worker that the
// scheduler preempted (which would then wait out the marking).
func Procs(workers int) int {
	workers = max(workers, 1)
	// (w+4)/3 = ⌈(w+2)/3⌉ spare Ps cover the ⌊(GOMAXPROCS+2)/4⌋
	// dedicated mark workers: one worker gets 2 Ps, the harness's
	// measured choice for one.
	return workers + (workers+4)/3
}
