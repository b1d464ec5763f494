package results_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
	"concbench/results/resultstest"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// syntheticDir is the synthetic run, written once for the package's
// tests (TestMain); tests only read it.
var syntheticDir string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(resultstest.Main(m, &syntheticDir))
}

// readSynthetic reads the synthetic run, as every reader of runs does.
func readSynthetic(t *testing.T) (string, *results.Run, []results.Point) {
	t.Helper()
	r, pts := resultstest.ReadRun(t, syntheticDir)
	return syntheticDir, r, pts
}

func TestGroupPoints(t *testing.T) {
	_, r, pts := readSynthetic(t)
	groups := results.GroupPoints(r, pts)
	var got []string
	for _, g := range groups {
		got = append(got, g.Label())
	}
	var want []string
	for _, c := range r.Configs {
		// The kinds by name after capacity: mechanisms before open.
		want = append(want, c.Name+" capacity", c.Name+" "+results.LoadLabel(results.KindMechanisms, resultstest.MechanismsRate))
		for _, f := range resultstest.Fractions {
			want = append(want, c.Name+" "+results.LoadLabel(results.KindOpen, f))
		}
	}
	want = append(want, "proactor capacity") // not in Configs: last
	if len(got) != len(want) {
		t.Fatalf("groups %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("group %d is %q, want %q", i, got[i], want[i])
		}
	}
	total := 0
	for _, g := range groups {
		total += len(g.Points)
		for i, p := range g.Points {
			if i > 0 && g.Points[i-1].Repetition >= p.Repetition {
				t.Errorf("%s: repetitions out of order", g.Label())
			}
		}
	}
	if total != len(pts) {
		t.Errorf("groups hold %d points, the run %d", total, len(pts))
	}

	hs := results.Find(groups, "halfsynchalfreactive", results.KindOpen, 0.9)
	if n := len(hs.Measured()); n != resultstest.Repetitions-1 {
		t.Errorf("halfsynchalfreactive open 0.90: %d measured, want %d (one failed)", n, resultstest.Repetitions-1)
	}
	fifo := results.Find(groups, "leaderfollowers/fifo", results.KindOpen, 0.9)
	if inv := fifo.Invalid(); len(inv) != 1 || inv[0].Repetition != 2 || inv[0].MainCheck() != loadgen.CheckRate {
		t.Errorf("leaderfollowers/fifo open 0.90: invalid %v, want rep 2 (rate)", inv)
	}
	if n := len(fifo.Valid()); n != resultstest.Repetitions-1 {
		t.Errorf("leaderfollowers/fifo open 0.90: %d valid, want %d", n, resultstest.Repetitions-1)
	}
	if c := fifo.Points[0].MainCheck(); c != "" {
		t.Errorf("MainCheck of a valid point = %q, want empty", c)
	}
	if results.Find(groups, "netpoll", results.KindOpen, 0.3) != nil {
		t.Errorf("Find found a fraction the run does not have")
	}
}

