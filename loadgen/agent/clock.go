package agent

import (
	"errors"
	"fmt"
	"time"
)

// Sample is one NTP-style exchange over the control connection, in Unix
// nanoseconds: T1 when the coordinator sent the ping, T2 when the agent
// received it, T3 when the agent replied, T4 when the coordinator
// received the reply (T1 and T4 by the coordinator's clock, T2 and T3 by
// the agent's).
type Sample struct{ T1, T2, T3, T4 int64 }

// RTT is the sample's round trip without the agent's own time: (T4−T1) −
// (T3−T2).
func (s Sample) RTT() int64 { return (s.T4 - s.T1) - (s.T3 - s.T2) }

// Offset is the sample's estimate of the agent's clock minus the
// coordinator's: ((T2−T1) + (T3−T4)) / 2. The true offset lies within
// RTT/2 of it whatever the paths' asymmetry.
func (s Sample) Offset() int64 { return ((s.T2 - s.T1) + (s.T3 - s.T4)) / 2 }

// Offset is an agent's clock offset as the coordinator estimated it.
type Offset struct {
	// OffsetNs is the agent's clock minus the coordinator's, from the
	// sample with the shortest round trip (NTP's choice: the least
	// queueing, the tightest bound).
	OffsetNs int64 `json:"offset_ns"`
	// UncertaintyNs bounds the error of OffsetNs: half that sample's
	// round trip.
	UncertaintyNs int64 `json:"uncertainty_ns"`
	// RTTNs is that round trip; Samples how many exchanges were made.
	RTTNs   int64 `json:"rtt_ns"`
	Samples int   `json:"samples"`
}

// Estimate returns the offset from the samples with the shortest round
// trip. Samples with a negative round trip (the agent's stated time
// inside the exchange exceeds the exchange itself: a clock stepped
// meanwhile) are left out; none left is an error.
func Estimate(samples []Sample) (Offset, error) {
	best := -1
	for i, s := range samples {
		if s.RTT() < 0 || s.T3 < s.T2 {
			continue
		}
		if best < 0 || s.RTT() < samples[best].RTT() {
			best = i
		}
	}
	if best < 0 {
		return Offset{}, errors.New("no usable clock sample (every exchange had a negative round trip: a clock stepped during it?)")
	}
	s := samples[best]
	return Offset{OffsetNs: s.Offset(), UncertaintyNs: (s.RTT() + 1) / 2, RTTNs: s.RTT(), Samples: len(samples)}, nil
}

// check returns an error if o is beyond the bounds: an uncertainty over
// maxUncertainty, or an offset whose size exceeds maxOffset.
func (o Offset) check(maxOffset, maxUncertainty time.Duration) error {
	off := o.OffsetNs
	if off < 0 {
		off = -off
	}
	switch {
	case o.UncertaintyNs > int64(maxUncertainty):
		return fmt.Errorf("clock offset %v ± %v: the uncertainty exceeds the bound %v (round trip %v at best over %d samples: a slow or congested control path)",
			time.Duration(o.OffsetNs), time.Duration(o.UncertaintyNs), maxUncertainty, time.Duration(o.RTTNs), o.Samples)
	case off > int64(maxOffset):
		return fmt.Errorf("clock offset %v ± %v exceeds the bound %v: the hosts' clocks disagree (is NTP or chrony running?)",
			time.Duration(o.OffsetNs), time.Duration(o.UncertaintyNs), maxOffset)
	}
	return nil
}
