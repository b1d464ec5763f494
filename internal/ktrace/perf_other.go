//go:build !linux

package ktrace

import (
	"errors"

	"concbench/results"
)

// PerfSet has no counters where perf_event_open does not exist.
type PerfSet struct{}

func OpenPerf(...int) (*PerfSet, string) { return nil, "perf: perf_event_open is Linux-only" }

func (*PerfSet) Read() (results.PerfCounters, error) {
	return results.PerfCounters{}, errors.New("perf: perf_event_open is Linux-only")
}

func (*PerfSet) Close() {}