func TestAggregate(t *testing.T) {
	_, r, pts := readSynthetic(t)
	groups := results.GroupPoints(r, pts)
	tests := []struct {
		name     string
		config   string
		kind     results.Kind
		fraction float64
		metric   results.Metric
		n        int
		skipped  int
		excluded []string
	}{
		{name: "all measured", config: "leaderfollowers/lifo", kind: results.KindOpen, fraction: 0.5, metric: results.LatencyP99, n: 6},
		{name: "a failed point is skipped, invalid ones excluded", config: "halfsynchalfreactive", kind: results.KindOpen, fraction: 0.9, metric: results.LatencyP99, n: 3, skipped: 1,
			excluded: []string{"rep 1: over-capacity", "rep 3: over-capacity"}},
		{name: "an invalid point is excluded and counted", config: "leaderfollowers/fifo", kind: results.KindOpen, fraction: 0.9, metric: results.CtxswPerReq, n: 5,
			excluded: []string{"rep 2: rate"}},
		{name: "an invalid capacity point is excluded", config: "leaderfollowers/lifo", kind: results.KindCapacity, fraction: 1, metric: results.Capacity, n: 5,
			excluded: []string{"rep 4: errors"}},
		{name: "no valid repetition", config: "netpoll", kind: results.KindOpen, fraction: 0.9, metric: results.LatencyP99, n: 0,
			excluded: []string{"rep 0: generator-lag", "rep 1: generator-lag", "rep 2: generator-lag", "rep 3: generator-lag", "rep 4: generator-lag", "rep 5: generator-lag"}},
		{name: "a metric the kernel did not expose is skipped", config: "netpoll", kind: results.KindOpen, fraction: 0.1, metric: results.RunQueuePerReq, n: 0, skipped: 6},
		{name: "capacity only from capacity points", config: "netpoll", kind: results.KindOpen, fraction: 0.1, metric: results.Capacity, n: 0, skipped: 6},
		{name: "send lag only in open loop", config: "netpoll", kind: results.KindCapacity, fraction: 1, metric: results.SendLagP99, n: 0, skipped: 6},
		{name: "an unavailable point is skipped", config: "proactor", kind: results.KindCapacity, fraction: 1, metric: results.Capacity, n: 0, skipped: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := results.Find(groups, tc.config, tc.kind, tc.fraction)
			if g == nil {
				t.Fatalf("no group %s %s %v", tc.config, tc.kind, tc.fraction)
			}
			a := g.Aggregate(tc.metric)
			if a.Stats.N != tc.n || a.Skipped != tc.skipped || len(a.SkipReasons) != a.Skipped ||
				a.Excluded != len(tc.excluded) || !slices.Equal(a.ExcludedReasons, tc.excluded) {
				t.Errorf("N=%d skipped=%d (%q) excluded=%d (%q); want %d, %d, %q", a.Stats.N, a.Skipped, a.SkipReasons,
					a.Excluded, a.ExcludedReasons, tc.n, tc.skipped, tc.excluded)
			}
			if a.Stats.N+a.Skipped+a.Excluded != len(g.Points) {
				t.Errorf("%d values + %d skipped + %d excluded for %d points", a.Stats.N, a.Skipped, a.Excluded, len(g.Points))
			}
		})
	}

	// The zero p50 of netpoll open 0.10 rep 3 is a value, not a gap.
	g := results.Find(groups, "netpoll", results.KindOpen, 0.1)
	a := g.Aggregate(results.LatencyP50)
	if a.Stats.N != 6 || a.Stats.Min != 0 {
		t.Errorf("netpoll p50 at 0.10: N=%d min=%v, want 6 values with a 0", a.Stats.N, a.Stats.Min)
	}
}

// TestAggregateValidOnly checks, on every group and metric of the
// synthetic run, that Aggregate summarizes exactly the values of the
// valid repetitions, and that the run's invalid values are far enough
// off that mixing them in would show: the test fails if they are used.
func TestAggregateValidOnly(t *testing.T) {
	_, r, pts := readSynthetic(t)
	moved := 0
	for _, g := range results.GroupPoints(r, pts) {
		for _, m := range results.Metrics() {
			var valid, all []float64
			for _, p := range g.Points {
				v, ok := m.Value(p)
				if !ok {
					continue
				}
				all = append(all, v)
				if !p.Invalid() {
					valid = append(valid, v)
				}
			}
			a := g.Aggregate(m)
			slices.Sort(valid)
			if !slices.Equal(a.Stats.Values, valid) {
				t.Errorf("%s %s: values %v, want the valid repetitions' %v", g.Label(), m.Name, a.Stats.Values, valid)
			}
			if a.Excluded != len(g.Invalid()) {
				t.Errorf("%s %s: excluded %d, want %d", g.Label(), m.Name, a.Excluded, len(g.Invalid()))
			}
			if len(valid) > 0 && len(all) > len(valid) {
				mixed := results.Summarize(all).Median
				if math.Abs(mixed-a.Stats.Median) > 0.25*math.Abs(a.Stats.Median) {
					moved++
				}
			}
		}
	}
	if moved == 0 {
		t.Errorf("no group's median would move by more than 25%% if its invalid repetitions were mixed in: the run does not test the exclusion")
	}

	// The merged histogram leaves the invalid repetitions out too.
	g := results.Find(results.GroupPoints(r, pts), "netpoll", results.KindOpen, 0.5)
	m := g.MergeLatency(false)
	var count int64
	for _, p := range g.Valid() {
		count += p.Load.Latency.Count
	}
	if m.Points != 3 || m.Excluded != 3 || m.Hist.TotalCount() != count {
		t.Errorf("netpoll open 0.50: merged %d points (%d excluded), count %d; want 3, 3, %d", m.Points, m.Excluded, m.Hist.TotalCount(), count)
	}
}

