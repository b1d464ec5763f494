//go:build concbench_regress_handoff

package leaderfollowers

import (
	"runtime"
	"sync"

	"concbench/internal/futex"
)

const injectRegression = true

// injectName names the injected regression (see inject_none.go).
const injectName = "handoff"

// injectHandoff is the injected hand-off: a helper OS thread that the
// serving thread wakes and waits for once per request, as a design that
// passed each request to another thread and waited for its answer
// would. Futex parkers, as the model's own promotions use: no channel, no
// allocation. mu serializes the pool's threads; done is parked on by
// whichever thread holds mu.
var injectHandoff struct {
	once      sync.Once
	mu        futex.Mutex
	req, done futex.Parker
}

// injectCost hands off to the helper and waits until it hands back: two
// thread wake-ups (context switches) per request.
func injectCost() {
	h := &injectHandoff
	h.once.Do(func() {
		go func() {
			// The helper lives as long as the server process; its thread is
			// never unlocked.
			runtime.LockOSThread()
			for {
				h.req.Park()
				h.done.Unpark()
			}
		}()
	})
	h.mu.Lock()
	h.req.Unpark()
	h.done.Park()
	h.mu.Unlock()
}
