package results

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestPollaczekKhinchine checks the P-K mean against the textbook M/M/1
// and M/D/1 means, and the setup-time mean against its special cases.
func TestPollaczekKhinchine(t *testing.T) {
	const s = 100e3 // ns
	for _, tc := range []struct {
		name  string
		rate  float64
		svc   Moments
		setup Moments
		want  float64
		ok    bool
	}{
		// M/M/1: 1/(μ−λ) = S/(1−ρ).
		{name: "M/M/1 rho=0.5", rate: 5000, svc: Moments{Mean: s, Second: 2 * s * s}, want: s / 0.5, ok: true},
		{name: "M/M/1 rho=0.7", rate: 7000, svc: Moments{Mean: s, Second: 2 * s * s}, want: s / 0.3, ok: true},
		// M/D/1: S + ρS/(2(1−ρ)).
		{name: "M/D/1 rho=0.5", rate: 5000, svc: Moments{Mean: s, Second: s * s}, want: s * 1.5, ok: true},
		{name: "M/D/1 rho=0.3", rate: 3000, svc: Moments{Mean: s, Second: s * s}, want: s * (1 + 0.3/1.4), ok: true},
		// At λ → 0 a setup U is paid by every request: S + U.
		{name: "setup at no load", rate: 1e-9, svc: Moments{Mean: s, Second: s * s}, setup: Moments{Mean: 20e3, Second: 400e6}, want: s + 20e3, ok: true},
		{name: "unstable", rate: 10000, svc: Moments{Mean: s, Second: s * s}},
		{name: "no service", rate: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SetupMean(tc.rate, tc.svc, tc.setup)
			if ok != tc.ok || !near(got, tc.want, 1e-6) {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestMD1 checks Erlang's M/D/1 distribution: at ρ = 0.5 the probability
// of not waiting is 1−ρ = 0.5 (so p50 is the service time itself), and the
// percentiles agree with a long simulation of the same queue.
func TestMD1(t *testing.T) {
	const s = 100e3
	for _, rho := range []float64{0.3, 0.5, 0.7} {
		t.Run("rho="+strconv.FormatFloat(rho, 'g', -1, 64), func(t *testing.T) {
			th := MD1(s, rho*1e9/s)
			if !th.Stable {
				t.Fatal("not stable")
			}
			if rho <= 0.5 && th.P50Ns != s {
				t.Errorf("p50 %v, want the service time %v (P(no wait) = %v)", th.P50Ns, s, 1-rho)
			}
			sim := SimulateQueue(Simulation{C: 1, RatePerS: rho * 1e9 / s, Service: []float64{s}, Requests: 200_000, Seed: 1})
			// Tolerances: the simulation's sampling error at 200 000
			// requests (a 3-million-request run agrees to 0.3%).
			for _, c := range []struct {
				name           string
				got, want, tol float64
			}{{"mean", sim.MeanNs, th.MeanNs, 0.03}, {"p50", sim.P50Ns, th.P50Ns, 0.03}, {"p99", sim.P99Ns, th.P99Ns, 0.06}} {
				if !near(c.got, c.want, c.tol) {
					t.Errorf("%s: simulated %v, Erlang %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestSimulateMM1 checks the simulation, with service times resampled from
// exponential samples, against the exact M/M/1 (MMc) and the P-K mean with
// a setup time; deterministic (fixed seeds).
func TestSimulateMM1(t *testing.T) {
	const s = 100e3
	rng := rand.New(rand.NewPCG(7, 7))
	svc := make([]float64, 100_000)
	for i := range svc {
		svc[i] = rng.ExpFloat64() * s
	}
	m := MomentsOf(svc)
	for _, tc := range []struct {
		name  string
		rho   float64
		setup []float64
	}{
		{name: "rho=0.5", rho: 0.5},
		{name: "rho=0.7", rho: 0.7},
		{name: "rho=0.5 setup=30us", rho: 0.5, setup: []float64{30e3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rate := tc.rho * 1e9 / m.Mean
			sim := SimulateQueue(Simulation{C: 1, RatePerS: rate, Service: svc, Setup: tc.setup, Requests: 200_000, Seed: 3})
			want, _ := SetupMean(rate, m, MomentsOf(tc.setup))
			if !near(sim.MeanNs, want, 0.04) {
				t.Errorf("mean: simulated %v, formula %v", sim.MeanNs, want)
			}
			if tc.setup == nil {
				mm := MMc(1, m.Mean, rate)
				if !near(sim.P50Ns, mm.P50Ns, 0.04) || !near(sim.P99Ns, mm.P99Ns, 0.05) {
					t.Errorf("p50/p99: simulated %v/%v, M/M/1 %v/%v", sim.P50Ns, sim.P99Ns, mm.P50Ns, mm.P99Ns)
				}
			}
		})
	}
	if m := MomentsOf(svc); math.Abs(m.SCV()-1) > 0.05 {
		t.Errorf("exponential samples' SCV %v, want ≈ 1", m.SCV())
	}
}
