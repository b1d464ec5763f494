package loadgen

import "testing"

// TestIntervalTail: each whole interval with enough responses gives its
// p99; partial and sparse ones are left out; the median is of those. One
// interval whose tail a stall set moves the median by one rank only.
func TestIntervalTail(t *testing.T) {
	const every = 100e6
	ts := &tailSink{every: every}
	interval := func(start int64, n int, tail int64) {
		c := newHdrCounts(1, 10e9, 3)
		for i := range n {
			v := int64(100e3)
			if i >= n*98/100 { // 2 %: the p99 lies in the tail
				v = tail
			}
			c.record(v)
		}
		ts.interval(start, start+every, c)
	}
	for i, tail := range []int64{1e6, 1.1e6, 50e6, 0.9e6, 1.05e6} { // the third: a stall
		interval(int64(i)*every, 1000, tail)
	}
	interval(5*every, 50, 1e6) // too few responses
	short := newHdrCounts(1, 10e9, 3)
	for range 1000 {
		short.record(100e3)
	}
	ts.interval(6*every, 6*every+every/2, short) // a partial last interval
	it := ts.result()
	if it.Intervals != 5 || len(it.P99Ns) != 5 {
		t.Fatalf("tail %+v, want 5 intervals", it)
	}
	if it.P99MedianNs < 1e6 || it.P99MedianNs > 1.06e6 {
		t.Errorf("median p99 %d, want the third smallest of the intervals', about 1.05ms, whatever the stall", it.P99MedianNs)
	}
}
