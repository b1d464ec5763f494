//go:build !linux

package ktrace

import (
	"errors"

	"concbench/results"
)

// MechSet has no counters where perf_event_open does not exist.
type MechSet struct{}

// MechSample is the counters' sums at one edge of the window.
type MechSample struct{}

func OpenMechanisms([]int, string) (*MechSet, string) {
	return nil, "perf_event_open is Linux-only"
}

func (*MechSet) Read(bool) (MechSample, error) {
	return MechSample{}, errors.New("perf: perf_event_open is Linux-only")
}

func (*MechSet) Counts(MechSample, MechSample) *results.Mechanisms { return nil }

func (*MechSet) Close() {}

// MountTracefs says that there is no tracefs where there is no Linux.
func MountTracefs() string { return "tracefs is Linux-only: the mechanisms are not counted" }

// IPIEvents is empty: nothing is counted.
func (*MechSet) IPIEvents() string { return "" }

// IPICPUs is empty: nothing is counted.
func (*MechSet) IPICPUs() string { return "" }
