package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/results"
)

// TestRunSLOSearch runs a real search against a fast model with relaxed
// limits, and a resume that re-measures a deleted probe and its result.
// It asserts the structure (probes stored, a result per repetition within
// the capacity), not the rates.
func TestRunSLOSearch(t *testing.T) {
	testenv.EndToEnd(t)
	exp := shortRun([]Config{{Name: "netpoll", Model: "netpoll"}}, Workload{Workload: connsWorkload(4), SLO: &SLO{Bound: Duration(5 * time.Millisecond)}})
	exp.Repetitions, exp.SLOProbes = 2, 2
	exp.SLOWarmup, exp.SLODuration = Duration(100*time.Millisecond), Duration(100*time.Millisecond)
	var progress bytes.Buffer
	dir, sum := runTest(t, exp, Options{Progress: &progress})
	maxProbes := (&sloSearch{probes: exp.SLOProbes}).maxProbes()
	if sum.Failed != 0 || sum.Unavailable != 0 || sum.Points > 2*(1+maxProbes+1) {
		t.Fatalf("summary %s: want at most %d points, none failed", sum, 2*(1+maxProbes+1))
	}
	check := func(t *testing.T) {
		t.Helper()
		_, pts, _ := readPoints(t, dir)
		for rep := range 2 {
			var capPt, res *results.Point
			probes := 0
			for i := range pts {
				p := &pts[i]
				if p.Repetition != rep {
					continue
				}
				switch p.Kind {
				case results.KindCapacity:
					capPt = p
				case results.KindSLO:
					res = p
				case results.KindProbe:
					probes++
					if p.Load == nil || p.OfferedRatePerS <= 0 || p.ServerInfo.PID == 0 {
						t.Errorf("rep %d probe %d: not measured (%+v)", rep, p.Probe, p.Status)
					}
				}
			}
			if capPt == nil || res == nil || res.SLO == nil {
				t.Fatalf("rep %d: capacity %v, SLO result %v", rep, capPt != nil, res != nil)
			}
			r := res.SLO
			if probes == 0 || probes > maxProbes || r.Probes != probes {
				t.Errorf("rep %d: %d probe points, the result counts %d (at most %d)", rep, probes, r.Probes, maxProbes)
			}
			// The published bound, or one relative to the machine's floor
			// (results.Objective): never less.
			if r.Percentile != 99 || r.Bound() < 5*time.Millisecond || r.CapacityPerS <= 0 {
				t.Errorf("rep %d: result %+v", rep, r)
			}
			if r.RatePerS > r.CapacityPerS || r.LoPerS > r.HiPerS || r.HiPerS > r.CapacityPerS {
				t.Errorf("rep %d: result %+v not within its capacity", rep, r)
			}
			if r.RatePerS == 0 && r.Reason == "" && r.Invalid == "" {
				t.Errorf("rep %d: a result of 0 without a reason", rep)
			}
		}
	}
	check(t)
	for _, want := range []string{"slo probe 0 at", "slo (p99 ≤ ", "objective of : p99 ≤ "} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress has no %q:\n%s", want, progress.String())
		}
	}

	t.Run("resume", func(t *testing.T) {
		for _, p := range []*results.Point{
			{Config: results.ModelConfig{Name: "netpoll"}, Kind: results.KindSLO, Repetition: 1},
			{Config: results.ModelConfig{Name: "netpoll"}, Kind: results.KindProbe, Repetition: 1, Probe: 1},
		} {
			os.Remove(filepath.Join(dir, results.PointsDir, results.PointFileName(p))) // the probe may not exist: the search may have stopped early
		}
		sum, err := Resume(context.Background(), dir, Options{})
		if err != nil {
			t.Fatalf("Resume: %v", err)
		}
		if sum.Skipped < 4 || sum.Failed != 0 {
			t.Fatalf("summary %s: want the capacity, open and first probe points kept", sum)
		}
		check(t)
	})
}
