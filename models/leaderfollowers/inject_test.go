package leaderfollowers

import "testing"

// TestInjectCost checks the CI gate's regression injector: an ordinary
// build's injectCost allocates nothing (and conn.HandleEvent never calls
// it); with the concbench_regression tag it allocates exactly once per
// call, the regression the gate's self-test must catch.
func TestInjectCost(t *testing.T) {
	want := 0.0
	if injectRegression {
		want = 1
	}
	if got := testing.AllocsPerRun(100, injectCost); got != want {
		t.Errorf("injectCost allocates %v times per call, want %v (injectRegression %t)", got, want, injectRegression)
	}
}
