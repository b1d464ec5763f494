package plots

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"concbench/results"
)

// latencyCell returns the latency figure's CSV cell col of the row of
// config, percentile and fraction, or fails.
func latencyCell(t *testing.T, f *Figure, config, percentile, fraction, col string) string {
	t.Helper()
	ci := slices.Index(f.Header, col)
	if ci < 0 {
		t.Fatalf("no column %q in %v", col, f.Header)
	}
	for _, row := range f.Rows {
		if row[0] == config && row[1] == percentile && row[2] == fraction {
			return row[ci]
		}
	}
	t.Fatalf("no row %s %s %s", config, percentile, fraction)
	return ""
}

// TestLatencyFigure checks, on made-up runs, that a percentile is left
// out where the window's sample is too small for it, and that the ideal
// is computed from measured inputs named in the caption.
func TestLatencyFigure(t *testing.T) {
	const cfg, frac = "leaderfollowers/lifo", "0.1"
	for _, tc := range []struct {
		name string
		// edit changes the synthetic points of cfg before the figure.
		edit    func(p *results.Point)
		floor   *results.ChainFloor
		caption []string // substrings the caption must hold
		check   func(t *testing.T, f *Figure)
	}{
		{
			name: "p99 of 500 responses is left out, p50 is drawn",
			edit: func(p *results.Point) {
				if p.Kind == results.KindOpen && p.Fraction == 0.1 && p.Load != nil {
					p.Load.Latency.Count = 500
				}
			},
			caption: []string{"left out: a repetition had fewer than 10 responses above the percentile"},
			check: func(t *testing.T, f *Figure) {
				if got := latencyCell(t, f, cfg, "p99", frac, "plotted"); got != "false" {
					t.Errorf("p99 plotted = %s, want false", got)
				}
				if got := latencyCell(t, f, cfg, "p99", frac, "note"); !strings.Contains(got, "500 responses") {
					t.Errorf("p99 note %q does not give the count", got)
				}
				if got := latencyCell(t, f, cfg, "p50", frac, "plotted"); got != "true" {
					t.Errorf("p50 plotted = %s, want true", got)
				}
			},
		},
		{
			name:    "the measured floor is added and named",
			floor:   &results.ChainFloor{MeanNs: 52300, Requests: 400},
			caption: []string{"plus the loopback floor measured in this run, 52.3µs mean", "c ÷ the configuration's measured capacity", "c = 1 server"},
			check: func(t *testing.T, f *Figure) {
				if got := latencyCell(t, f, cfg, "p50", frac, "floor_ns"); got != "52300" {
					t.Errorf("floor_ns = %q, want 52300", got)
				}
				num := func(col string) float64 {
					v, err := strconv.ParseFloat(latencyCell(t, f, cfg, "p50", frac, col), 64)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				want := results.MMc(int(num("ideal_c")), num("ideal_service_ns"), num("offered_rate_per_s")).P50Ns + 52300
				if got := num("ideal_ns"); math.Abs(got-want) > 1e-6*want {
					t.Errorf("ideal_ns = %g, want M/M/c + floor = %g", got, want)
				}
			},
		},
		{
			name:    "without a floor the caption says so",
			caption: []string{"the loopback floor was not measured in this run", "the nominal CPU work is not used"},
			check: func(t *testing.T, f *Figure) {
				if got := latencyCell(t, f, cfg, "p50", frac, "floor_ns"); got != "" {
					t.Errorf("floor_ns = %q, want empty", got)
				}
			},
		},
		{
			name: "blocking work gets no ideal",
			edit: func(p *results.Point) {
				p.Workload.Block = "300us"
			},
			caption: []string{"No ideal for leaderfollowers/lifo: blocking work: M/M/c does not apply"},
			check: func(t *testing.T, f *Figure) {
				if got := latencyCell(t, f, cfg, "p99", frac, "ideal_ns"); got != "NaN" && got != "" {
					t.Errorf("ideal_ns = %q for blocking work", got)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r, pts := synthetic(t)
			if tc.edit != nil {
				for i := range pts {
					if pts[i].Config.Name == cfg {
						tc.edit(&pts[i])
					}
				}
			}
			f := latencyFigure(Analyze(r, pts, Options{Floor: tc.floor}))
			if f == nil {
				t.Fatal("no latency figure")
			}
			for _, want := range tc.caption {
				if !strings.Contains(f.Caption, want) {
					t.Errorf("caption %q lacks %q", f.Caption, want)
				}
			}
			tc.check(t, f)
		})
	}
}

// TestFamilyColumns checks that no panel holds more than maxPanelSeries
// configurations and that every configuration is in exactly one.
func TestFamilyColumns(t *testing.T) {
	var cfgs []results.ModelConfig
	for i := range 7 {
		cfgs = append(cfgs, results.ModelConfig{Name: "lf" + strconv.Itoa(i), Model: ModelLF})
	}
	cfgs = append(cfgs, results.ModelConfig{Name: "np", Model: "netpoll"}, results.ModelConfig{Name: "new", Model: "somethingnew"})
	cols := familyColumns(cfgs)
	seen := map[string]int{}
	for _, c := range cols {
		if len(c.configs) > maxPanelSeries || len(c.configs) == 0 {
			t.Errorf("panel %q has %d configurations", c.title, len(c.configs))
		}
		for _, cfg := range c.configs {
			seen[cfg.Name]++
		}
	}
	for _, cfg := range cfgs {
		if seen[cfg.Name] != 1 {
			t.Errorf("%s is in %d panels", cfg.Name, seen[cfg.Name])
		}
	}
	if len(cols) != 3 || cols[0].title != "Leader/Followers (1/2)" {
		t.Errorf("columns %v, want Leader/Followers split in two and the rest in one", cols)
	}
}

// TestRunnerUpText checks the wording of a figure's finding: a winner
// clear of the runner-up's interval, or within it.
func TestRunnerUpText(t *testing.T) {
	val := func(name string, med, lo, hi float64) barValue {
		return barValue{cfg: results.ModelConfig{Name: name}, ok: true,
			agg: results.Aggregate{Stats: results.Stats{N: 6, Median: med, Lo: lo, Hi: hi}}}
	}
	for _, tc := range []struct {
		name   string
		vals   []barValue
		higher bool
		want   string
	}{
		{name: "clear, lower is better", vals: []barValue{val("a", 20, 19, 21), val("b", 10, 9, 11)},
			want: "b is clear of the runner-up a (20 x [19, 21]) across repetitions"},
		{name: "overlapping", vals: []barValue{val("a", 20, 15, 25), val("b", 18, 16, 21)},
			want: "b is within the runner-up a's interval (20 x [15, 25])"},
		{name: "higher is better", vals: []barValue{val("a", 20, 19, 21), val("b", 10, 9, 11)}, higher: true,
			want: "a is clear of the runner-up b (10 x [9, 11]) across repetitions"},
		{name: "one configuration", vals: []barValue{val("a", 20, 19, 21)}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runnerUpText(&Analysis{}, tc.vals, tc.higher, "x"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSpectrumSupported checks that no merged spectrum point is drawn
// beyond the percentile with MinTailResponses responses above it.
func TestSpectrumSupported(t *testing.T) {
	_, r, pts := synthetic(t)
	f := spectrumFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no spectrum figure")
	}
	col := func(name string) int { return slices.Index(f.Header, name) }
	drawn := 0
	for _, row := range f.Rows {
		if row[col("plotted")] != "true" || row[col("reps_merged")] == "0" {
			continue
		}
		x, _ := strconv.ParseFloat(row[col("inverse_tail")], 64)
		n, _ := strconv.ParseFloat(row[col("requests")], 64)
		if x*MinTailResponses > n*(1+1e-9) {
			t.Errorf("%s: 1/(1-p) = %g drawn from %g requests, fewer than %d above it", row[0], x, n, MinTailResponses)
		}
		drawn++
	}
	if drawn == 0 {
		t.Error("nothing drawn")
	}
}
