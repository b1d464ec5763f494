package leaderfollowers

import "testing"

// TestInjectCost checks the CI gate's regression injectors: an ordinary
// build's injectCost does nothing and allocates nothing (and
// conn.HandleEvent never calls it); the alloc injector allocates exactly
// once per call, and the others (cpu, handoff, stall) never.
func TestInjectCost(t *testing.T) {
	want := 0.0
	if injectName == "alloc" {
		want = 1
	}
	if got := testing.AllocsPerRun(200, injectCost); got != want {
		t.Errorf("injectCost (%q) allocates %v times per call, want %v", injectName, got, want)
	}
	if injectRegression != (injectName != "") {
		t.Errorf("injectRegression %t with injectName %q", injectRegression, injectName)
	}
}
