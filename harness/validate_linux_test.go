package harness

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/testenv"
)

// TestValidateChain runs the measurement chain end to end, briefly: a
// traced server, the traced load generator, the join and the
// decomposition. It asserts the mechanics, never a timing: every measured
// request is joined with the server's record of it, none is lost, and the
// parts of each experiment's mean sum to its mean response time.
func TestValidateChain(t *testing.T) {
	testenv.EndToEnd(t)
	if cur, err := cpuset.Current(); err != nil || len(cur) < 2 {
		t.Skip("validate needs 2 CPUs")
	}
	v, err := Validate(context.Background(), ValidateOptions{
		Binary: serverBinary, Work: []string{"exp"}, WorkNs: 20e3, Rhos: []float64{0.3},
		Warmup: 100 * time.Millisecond, Duration: 400 * time.Millisecond,
		FloorRate: 500, FloorDuration: 300 * time.Millisecond, Conns: 4, Limits: relaxed, Seed: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Floor.Requests == 0 || v.Floor.MeanNs <= 0 {
		t.Errorf("floor %+v: no idle request measured", v.Floor)
	}
	if v.ClosedService.Requests == 0 || v.ClosedService.MeanNs <= 0 {
		t.Errorf("closed-loop service %+v: no request measured (notes %v)", v.ClosedService, v.Notes)
	}
	if len(v.Experiments) != 1 {
		t.Fatalf("%d experiments, want 1", len(v.Experiments))
	}
	for _, e := range v.Experiments {
		t.Run(strings.ReplaceAll(e.Name, " ", "_"), func(t *testing.T) {
			d := e.Decomposition
			if d.Requests == 0 || d.Unmatched != 0 || e.ServerDropped != 0 {
				t.Fatalf("joined %d, unmatched %d, server dropped %d; reasons %v", d.Requests, d.Unmatched, e.ServerDropped, e.Reasons)
			}
			if sum := d.GenLag + d.Queue + d.Dispatch + d.Service + d.Return; math.Abs(sum-d.Total) > 1e-6*d.Total {
				t.Errorf("parts sum to %v, mean response time %v", sum, d.Total)
			}
			if e.Measured.MeanNs != d.Total || e.Service.MeanNs <= 0 {
				t.Errorf("measured %+v, service %+v", e.Measured, e.Service)
			}
			// Whether the effective queue is stable depends on the gap and
			// set-up this machine measured (a loaded CI host has pushed it
			// past 1 at a nominal ρ of 0.3); the mechanics do not: a stable
			// prediction has a mean, an unstable one is said in the verdict.
			p := e.Predicted
			if p.Stable != (p.Utilization < 1) || p.Stable && !(p.MeanNs > 0) {
				t.Errorf("predicted %+v: stable must mean utilization < 1 and a mean", p)
			}
			if !p.Stable && !strings.Contains(strings.Join(e.Reasons, "; "), "no steady state") {
				t.Errorf("predicted unstable (%+v) but the reasons %q do not say so", p, e.Reasons)
			}
			if g := e.Gap; e.Plain.Stable && math.Abs(g.Total-(e.Measured.MeanNs-e.Plain.MeanNs)) > 1e-6*e.Measured.MeanNs {
				t.Errorf("gap %v, want measured − plain %v", g.Total, e.Measured.MeanNs-e.Plain.MeanNs)
			}
			if e.Servers != 1 || e.Predicted.Model != "M/G/1 on S_eff (setup + gap)" || e.Plain.Model != "M/G/1 (P-K) + floor" {
				t.Errorf("servers %d, predicted %q, plain %q", e.Servers, e.Predicted.Model, e.Plain.Model)
			}
		})
	}
	if v.Verdict == "" || v.Servers != 1 || v.Model != "leaderfollowers" {
		t.Errorf("verdict %q, servers %d, model %q", v.Verdict, v.Servers, v.Model)
	}
}
