package cpuset

import (
	"os/exec"
	"slices"
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
