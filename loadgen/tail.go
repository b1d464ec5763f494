package loadgen

import (
	"slices"
	"time"
)

// IntervalTail is a tail estimate that one stall of the machine cannot
// set: the corrected latency's p99 of each interval of Interval inside
// the window, and their median. A window's own p99 counts the stalls that
// hit it — in a window of 700 ms about 140 requests lie above p99, and a
// 2 ms stall at 70 % load backs up about as many — so that on a machine
// that stalls once or twice a second it measures the stalls; the median
// of the intervals' p99s is the p99 of a typical interval, which a stall
// in one of them moves by one rank. It is a different quantity from the
// window's p99 and is named apart (Result.Intervals; the window's stays
// Result.Latency).
type IntervalTail struct {
	// IntervalNs is the intervals' length. Intervals counts those that
	// lie wholly in the window with at least MinIntervalResponses
	// responses, each one's p99 in P99Ns (ns, in order); P99MedianNs is
	// their median (0 with no interval).
	IntervalNs  int64   `json:"interval_ns"`
	Intervals   int     `json:"intervals"`
	P99Ns       []int64 `json:"p99_ns,omitempty"`
	P99MedianNs int64   `json:"p99_median_ns"`
}

// MinIntervalResponses is the fewest responses an interval needs for its
// p99 to count (IntervalTail): at 100 one response lies beyond it.
const MinIntervalResponses = 100

// tailSink collects the intervals' p99s for an IntervalTail: the
// collector (mergeIntervals) gives it every merged interval.
type tailSink struct {
	every int64
	p99s  []int64
}

// interval takes one merged interval, from start to end (ns since the
// run's base).
func (t *tailSink) interval(start, end int64, corrected *hdrCounts) {
	if end-start < t.every || corrected.count() < MinIntervalResponses {
		return // a partial last interval, or too few responses
	}
	t.p99s = append(t.p99s, corrected.percentile(99))
}

// result returns the intervals' tail.
func (t *tailSink) result() *IntervalTail {
	it := &IntervalTail{IntervalNs: t.every, Intervals: len(t.p99s), P99Ns: slices.Clone(t.p99s)}
	if n := len(t.p99s); n > 0 {
		s := slices.Sorted(slices.Values(t.p99s))
		it.P99MedianNs = s[n/2]
		if n%2 == 0 {
			it.P99MedianNs = (s[n/2-1] + s[n/2]) / 2
		}
	}
	return it
}

// percentile returns the value at percentile p of c as hdr.Histogram's
// ValueAtQuantile reports it: the highest value equivalent to the one
// at which the count reaches p% of the total (at least one value).
func (c *hdrCounts) percentile(p float64) int64 {
	if c.total == 0 {
		return 0
	}
	want := max(int64(p/100*float64(c.total)+0.5), 1)
	var n int64
	for i, k := range c.counts[:c.top+1] {
		n += k
		if n >= want {
			return c.highestEquivalent(c.valueAt(i))
		}
	}
	return c.max()
}

// DefaultTailInterval is the intervals' length of the tail estimate that
// the harness asks for (Config.TailInterval).
const DefaultTailInterval = 100 * time.Millisecond
