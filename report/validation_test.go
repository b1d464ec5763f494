package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concbench/plots"
	"concbench/results"
	"concbench/results/resultstest"
)

// chainExperiment returns a made-up experiment of the measurement chain:
// its queue's name, and numbers that say which column each lands in.
func chainExperiment(name string, c int, partitioned bool, rho float64) results.ChainExperiment {
	th := func(model string, mean, p99 float64) results.Theory {
		return results.Theory{Model: model, C: c, Stable: true, MeanNs: mean, P50Ns: mean * 0.8, P99Ns: p99}
	}
	return results.ChainExperiment{
		Name: name, Work: "exp", TargetRho: rho, Servers: c, Partitioned: partitioned, RatePerS: rho * float64(c) * 5000,
		Rho: rho, RhoEffective: rho * 1.1, Asked: results.ServiceStats{MeanNs: 200e3, SCV: 1},
		Service:            results.ServiceStats{Requests: 1000, MeanNs: 201e3, SCV: 0.98, P50Ns: 140e3, P99Ns: 920e3},
		EffectiveServiceNs: 221e3,
		Measured:           results.LatencyStats{MeanNs: 400e3, P50Ns: 300e3, P99Ns: 1800e3},
		Textbook:           th("M/M/1", 350e3, 1500e3), Predicted: th("M/G/1 on S_eff (setup + gap)", 390e3, 1750e3),
		Plain: th("M/G/1 (P-K) + floor", 330e3, 1400e3), Ratio: 400.0 / 390, RatioP50: 300 / 312.0, RatioP99: 1800 / 1750.0,
		PlainRatio: 400.0 / 330, PlainRatioP99: 1800 / 1400.0, Judged: true, Pass: true, Verdict: "validated",
		Decomposition: results.Decomposition{Requests: 1000, Queue: 100e3, Dispatch: 60e3, Service: 201e3, Return: 39e3, Total: 400e3,
			IdleShare: 0.5, IdleDispatch: 100e3, BusyDispatch: 20e3},
		Gap: results.Gap{Queue: 30e3, Dispatch: 20e3, Return: 20e3, Total: 70e3}, LoadValid: true,
	}
}

// TestValidationMarkdown checks the chain's Markdown (golden) for one
// thread and for four partitioned ones: the judged prediction on the
// effective service time with the plain model beside it, and how each is
// computed; and that WriteValidation writes its files.
func TestValidationMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    results.Validation
	}{
		{name: "one", v: results.Validation{Servers: 1, Model: "leaderfollowers", Experiments: []results.ChainExperiment{
			chainExperiment("M/M/1 ρ=0.3", 1, false, 0.3), chainExperiment("M/M/1 ρ=0.7", 1, false, 0.7)}}},
		{name: "four_partitioned", v: results.Validation{Servers: 4, Partitioned: true, Model: "partitioned", Experiments: []results.ChainExperiment{
			chainExperiment("4×M/M/1 ρ=0.5", 4, true, 0.5)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.v
			v.Tolerance, v.MaxJudgedRho = 0.1, 0.7
			v.Floor = results.ChainFloor{RatePerS: 300, Requests: 1200, MeanNs: 90e3, InboundNs: 70e3, ReturnNs: 20e3, P50Ns: 85e3, P99Ns: 200e3}
			v.Judge()
			md := ValidationMarkdown(&v, "##")
			resultstest.GoldenFile(t, "golden/chain_"+tc.name+".md", []byte(md))
			dir := t.TempDir()
			if _, err := WriteValidation(dir, &v, []string{"svg"}); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{ValidationJSON, ValidationMD, filepath.Join(FiguresDir, plots.ChainFigure+".svg"), filepath.Join(FiguresDir, plots.ChainFigure+".csv")} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			csv, _ := os.ReadFile(filepath.Join(dir, FiguresDir, plots.ChainFigure+".csv"))
			for _, series := range []string{"measured", "on the effective service time (judged)", "plain: measured service + floor", "textbook"} {
				if !strings.Contains(string(csv), series) {
					t.Errorf("the figure's data lacks the series %q", series)
				}
			}
		})
	}
}
