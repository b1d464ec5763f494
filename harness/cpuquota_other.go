//go:build !linux

package harness

import "fmt"

// cpuQuota is Linux's cgroup CPU quota; elsewhere there is none.
type cpuQuota struct{ desc string }

func newCPUQuota(share float64) (*cpuQuota, error) {
	return nil, fmt.Errorf("harness: a server CPU quota of %s needs Linux's cgroup cpu controller", fmtShare(share))
}

func (q *cpuQuota) place([]int) error { return nil }
func (q *cpuQuota) close()            {}
