package loadgen

import (
	"math"
	"slices"
	"testing"
	"time"
)

// arrival is one scheduled batch: its intended time (ns after the start)
// and the connection it went to.
type arrival struct {
	t    int64
	conn int // global connection index
}

// schedule returns the first n batches of every worker for cfg (defaults
// applied), each worker assigning its batches round-robin to its
// connections (worker w owns global connections w, w+W, …, as Run deals
// them), assuming no connection is ever at its bound. It runs the same
// arrivals and pacer the workers run, without the clock.
func schedule(t *testing.T, cfg Config, n int) [][]arrival {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.WithDefaults()
	out := make([][]arrival, cfg.Workers)
	for w := range cfg.Workers {
		mine := 0
		for c := w; c < cfg.Conns; c += cfg.Workers {
			mine++
		}
		arr := newArrivals(&cfg, w, cfg.Workers)
		var p pacer
		always := func(int) bool { return true }
		for range n {
			i := p.pick(mine, always)
			out[w] = append(out[w], arrival{t: arr.next, conn: w + i*cfg.Workers})
			arr.advance()
		}
	}
	return out
}

// checkEveryConn checks that every conns consecutive arrivals of all go
// to every one of the conns connections: the split of a rate below the
// connection count gives no connection a burst and starves none.
func checkEveryConn(t *testing.T, all []arrival, conns int) {
	t.Helper()
	for k := 0; k+conns <= len(all); k += conns {
		got := map[int]bool{}
		for _, a := range all[k : k+conns] {
			got[a.conn] = true
		}
		if len(got) != conns {
			t.Fatalf("arrivals %d..%d cover %d connections, want all %d", k, k+conns-1, len(got), conns)
		}
	}
}

// merged returns every worker's batches in time order.
func merged(ws [][]arrival) []arrival {
	var all []arrival
	for _, w := range ws {
		all = append(all, w...)
	}
	slices.SortStableFunc(all, func(a, b arrival) int { return int(a.t - b.t) })
	return all
}

// ksExponential returns the Kolmogorov–Smirnov statistic of the samples
// against the exponential distribution with the given rate.
func ksExponential(samples []float64, rate float64) float64 {
	x := slices.Clone(samples)
	slices.Sort(x)
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := 1 - math.Exp(-rate*v)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d
}

// gaps returns the inter-arrival gaps of arrivals in seconds.
func gaps(all []arrival) []float64 {
	g := make([]float64, 0, len(all))
	prev := int64(0)
	for _, a := range all {
		g = append(g, float64(a.t-prev)/1e9)
		prev = a.t
	}
	return g
}

// ksCritical is the Kolmogorov–Smirnov critical value at significance
// 0.001 for n samples (asymptotic: 1.949/√n).
func ksCritical(n int) float64 { return 1.949 / math.Sqrt(float64(n)) }

// TestPoissonSchedule checks the Poisson schedule statistically with fixed
// seeds: its inter-arrival gaps pass a Kolmogorov–Smirnov test against the
// exponential distribution at the configured rate (α = 0.001), and its
// mean rate is within 5 standard errors of the target. The schedule is
// tested directly, not its wall-clock execution. Across workers, the
// superposition of their independent processes must pass the same test.
func TestPoissonSchedule(t *testing.T) {
	const n = 100_000
	for _, tc := range []struct {
		name    string
		rate    float64
		conns   int
		workers int
		seed    uint64
	}{
		{name: "rate=20000/workers=1", rate: 20000, conns: 64, workers: 1, seed: 1},
		{name: "rate=10/workers=1", rate: 10, conns: 64, workers: 1, seed: 2},
		{name: "rate=50000/workers=4", rate: 50000, conns: 64, workers: 4, seed: 3},
		{name: "rate=1e6/workers=3", rate: 1e6, conns: 9, workers: 3, seed: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Addr: "x:1", Rate: tc.rate, Conns: tc.conns, Workers: tc.workers, Duration: time.Second, Seed: tc.seed}
			ws := schedule(t, cfg, n/tc.workers)
			// Use the prefix in which every worker's process is complete.
			end := int64(math.MaxInt64)
			for _, w := range ws {
				end = min(end, w[len(w)-1].t)
			}
			all := slices.DeleteFunc(merged(ws), func(a arrival) bool { return a.t > end })
			g := gaps(all)
			if d, crit := ksExponential(g, tc.rate), ksCritical(len(g)); d > crit {
				t.Errorf("KS statistic %.5f against Exp(%g) over %d gaps exceeds the critical value %.5f", d, tc.rate, len(g), crit)
			}
			// The mean gap of n exponential gaps has standard error mean/√n.
			mean := float64(all[len(all)-1].t) / 1e9 / float64(len(all))
			want := 1 / tc.rate
			if se := want / math.Sqrt(float64(len(all))); math.Abs(mean-want) > 5*se {
				t.Errorf("mean gap %.6g s, want %.6g s ± %.3g (5 standard errors)", mean, want, 5*se)
			}
		})
	}
}

