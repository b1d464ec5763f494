package loadgen

import (
	"math"
	"slices"
)

// linHist is a histogram of non-negative nanosecond durations in linear
// buckets of linWidth up to linBuckets·linWidth, with the values above
// counted in the last bucket and the largest kept exactly. The worker
// records its timed waits' lateness and its idle iterations in it: fixed
// memory, no allocation, exact enough (0.5 µs) for a spin margin or a
// stall's length.
type linHist struct {
	counts [linBuckets]int64
	n      int64
	sum    int64
	max    int64
}

const (
	linWidth   = 500 // ns
	linBuckets = 4000
)

// add records v (negative values count as 0).
func (h *linHist) add(v int64) {
	v = max(v, 0)
	i := min(v/linWidth, linBuckets-1)
	h.counts[i]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

// merge adds o into h.
func (h *linHist) merge(o *linHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the upper edge of the bucket holding the q-quantile (q
// in [0, 1]), capped by the largest value; 0 when empty.
func (h *linHist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var cum int64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			return min(int64(i+1)*linWidth, h.max)
		}
	}
	return h.max
}

// excess returns the time by which the recorded values above threshold
// exceed base in total: Σ (v − base) over v > threshold, each value taken
// at its bucket's middle (the largest exactly).
func (h *linHist) excess(threshold, base int64) int64 {
	var t int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		mid := int64(i)*linWidth + linWidth/2
		if i == linBuckets-1 || mid > h.max {
			mid = h.max // the overflow bucket, or the largest value's own
		}
		if mid > threshold {
			t += c * (mid - base)
		}
	}
	return t
}

// stallFactor: an idle iteration longer than stallFactor times the
// median one is a stall of the machine (the loop did nothing different).
const stallFactor = 4

// Lateness summarizes a linHist of durations.
type Lateness struct {
	Count  int64 `json:"count"`
	P50Ns  int64 `json:"p50_ns"`
	P99Ns  int64 `json:"p99_ns"`
	P999Ns int64 `json:"p99_9_ns"`
	MaxNs  int64 `json:"max_ns"`
}

func (h *linHist) summary() Lateness {
	return Lateness{Count: h.n, P50Ns: h.quantile(0.5), P99Ns: h.quantile(0.99), P999Ns: h.quantile(0.999), MaxNs: h.max}
}

// spinFor returns the spin margin for timed waits whose lateness is in h:
// 1.5 times its 99th percentile, so that fewer than one timed wait in a
// hundred (less, with the margin) wakes after the send it was for.
func spinFor(h *linHist) int64 { return h.quantile(0.99) * 3 / 2 }

// sendSample keeps, for the send-process check, the intended and actual
// send times of runs of consecutive arrivals: sampleBlocks blocks spread
// evenly over the window, each recording up to sampleBlockLen
// consecutive arrivals from its start, so that the sample covers the
// whole window and its gaps are between neighbours. An arrival that is not
// eligible (held back by the in-flight bound, or resent: the server's
// doing, not the generator's) breaks the run instead of being recorded.
// One worker writes it; its arrays are allocated once.
type sendSample struct {
	on        bool
	meanGap   float64 // the worker's mean gap between arrivals, ns
	start     int64   // the window's start
	span      int64   // the window's length
	block     int     // the block being recorded, or the next one
	inBlock   int     // arrivals recorded in the current block
	intended  []int64
	sent      []int64 // -1: a break before the next record
	blockOpen bool
}

const (
	sampleBlocks   = 8
	sampleBlockLen = 256
)

// init prepares the sample for a window [start, end) of a worker whose
// arrivals are meanGap ns apart on average.
func (s *sendSample) init(start, end int64, meanGap float64) {
	*s = sendSample{on: true, meanGap: meanGap, start: start, span: end - start,
		intended: make([]int64, 0, sampleBlocks*(sampleBlockLen+1)),
		sent:     make([]int64, 0, sampleBlocks*(sampleBlockLen+1))}
}

// add records an arrival intended at t and sent at sent; eligible is false
// for an arrival the server held back.
func (s *sendSample) add(t, sent int64, eligible bool) {
	if s.block >= sampleBlocks || t < s.start {
		return
	}
	if !s.blockOpen {
		if t < s.start+s.span*int64(s.block)/sampleBlocks {
			return
		}
		s.blockOpen, s.inBlock = true, 0
		s.mark()
	}
	if !eligible {
		s.mark()
		return
	}
	s.intended = append(s.intended, t)
	s.sent = append(s.sent, sent)
	s.inBlock++
	if s.inBlock == sampleBlockLen {
		s.blockOpen = false
		s.block++
	}
}

// mark ends the current run of consecutive arrivals.
func (s *sendSample) mark() {
	if n := len(s.sent); n > 0 && s.sent[n-1] != -1 {
		s.intended = append(s.intended, -1)
		s.sent = append(s.sent, -1)
	}
}

// gaps appends the sample's gaps between consecutive arrivals, in units
// of the mean gap, to actual (sent times) and planned (intended times),
// and the lag-1 pairs of consecutive actual and planned gaps to the four
// pair slices. Arrivals of one run are ordered by intended time (a
// worker may flush connections of one iteration out of schedule order);
// an actual gap below 0 counts as 0.
func (s *sendSample) gaps(actual, planned, a1, a2, p1, p2 *[]float64) {
	if !s.on || s.meanGap <= 0 {
		return
	}
	for i := 0; i < len(s.sent); {
		j := i
		for j < len(s.sent) && s.sent[j] != -1 {
			j++
		}
		run := make([]int, 0, j-i)
		for k := i; k < j; k++ {
			run = append(run, k)
		}
		slices.SortStableFunc(run, func(a, b int) int {
			switch {
			case s.intended[a] < s.intended[b]:
				return -1
			case s.intended[a] > s.intended[b]:
				return 1
			}
			return 0
		})
		var prevA, prevP float64
		for k := 1; k < len(run); k++ {
			a := max(float64(s.sent[run[k]]-s.sent[run[k-1]]), 0) / s.meanGap
			p := float64(s.intended[run[k]]-s.intended[run[k-1]]) / s.meanGap
			*actual = append(*actual, a)
			*planned = append(*planned, p)
			if k > 1 {
				*a1, *a2 = append(*a1, prevA), append(*a2, a)
				*p1, *p2 = append(*p1, prevP), append(*p2, p)
			}
			prevA, prevP = a, p
		}
		i = j + 1
	}
}
