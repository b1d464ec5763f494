//go:build !linux

package harness

import "errors"

// idleConns are a point's idle connections (Workload.Idle).
type idleConns struct{}

// openIdle fails: the harness runs on Linux only (the load generator
// needs epoll).
func (r *runner) openIdle(rc *runConfig, n int) (*idleConns, error) {
	return nil, errors.New("idle connections: not supported on this operating system")
}

func (ic *idleConns) close() error { return nil }
