package harness

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestKthreadStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       bool
	}{
		// Field 9 (flags) of kdamond.0 and of a shell, as read on Linux 6.18.
		{"kernel thread", "77 (kdamond.0) S 2 0 0 0 -1 2129984 0 0 0 0 0 12 0 0 20 0 1 0 2\n", true},
		{"process", "4242 (bash) S 1 4242 4242 34816 4242 4194560 5000 0 0 0 1 0 0 0 20 0 1 0 9\n", false},
		{"comm with spaces and a parenthesis", "9 (a) b) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1\n", true},
		{"truncated", "9 (x) S 2 0\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kthreadStat(tc.stat); got != tc.want {
				t.Errorf("kthreadStat(%q) = %v, want %v", tc.stat, got, tc.want)
			}
		})
	}
}

// TestQuietKernel gives the machine's disturbing kernel threads
// SCHED_IDLE and restores them; it skips where there is none, or where
// this process may not change them. Another run on the machine may hold
// the threads quiet too (cmd/concbench's tests run benches at the same
// time): then the last of them restores, and this test checks the
// restored policies only when it was that one.
func TestQuietKernel(t *testing.T) {
	found, restore := quietKernel()
	restored := false
	defer func() {
		if !restored {
			restore()
		}
	}()
	if len(found) == 0 {
		t.Skip("no kernel thread of the known kinds runs here")
	}
	for _, kt := range found {
		if kt.Err != "" {
			t.Skipf("%s (pid %d): %s", kt.Name, kt.PID, kt.Err)
		}
		a, err := unix.SchedGetAttr(kt.PID, 0)
		if err != nil {
			t.Fatalf("sched_getattr %d: %v", kt.PID, err)
		}
		if a.Policy != unix.SCHED_IDLE || kt.To != "SCHED_IDLE" {
			t.Errorf("%s (pid %d) during the run: policy %s, recorded %q, want SCHED_IDLE", kt.Name, kt.PID, policyName(a.Policy), kt.To)
		}
	}
	restored = true
	if !restore() {
		t.Log("another run holds the threads quiet: it restores them")
		return
	}
	for _, kt := range found {
		a, err := unix.SchedGetAttr(kt.PID, 0)
		if err != nil {
			t.Fatalf("sched_getattr %d: %v", kt.PID, err)
		}
		if got := policyName(a.Policy); got != kt.From {
			t.Errorf("%s (pid %d) after the run: policy %s, want %s back", kt.Name, kt.PID, got, kt.From)
		}
	}
}
