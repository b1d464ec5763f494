//go:build !concbench_regress_alloc && !concbench_regress_cpu && !concbench_regress_handoff && !concbench_regress_stall

package leaderfollowers

// injectRegression is false in every ordinary build: the guarded call in
// conn.HandleEvent is a constant-false branch that the compiler removes,
// so the production build pays nothing for the CI gate's self-tests.
//
// Each build tag concbench_regress_<kind> injects one regression into this
// model, for proving that the gate catches it (concbench gate --head-tags
// concbench_regress_<kind>; at most one such tag per build):
//
//   - alloc: one 64-byte heap allocation per request (inject_alloc.go);
//   - cpu: about 5 µs of CPU per request, no allocation (inject_cpu.go);
//   - handoff: a hand-off to another thread and back per request, no
//     allocation (inject_handoff.go);
//   - stall: a 1 ms sleep of the serving thread once every 100 requests,
//     no allocation (inject_stall.go).
//
// At the gate's pipelining depth of 1 a connection event carries one
// request, so "per event" is "per request".
const injectRegression = false

// injectName names the injected regression ("" in this build).
const injectName = ""

// injectCost is never called in this build.
func injectCost() {}
