package results

import (
	"slices"

	"concbench/loadgen"
)

// Fault says whose doing it is that a point cannot be used: the server's,
// the load generator's or the host's. The CI gate counts the server's as failures
// and leaves the generator's out of every sample; the latency-objective
// search fails a probe for the server's and spoils the repetition's
// result for the generator's.
type Fault string

// The faults.
const (
	// NoFault: the point was measured and its verdict is valid.
	NoFault Fault = ""
	// ServerFault: the server failed the point: it died (the point
	// failed), a response failed verification, or the verdict is invalid
	// for what the server did (over capacity, the rate missed, requests
	// never sent, no response) while the generator had its CPU.
	ServerFault Fault = "server"
	// GeneratorFault: the load generator's verdict on itself is invalid
	// (it could not keep its schedule, its CPU was taken, …) and nothing
	// in the point is the server's alone: the point says nothing about
	// the server. A point whose generator waited for its CPU is the
	// generator's even when the rate was also missed (the generator
	// could not send or read on time).
	GeneratorFault Fault = "generator"
	// HostFault: the verdict is invalid for what the server did (a rate
	// missed, a backlog), but the hypervisor took over MaxServerSteal of
	// the server's CPUs in the window: the shortfall may be the host's,
	// so the point says nothing about the server. It is left out as the
	// generator's is, on both sides of a comparison alike.
	HostFault Fault = "host"
	// Unmeasured: the configuration was unavailable.
	Unmeasured Fault = "unmeasured"
)

// MaxServerSteal is the largest share of the server CPUs' time the
// hypervisor may take during a window before a point the server seems to
// have failed is the host's (HostFault): the load generator's own limit
// on its CPUs (loadgen.DefaultLimits.MaxSteal), applied to the server's.
var MaxServerSteal = loadgen.DefaultLimits.MaxSteal

// ServerChecks are the verdict checks that fail for what the server did.
var ServerChecks = []loadgen.Check{loadgen.CheckOverCapacity, loadgen.CheckRate, loadgen.CheckUnsent,
	loadgen.CheckErrors, loadgen.CheckNoResponses, loadgen.CheckWarmup}

// Fault classifies the point.
func (p *Point) Fault() Fault {
	switch {
	case p.Status == StatusUnavailable:
		return Unmeasured
	case p.FailedBy == FailedNoRate:
		// Nothing was offered: the capacity it would take its rate from
		// was never validly measured (the generator's verdicts).
		return GeneratorFault
	case !p.Measured() || p.Load == nil:
		return ServerFault // the server died, or never answered
	}
	if kind, _ := p.FailedResponses(); kind != "" {
		return ServerFault // a response failed verification, or the transport failed
	}
	if p.Load.Valid {
		return NoFault
	}
	// A generator whose threads waited for a CPU (or whose CPU was
	// stolen) could neither send on schedule nor read responses on time,
	// so a missed rate or a growing backlog in the same window is no
	// evidence against the server: the point is the generator's. Seen in
	// a fresh-clone .ci/run while other work compiled on the machine:
	// every open point invalid for "rate" or "over-capacity" also had
	// "generator-cpu", and the gate judged the head's ones "server
	// failures", a regression, of a tree identical to the base
	// (docs/findings.md). The
	// server is pinned to other CPUs, so a head that slows down does not
	// take the generator's CPU; what it does (a rate missed on an idle
	// generator CPU) is still a server failure.
	// So is a point at the generator's measured ceiling (the harness's
	// CheckCeiling): its rate is the generator's, not the server's.
	if slices.Contains(p.Load.Checks, loadgen.CheckCPU) || slices.Contains(p.Load.Checks, loadgen.CheckCeiling) {
		return GeneratorFault
	}
	for _, c := range p.Load.Checks {
		if slices.Contains(ServerChecks, c) {
			if p.Server.StealFraction > MaxServerSteal {
				// Seen in a fresh-clone .ci/run: a rate missed by 1.2 %
				// while the host stalled both the head and the base,
				// judged the head's regression (docs/findings.md).
				return HostFault
			}
			return ServerFault
		}
	}
	return GeneratorFault
}

// FailedResponses returns a kind of failed response the measured point
// counted (not an expected outcome, nor the interruption at the end of
// a window) with its count, or "" if there is none.
func (p *Point) FailedResponses() (string, int64) {
	if p.Load == nil {
		return "", 0
	}
	for k, n := range p.Load.Errors {
		if n > 0 && k != "interrupted" && !loadgen.ExpectedOutcome(k) {
			return k, n
		}
	}
	return "", 0
}
