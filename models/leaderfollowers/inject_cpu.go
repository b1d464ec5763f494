//go:build concbench_regress_cpu

package leaderfollowers

import "time"

const injectRegression = true

// injectName names the injected regression (see inject_none.go).
const injectName = "cpu"

// injectCPU is the injected CPU work per request.
const injectCPU = 5 * time.Microsecond

// injectCost spins for injectCPU of wall-clock time on the serving thread
// (reading the monotonic clock, which allocates nothing): about 5 µs of
// CPU per request, less when the thread is preempted meanwhile.
func injectCost() {
	start := time.Now()
	for time.Since(start) < injectCPU {
	}
}
