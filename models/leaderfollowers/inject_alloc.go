//go:build concbench_regress_alloc

package leaderfollowers

import "sync/atomic"

const injectRegression = true

// injectName names the injected regression (see inject_none.go).
const injectName = "alloc"

// injectSink keeps the injected allocation reachable, so that it escapes
// to the heap; every pool thread stores into it.
var injectSink atomic.Pointer[[64]byte]

// injectCost allocates 64 bytes on the heap: one allocation per request
// and nothing else (the strict allocation rule's self-test).
func injectCost() {
	b := new([64]byte)
	b[0] = 1
	injectSink.Store(b)
}
