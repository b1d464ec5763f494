package results_test

import (
	"fmt"

	"concbench/results"
)

// Summarize gives the median of repeated measurements with the confidence
// interval benchstat would print, and says when there are too few of them.
func ExampleSummarize() {
	p99us := []float64{212, 198, 240, 205, 221, 230, 201, 215, 209, 226}
	s := results.Summarize(p99us)
	fmt.Printf("median %.1f µs, 95%% CI [%.0f, %.0f] (level %.3f)\n", s.Median, s.Lo, s.Hi, s.Level)

	few := results.Summarize(p99us[:5])
	lo, hi, kind := few.Band()
	fmt.Printf("n=5: median %.0f, band %s [%.0f, %.0f], %s\n", few.Median, kind, lo, hi, few.Warnings[0])
	// Output:
	// median 213.5 µs, 95% CI [201, 230] (level 0.979)
	// n=5: median 212, band range [198, 240], need >= 6 samples for confidence interval at level 0.95
}

// BenchName names a point in the Go benchmark format with key=value parts,
// so that benchstat can compare models (-col /model).
func ExampleBenchName() {
	p := results.Point{
		Config: results.ModelConfig{Name: "leaderfollowers/lifo", Model: "leaderfollowers"},
		Kind:   results.KindOpen, Fraction: 0.5,
	}
	fmt.Println("Benchmark" + results.BenchName(&p))
	// Output:
	// BenchmarkServe/config=leaderfollowers-lifo/kind=open/load=0.50
}