// TestKSRejectsNonExponential checks that the test above can fail: uniform
// gaps with the right mean, and constant gaps, are rejected.
func TestKSRejectsNonExponential(t *testing.T) {
	const n, rate = 10_000, 1000.0
	cfg := Config{Addr: "x:1", Rate: rate, Arrival: Constant, Duration: time.Second}
	if g := gaps(merged(schedule(t, cfg, n))); ksExponential(g, rate) <= ksCritical(n) {
		t.Error("constant gaps pass the KS test against the exponential")
	}
	u := make([]float64, n)
	for i := range u {
		u[i] = 2 / rate * (float64(i) + 0.5) / n // uniform on [0, 2/rate): mean 1/rate
	}
	if ksExponential(u, rate) <= ksCritical(n) {
		t.Error("uniform gaps pass the KS test against the exponential")
	}
}

// TestRateSplitExact checks that a global rate below the connection count
// is split exactly: rate 10 over 64 connections, constant arrivals. The
// aggregate has exactly one arrival every 100 ms (so any window of length L
// holds ⌊10L⌋ or ⌈10L⌉), no two arrivals coincide, every connection gets
// exactly one arrival in every 64 consecutive ones (no connection gets a
// burst, none is starved or locked up), and connection i starts at i×100 ms
// (the aggregate is smooth from the start). With several workers the
// workers' schedules interleave into the same aggregate.
func TestRateSplitExact(t *testing.T) {
	const rate, conns = 10.0, 64
	const step = int64(time.Second / rate)
	for _, workers := range []int{1, 4} {
		cfg := Config{Addr: "x:1", Rate: rate, Conns: conns, Workers: workers, Arrival: Constant, Duration: time.Second}
		all := merged(schedule(t, cfg, 10*conns/workers))
		seen := map[int64]bool{}
		for k, a := range all {
			if a.t != int64(k)*step {
				t.Fatalf("workers=%d: arrival %d at %v, want %v", workers, k, time.Duration(a.t), time.Duration(int64(k)*step))
			}
			if seen[a.t] {
				t.Fatalf("workers=%d: two arrivals at %v", workers, time.Duration(a.t))
			}
			seen[a.t] = true
		}
		for _, l := range []int64{int64(50 * time.Millisecond), int64(time.Second), int64(3700 * time.Millisecond)} {
			for a := int64(0); a+l <= all[len(all)-1].t; a += step / 7 {
				count := 0
				for _, x := range all {
					if x.t >= a && x.t < a+l {
						count++
					}
				}
				lo := int(float64(l) / 1e9 * rate)
				if count != lo && count != lo+1 {
					t.Fatalf("workers=%d: window [%v, %v) holds %d arrivals, want %d or %d",
						workers, time.Duration(a), time.Duration(a+l), count, lo, lo+1)
				}
			}
		}
		if workers == 1 {
			checkEveryConn(t, all, conns)
			for i := range conns {
				if all[i].conn != i {
					t.Fatalf("arrival %d went to connection %d, want %d (first arrivals staggered by connection)", i, all[i].conn, i)
				}
			}
		}
	}
}

// TestRateSplitPoissonBelowConns checks the Poisson split for rate 10 over
// 64 connections: each connection gets exactly one of every 64 consecutive
// arrivals, and no two arrivals coincide.
func TestRateSplitPoissonBelowConns(t *testing.T) {
	const conns = 64
	cfg := Config{Addr: "x:1", Rate: 10, Conns: conns, Duration: time.Second, Seed: 7}
	all := merged(schedule(t, cfg, 100*conns))
	checkEveryConn(t, all, conns)
	for i := 1; i < len(all); i++ {
		if all[i].t == all[i-1].t {
			t.Fatalf("arrivals %d and %d coincide at %v", i-1, i, time.Duration(all[i].t))
		}
	}
}

// TestOnOffSchedule checks on/off arrivals: none in an off period, and the
// on periods' gaps (with the off periods cut out) are exponential at Rate.
func TestOnOffSchedule(t *testing.T) {
	const rate, n = 20000.0, 50_000
	on, off := 100*time.Millisecond, 300*time.Millisecond
	cfg := Config{Addr: "x:1", Rate: rate, Arrival: OnOff, On: on, Off: off, Duration: time.Second, Seed: 5}
	all := merged(schedule(t, cfg, n))
	cycle := int64(on + off)
	var onTime []arrival
	for _, a := range all {
		phase := a.t % cycle
		if phase >= int64(on) {
			t.Fatalf("arrival at %v falls in an off period", time.Duration(a.t))
		}
		onTime = append(onTime, arrival{t: a.t/cycle*int64(on) + phase})
	}
	g := gaps(onTime)
	if d, crit := ksExponential(g, rate), ksCritical(len(g)); d > crit {
		t.Errorf("on-time gaps: KS statistic %.5f exceeds %.5f", d, crit)
	}
	if got, want := cfg.TargetRate(), rate/4; got != want {
		t.Errorf("TargetRate() = %g, want %g", got, want)
	}
}

// TestPacerSkipsFullConnections checks the pacer's bound handling: a batch
// goes to the next connection with room, and to none if all are full.
func TestPacerSkipsFullConnections(t *testing.T) {
	full := map[int]bool{1: true, 2: true}
	room := func(i int) bool { return !full[i] }
	var p pacer
	var got []int
	for range 4 {
		got = append(got, p.pick(4, room))
	}
	if want := []int{0, 3, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("picks %v, want %v", got, want)
	}
	if c := p.pick(4, func(int) bool { return false }); c != -1 {
		t.Errorf("pick with every connection full = %d, want -1", c)
	}
}
