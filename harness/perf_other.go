//go:build !linux

package harness

import (
	"errors"

	"concbench/results"
)

// perfSet has no counters where perf_event_open does not exist.
type perfSet struct{}

func openPerf(...int) (*perfSet, string) { return nil, "perf: perf_event_open is Linux-only" }

func (*perfSet) read() (results.PerfCounters, error) {
	return results.PerfCounters{}, errors.New("perf: perf_event_open is Linux-only")
}

func (*perfSet) close() {}