// TestAggregatesGolden writes the median, interval and counts of every
// group for the metrics the figures and the report show, from the valid
// repetitions, and beside them (median_with_invalid) the median the
// group would have if its invalid repetitions were mixed in: a change in
// which repetitions feed the statistics changes this file.
func TestAggregatesGolden(t *testing.T) {
	_, r, pts := readSynthetic(t)
	var b strings.Builder
	fmt.Fprintf(&b, "group\tmetric\tn\tmedian\tlo\thi\tskipped\texcluded\tmedian_with_invalid\n")
	for _, g := range results.GroupPoints(r, pts) {
		for _, m := range []results.Metric{results.Capacity, results.LatencyP50, results.LatencyP99, results.LatencyP999,
			results.CtxswPerReq, results.CPUPerReq, results.AllocsPerReq} {
			if (m.Name == results.Capacity.Name) != (g.Kind == results.KindCapacity) {
				continue
			}
			a := g.Aggregate(m)
			if a.Stats.N == 0 && a.Excluded == 0 {
				continue
			}
			mixed := ""
			if a.Excluded > 0 {
				var all []float64
				for _, p := range g.Points {
					if v, ok := m.Value(p); ok {
						all = append(all, v)
					}
				}
				mixed = results.FormatFloat(results.Summarize(all).Median)
			}
			fmt.Fprintf(&b, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", g.Label(), m.Name, a.Stats.N, results.FormatFloat(a.Stats.Median),
				results.FormatFloat(a.Stats.Lo), results.FormatFloat(a.Stats.Hi), a.Skipped,
				strings.Join(append([]string{strconv.Itoa(a.Excluded)}, a.ExcludedReasons...), "; "), mixed)
		}
	}
	resultstest.GoldenFile(t, "aggregates.tsv", []byte(b.String()))
}

func TestNearestFraction(t *testing.T) {
	_, r, pts := readSynthetic(t)
	groups := results.GroupPoints(r, pts)
	tests := []struct {
		target, want float64
	}{
		{target: 0.5, want: 0.5},
		{target: 0.29, want: 0.1},
		{target: 0.31, want: 0.5},
		{target: 0.95, want: 0.9},
		{target: 0, want: 0.1},
	}
	for _, tc := range tests {
		if got, ok := results.NearestFraction(groups, tc.target); !ok || got != tc.want {
			t.Errorf("NearestFraction(%v) = %v, %v; want %v", tc.target, got, ok, tc.want)
		}
	}
	if _, ok := results.NearestFraction(nil, 0.5); ok {
		t.Errorf("NearestFraction found a fraction in no groups")
	}
}

func TestMergeLatency(t *testing.T) {
	_, r, pts := readSynthetic(t)
	groups := results.GroupPoints(r, pts)
	g := results.Find(groups, "halfsynchalfreactive", results.KindOpen, 0.9)
	m := g.MergeLatency(false)
	var count int64
	for _, p := range g.Valid() {
		count += p.Load.Latency.Count
	}
	if m.Hist == nil || m.Hist.TotalCount() != count || m.Points != 3 || m.Excluded != 2 || m.Skipped != 1 || m.Dropped != 0 {
		total := int64(-1)
		if m.Hist != nil {
			total = m.Hist.TotalCount()
		}
		t.Fatalf("merged %d points (%d excluded, %d skipped, %d dropped), count %d; want 3, 2, 1, 0, %d", m.Points, m.Excluded, m.Skipped, m.Dropped, total, count)
	}
	// The merged median lies between the valid repetitions' medians.
	lo, hi := int64(1<<62), int64(0)
	for _, p := range g.Valid() {
		lo, hi = min(lo, p.Load.Latency.P50Ns), max(hi, p.Load.Latency.P50Ns)
	}
	if v := m.Hist.ValueAtQuantile(50); v < lo || v > hi {
		t.Errorf("merged p50 %d outside the repetitions' [%d, %d]", v, lo, hi)
	}
}

