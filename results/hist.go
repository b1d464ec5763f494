package results

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"concbench/loadgen"
)

// Merged is a latency histogram merged across a group's repetitions:
// percentiles over all the repetitions' requests, never averaged
// percentiles.
type Merged struct {
	// Hist is the merged histogram (nanoseconds); nil if no point had one.
	Hist *hdr.Histogram
	// Points counts the repetitions merged.
	Points int
	// Excluded counts the group's invalid repetitions (Point.Invalid),
	// never merged: their verdict is that they cannot be trusted.
	Excluded int
	// Skipped counts the other points not merged (not measured, no
	// successful response, or a histogram that did not decode); Problems
	// says why for those that had data.
	Skipped  int
	Problems []string
	// Dropped counts values the merge could not take (outside the merged
	// histogram's range); OutOfRange sums the points' own out-of-range
	// counts (values clamped when recorded). Both are reported, never
	// hidden.
	Dropped    int64
	OutOfRange int64
}

// MergeLatency merges the corrected (or, with uncorrected, the
// uncorrected) latency histograms of g's valid points; invalid ones are
// counted (Merged.Excluded), never merged. The merged histogram spans the
// widest range and precision of the points'.
func (g *Group) MergeLatency(uncorrected bool) Merged {
	var m Merged
	type decoded struct {
		h *hdr.Histogram
		s *loadgen.Summary
	}
	var hs []decoded
	var lowest, highest int64
	digits := 0
	for _, p := range g.Points {
		if p.Invalid() {
			m.Excluded++
			continue
		}
		l, ok := load(p)
		if !ok {
			m.Skipped++
			continue
		}
		s := &l.Latency
		if uncorrected {
			s = &l.Uncorrected
		}
		if s.Count == 0 || s.Histogram == "" {
			m.Skipped++
			continue
		}
		h, err := loadgen.DecodeHistogram(s.Histogram)
		if err != nil {
			m.Skipped++
			m.Problems = append(m.Problems, fmt.Sprintf("rep %d: histogram does not decode: %v", p.Repetition, err))
			continue
		}
		if len(hs) == 0 || h.LowestTrackableValue() < lowest {
			lowest = h.LowestTrackableValue()
		}
		highest = max(highest, h.HighestTrackableValue())
		digits = max(digits, int(h.SignificantFigures()))
		hs = append(hs, decoded{h, s})
	}
	if len(hs) == 0 {
		return m
	}
	m.Hist = hdr.New(lowest, highest, digits)
	for _, d := range hs {
		m.Dropped += m.Hist.Merge(d.h)
		m.OutOfRange += d.s.OutOfRange
		m.Points++
	}
	return m
}
