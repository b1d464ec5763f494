package loadgen

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckDescriptors: more connections than this process may open
// descriptors for are refused up front, naming the limit; a handful pass.
func TestCheckDescriptors(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY || lim.Cur > 1<<30 {
		t.Skipf("RLIMIT_NOFILE %+v (%v): no finite limit to exceed", lim, err)
	}
	if err := checkDescriptors(int(lim.Cur)); err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") {
		t.Errorf("%d connections under a soft limit of %d: %v, want an error naming RLIMIT_NOFILE", lim.Cur, lim.Cur, err)
	}
	if err := checkDescriptors(16); err != nil {
		t.Errorf("16 connections: %v", err)
	}
}
