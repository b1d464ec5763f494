package loadgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ClassLatency is the corrected latency of one priority class: the
// verified successful measured requests whose priority (wire.Request.Priority)
// is in MinPriority..MaxPriority. The classes' counts add up to
// Result.Latency's.
type ClassLatency struct {
	MinPriority int     `json:"min_priority"`
	MaxPriority int     `json:"max_priority"`
	Latency     Summary `json:"latency"`
}

// Name returns the class's priority range, e.g. "prio 128-255".
func (c ClassLatency) Name() string {
	return "prio " + strconv.Itoa(c.MinPriority) + "-" + strconv.Itoa(c.MaxPriority)
}

// ParsePriorityClasses parses the class boundaries of
// Config.PriorityClasses: increasing priorities 1..255, comma-separated,
// e.g. "128" (two classes, 0-127 and 128-255). An empty string gives nil.
func ParsePriorityClasses(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("loadgen: priority class boundary %q is not an integer (1..255)", f)
		}
		out = append(out, n)
	}
	return out, validateClasses(out)
}

// validateClasses checks Config.PriorityClasses.
func validateClasses(b []int) error {
	for i, v := range b {
		if v < 1 || v > 255 {
			return fmt.Errorf("loadgen: priority class boundary %d out of range (accepted: 1..255)", v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("loadgen: priority class boundaries must increase: %d after %d", v, b[i-1])
		}
	}
	return nil
}

// classTable maps each priority to its class index, for boundaries b.
func classTable(b []int) *[256]uint8 {
	var t [256]uint8
	c := 0
	for p := range t {
		for c < len(b) && p >= b[c] {
			c++
		}
		t[p] = uint8(c)
	}
	return &t
}

// classRecorders are a worker's per-class corrected latency histograms;
// nil without Config.PriorityClasses. record does not allocate.
type classRecorders struct {
	of   *[256]uint8
	recs []*recorder
}

func newClassRecorders(cfg *Config) *classRecorders {
	if len(cfg.PriorityClasses) == 0 {
		return nil
	}
	c := &classRecorders{of: classTable(cfg.PriorityClasses)}
	for range len(cfg.PriorityClasses) + 1 {
		c.recs = append(c.recs, newRecorder(cfg))
	}
	return c
}

func (c *classRecorders) record(prio uint8, v int64) {
	if c != nil {
		c.recs[c.of[prio]].record(v)
	}
}

// summarizeClasses merges every worker's class histograms (all nil, or
// all with the boundaries b) into the result's classes.
func summarizeClasses(cfg *Config, ws []*classRecorders) []ClassLatency {
	b := cfg.PriorityClasses
	if len(b) == 0 {
		return nil
	}
	out := make([]ClassLatency, len(b)+1)
	for i := range out {
		m := newRecorder(cfg)
		for _, w := range ws {
			m.merge(w.recs[i])
		}
		lo, hi := 0, 255
		if i > 0 {
			lo = b[i-1]
		}
		if i < len(b) {
			hi = b[i] - 1
		}
		out[i] = ClassLatency{MinPriority: lo, MaxPriority: hi, Latency: Summarize(m.h, m.over+m.under)}
	}
	return out
}

// primePriority is the priority of the priming requests: the configured
// one when it is fixed, else 0. It draws nothing, so the mix's random
// stream is the same with or without it.
func primePriority(cfg *Config) uint8 {
	if cfg.Priority.kind() != DistFixed {
		return 0
	}
	return uint8(min(max(math.Round(cfg.Priority.A), 0), 255))
}
