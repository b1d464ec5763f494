//go:build !linux

package harness

import (
	"errors"

	"concbench/results"
)

// mechSet has no counters where perf_event_open does not exist.
type mechSet struct{}

// mechSample is the counters' sums at one edge of the window.
type mechSample struct{}

func openMechanisms([]int, string) (*mechSet, string) {
	return nil, "perf_event_open is Linux-only"
}

func (*mechSet) read(bool) (mechSample, error) {
	return mechSample{}, errors.New("perf: perf_event_open is Linux-only")
}

func (*mechSet) counts(mechSample, mechSample) *results.Mechanisms { return nil }

func (*mechSet) close() {}

// MountTracefs says that there is no tracefs where there is no Linux.
func MountTracefs() string { return "tracefs is Linux-only: the mechanisms are not counted" }
