package gate

import (
	"testing"

	"concbench/loadgen"
	"concbench/results"
)

func TestFaultOf(t *testing.T) {
	measured := func(valid bool, errs map[string]int64, checks ...loadgen.Check) *results.Point {
		return &results.Point{Status: results.StatusOK,
			Load: &loadgen.Result{Valid: valid, Checks: checks, Errors: errs}}
	}
	stolen := func(p *results.Point, fraction float64) *results.Point {
		p.Server.StealFraction = fraction
		return p
	}
	cases := []struct {
		name string
		p    *results.Point
		want Fault
	}{
		{name: "valid", p: measured(true, nil), want: NoFault},
		{name: "server died", p: &results.Point{Status: results.StatusFailed}, want: ServerFault},
		{name: "unavailable", p: &results.Point{Status: results.StatusUnavailable}, want: Unmeasured},
		{name: "no rate", p: &results.Point{Status: results.StatusFailed, FailedBy: results.FailedNoRate}, want: GeneratorFault},
		{name: "over capacity", p: measured(false, nil, loadgen.CheckOverCapacity, loadgen.CheckRate), want: ServerFault},
		{name: "generator lag", p: measured(false, nil, loadgen.CheckBias), want: GeneratorFault},
		{name: "generator lag and rate", p: measured(false, nil, loadgen.CheckBias, loadgen.CheckRate), want: ServerFault},
		// The fresh-clone .ci/run case: the generator waited for its CPU,
		// so it could not keep the rate either.
		{name: "generator cpu and rate", p: measured(false, nil, loadgen.CheckCPU, loadgen.CheckRate), want: GeneratorFault},
		{name: "generator cpu and over capacity",
			p: measured(false, nil, loadgen.CheckOverCapacity, loadgen.CheckCPU, loadgen.CheckRate, loadgen.CheckUnsent), want: GeneratorFault},
		// The server's CPUs stolen from beyond the limit: a rate missed
		// is the host's; at the limit it is still the server's; a
		// verification failure stays the server's whatever the host did.
		{name: "server cpus stolen and rate", p: stolen(measured(false, nil, loadgen.CheckRate), 0.08), want: HostFault},
		{name: "server cpus stolen at the limit", p: stolen(measured(false, nil, loadgen.CheckRate), results.MaxServerSteal), want: ServerFault},
		{name: "server cpus stolen, verification failure",
			p: stolen(measured(false, map[string]int64{"verify_body": 1}, loadgen.CheckErrors), 0.5), want: ServerFault},
		{name: "server cpus stolen, valid", p: stolen(measured(true, nil), 0.5), want: NoFault},
		// A response that failed verification is the server's whatever
		// the generator's health.
		{name: "verification failure", p: measured(false, map[string]int64{"verify_body": 1}, loadgen.CheckCPU, loadgen.CheckErrors),
			want: ServerFault},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := faultOf(c.p); got != c.want {
				t.Errorf("faultOf = %q, want %q", got, c.want)
			}
		})
	}
}
