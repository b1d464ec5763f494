package results

import "testing"

// TestOrdersFamily: every order without values is left out, an order
// far from the reference differs in its tested metric only, and without
// the reference nothing is tested.
func TestOrdersFamily(t *testing.T) {
	ref := [][]float64{{50, 51, 49, 50.5, 49.5}, {1, 1.1, 0.9, 1.05, 0.95}}
	vals := map[string][][]float64{
		"fifo": ref,
		"lifo": {{80, 81, 79, 80.5, 79.5}, {1, 1.1, 0.9, 1.05, 0.95}},
		"os":   ref,
	}
	tests := CompareOrders(vals, "fifo", []string{"os", "lifo", "priority"}, []bool{true, false}, 0.05)
	if len(tests) != 2 || tests[0].Order != "os" || tests[1].Order != "lifo" {
		t.Fatalf("tests %+v, want os then lifo, the first metric each", tests)
	}
	if tests[0].Sig || !tests[1].Sig {
		t.Errorf("os significant %v, lifo %v; want only lifo", tests[0].Sig, tests[1].Sig)
	}
	if BusiestVerdict(tests, "lifo") != 1 || BusiestVerdict(tests, "os") != 0 {
		t.Errorf("busiest verdicts %d (lifo), %d (os); want 1 and 0", BusiestVerdict(tests, "lifo"), BusiestVerdict(tests, "os"))
	}
	if got := CompareOrders(map[string][][]float64{"lifo": ref}, "fifo", []string{"lifo"}, []bool{true, true}, 0.05); got != nil {
		t.Errorf("without fifo: %+v, want no test", got)
	}
}
