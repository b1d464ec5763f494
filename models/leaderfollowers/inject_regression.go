//go:build concbench_regression

package leaderfollowers

import "sync/atomic"

// injectRegression is true in a build with the concbench_regression tag:
// the CI gate's self-test builds the current tree with it as the "new"
// side and checks that the gate fails, naming this model and the metrics
// (concbench gate --head-tags concbench_regression).
const injectRegression = true

// injectIters is the injected CPU work per connection event: about 5 µs
// of integer arithmetic on the 2-vCPU VM it was calibrated on.
const injectIters = 3000

// injectSink keeps the injected allocation reachable, so that it escapes
// to the heap; every pool thread stores into it.
var injectSink atomic.Pointer[[64]byte]

// injectCost is the injected regression, run by the processing thread
// before it serves a connection's event: one heap allocation of 64 bytes
// and injectIters rounds of xorshift arithmetic written into it. At the
// gate's depth of 1 an event carries one request, so this is one
// allocation and ~5 µs of CPU per request.
func injectCost() {
	b := new([64]byte)
	x := uint64(len(b)) | 1
	for i := range injectIters {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i&63] ^= byte(x)
	}
	injectSink.Store(b)
}
