package cpuset

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPinChild pins every thread of a child process and reads the result
// back from the kernel through taskset's view (/proc/<pid>/status).
func TestPinChild(t *testing.T) {
	cur, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	want := Set{cur[0]}
	if err := Pin(cmd.Process.Pid, want); err != nil {
		t.Fatal(err)
	}
	got, err := affinityOf(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("child affinity %v, want %v", got, want)
	}
}

// TestPinOffline: a CPU that is not online is refused by name before any
// thread is touched (the kernel would drop it silently, or fail with a
// bare EINVAL).
func TestPinOffline(t *testing.T) {
	on, err := Online()
	if err != nil {
		t.Skipf("no online CPU list: %v", err)
	}
	cur, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if len(on) == 0 || on[len(on)-1] >= 1023 {
		t.Skipf("online CPUs %v leave no CPU number to use as offline", on)
	}
	off := on[len(on)-1] + 1
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	before, err := affinityOf(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	err = Pin(cmd.Process.Pid, Set{cur[0], off})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("CPU %d not online", off)) {
		t.Fatalf("Pin with offline CPU %d: %v, want an error naming it", off, err)
	}
	if after, err := affinityOf(cmd.Process.Pid); err != nil || !slices.Equal(after, before) {
		t.Fatalf("affinity changed by a refused Pin: %v → %v (%v)", before, after, err)
	}
}

// TestCount: Count is the size of the calling thread's affinity mask.
func TestCount(t *testing.T) {
	cur, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if n := Count(); n != len(cur) || n < 1 {
		t.Fatalf("Count() = %d, affinity mask %v", n, cur)
	}
}