// TestMergeLatencyRanges merges histograms of different ranges: the merged
// histogram spans them all, so nothing is dropped, and a histogram that
// does not decode is skipped and reported.
func TestMergeLatencyRanges(t *testing.T) {
	enc := func(lowest, highest int64, values ...int64) loadgen.Summary {
		h := hdr.New(lowest, highest, 3)
		for _, v := range values {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		return loadgen.Summarize(h, 0)
	}
	pts := []*results.Point{
		{Status: results.StatusOK, Repetition: 0, Load: &loadgen.Result{Valid: true, Latency: enc(1000, 1e6, 5000, 900000)}},
		{Status: results.StatusOK, Repetition: 1, Load: &loadgen.Result{Valid: true, Latency: enc(1000, 1e9, 5e8)}},
		{Status: results.StatusOK, Repetition: 2, Load: &loadgen.Result{Valid: true, Latency: loadgen.Summary{Count: 3, Histogram: "not a histogram"}}},
		{Status: results.StatusFailed, Repetition: 3},
	}
	g := &results.Group{Points: pts}
	m := g.MergeLatency(false)
	if m.Points != 2 || m.Skipped != 2 || m.Dropped != 0 || len(m.Problems) != 1 || m.Hist.TotalCount() != 3 {
		t.Fatalf("points=%d skipped=%d dropped=%d problems=%q count=%d; want 2, 2, 0, one problem, 3",
			m.Points, m.Skipped, m.Dropped, m.Problems, m.Hist.TotalCount())
	}
	if max := m.Hist.Max(); !m.Hist.ValuesAreEquivalent(max, 5e8) {
		t.Errorf("merged max %d, want ≈5e8", max)
	}
}

// TestGroupRatePoints checks that absolute-rate points group by their
// rate, not their fraction (0 for all of them), sort after capacity and
// open points by rate, and have labels, point files and benchmark names
// of their own; and that fraction points are unchanged beside them.
func TestGroupRatePoints(t *testing.T) {
	r := &results.Run{Configs: []results.ModelConfig{{Name: "netpoll"}}}
	mk := func(kind results.Kind, frac, rate float64, rep int) results.Point {
		return results.Point{Config: results.ModelConfig{Name: "netpoll"}, Kind: kind, Fraction: frac, OfferedRatePerS: rate, Repetition: rep}
	}
	pts := []results.Point{
		mk(results.KindRate, 0, 20000, 0), mk(results.KindRate, 0, 5000, 1), mk(results.KindRate, 0, 5000, 0),
		mk(results.KindOpen, 0.5, 12345, 0), mk(results.KindCapacity, 1, 0, 0),
	}
	groups := results.GroupPoints(r, pts)
	var got []string
	for _, g := range groups {
		got = append(got, fmt.Sprintf("%s (%d reps, rate %g)", g.Label(), len(g.Points), g.RatePerS))
	}
	want := []string{
		"netpoll capacity (1 reps, rate 0)",
		"netpoll open 0.50 (1 reps, rate 0)",
		"netpoll rate 5000/s (2 reps, rate 5000)",
		"netpoll rate 20000/s (1 reps, rate 20000)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("groups %q\nwant %q", got, want)
	}
	if g := results.Find(groups, "netpoll", results.KindRate, 20000); g == nil || g.RatePerS != 20000 {
		t.Errorf("Find(rate 20000) = %v", g)
	}
	if g := results.Find(groups, "netpoll", results.KindOpen, 0.5); g == nil || g.Kind != results.KindOpen {
		t.Errorf("Find(open 0.5) = %v", g)
	}

	for _, tc := range []struct {
		name            string
		p               results.Point
		file, bench, lb string
	}{
		{name: "rate", p: mk(results.KindRate, 0, 5000, 2),
			file: "netpoll__rate__5000__rep02.json", bench: "Serve/config=netpoll/kind=rate/load=5000", lb: "netpoll rate 5000/s rep 2"},
		{name: "open", p: mk(results.KindOpen, 0.5, 12345, 2),
			file: "netpoll__open__0.500__rep02.json", bench: "Serve/config=netpoll/kind=open/load=0.50", lb: "netpoll open 0.50 rep 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := results.PointFileName(&tc.p); got != tc.file {
				t.Errorf("PointFileName = %q, want %q", got, tc.file)
			}
			if got := results.BenchName(&tc.p); got != tc.bench {
				t.Errorf("BenchName = %q, want %q", got, tc.bench)
			}
			if got := tc.p.Label(); got != tc.lb {
				t.Errorf("Label = %q, want %q", got, tc.lb)
			}
		})
	}
}
