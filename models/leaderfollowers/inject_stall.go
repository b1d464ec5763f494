//go:build concbench_regress_stall

package leaderfollowers

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const injectRegression = true

// injectName names the injected regression (see inject_none.go).
const injectName = "stall"

// injectEvery and injectStall: every injectEvery-th request (across the
// pool) its serving thread sleeps injectStall before serving it, as a
// handler that now and then makes a slow blocking call would. The other
// threads of the pool go on; only that request (and what waits behind it
// on its connection) is late.
const (
	injectEvery = 100
	injectStall = 1_000_000 // ns
)

var injectCount atomic.Uint64

func injectCost() {
	if injectCount.Add(1)%injectEvery == 0 {
		ts := unix.NsecToTimespec(injectStall)
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
}
