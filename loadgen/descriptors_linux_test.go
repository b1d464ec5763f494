package loadgen

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckDescriptors: more connections than this process may open
// descriptors for, even with its soft limit raised to the hard limit, are
// refused up front, naming the limit; a handful pass, and the soft limit
// is at the hard limit afterwards.
func TestCheckDescriptors(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Max == unix.RLIM_INFINITY || lim.Max > 1<<30 {
		t.Skipf("RLIMIT_NOFILE %+v (%v): no finite limit to exceed", lim, err)
	}
	if err := checkDescriptors(int(lim.Max)); err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") {
		t.Errorf("%d connections under a hard limit of %d: %v, want an error naming RLIMIT_NOFILE", lim.Max, lim.Max, err)
	}
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur != lim.Max {
		t.Errorf("after checkDescriptors RLIMIT_NOFILE is %+v (%v), want the soft limit at the hard limit", lim, err)
	}
	if err := checkDescriptors(16); err != nil {
		t.Errorf("16 connections: %v", err)
	}
}
