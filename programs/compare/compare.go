package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"concbench/results"
	"concbench/stats"
)

// Config is a comparison's settings ("concbench compare"'s flags and
// arguments).
type Config struct {
	// A and B are the run folders compared: B against A.
	A, B string
	// Metrics names the metrics compared (MetricNames).
	Metrics []string
	// JSON, if set, is a file the rows are also written to as JSON; "-":
	// standard output, instead of the table.
	JSON string
}

// DefaultMetrics are the metrics compared by default.
var DefaultMetrics = []string{"capacity", "p50", "p99", "ctxsw", "cpu", "allocs"}

// Run compares run B with run A as c asks and prints the table and the
// verdicts to stdout.
func Run(c Config, stdout io.Writer) error {
	var chosen []int
	for _, name := range c.Metrics {
		name = strings.TrimSpace(name)
		i := -1
		for j, m := range metrics {
			if m.name == name {
				i = j
			}
		}
		if i < 0 {
			return fmt.Errorf("compare: --metrics: unknown metric %q (accepted: %s)", name, MetricNames())
		}
		chosen = append(chosen, i)
	}
	runA, ptsA, err := results.ReadRun(c.A)
	if err != nil {
		return fmt.Errorf("compare: run A: %w", err)
	}
	runB, ptsB, err := results.ReadRun(c.B)
	if err != nil {
		return fmt.Errorf("compare: run B: %w", err)
	}
	rows, notes := compareRuns(runA, ptsA, runB, ptsB, chosen)
	if len(rows) == 0 {
		return fmt.Errorf("compare: %s and %s have no configuration and load point in common", c.A, c.B)
	}
	if c.JSON != "" {
		b, err := json.MarshalIndent(struct {
			A, B  string
			Notes []string
			Rows  []Row
		}{c.A, c.B, notes, rows}, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		if c.JSON == "-" {
			_, err = stdout.Write(b)
			return err
		}
		if err := results.WriteFile(c.JSON, b); err != nil {
			return fmt.Errorf("compare: --json: %w", err)
		}
	}
	writeComparison(stdout, c.A, c.B, rows, notes)
	return nil
}

// Row is one configuration × load × metric of the comparison.
type Row struct {
	Config   string  `json:"config"`
	Load     string  `json:"load"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	MedianA  float64 `json:"median_a"`
	MedianB  float64 `json:"median_b"`
	NA       int     `json:"n_a"`
	NB       int     `json:"n_b"`
	RateA    float64 `json:"offered_rate_a_per_s,omitempty"`
	RateB    float64 `json:"offered_rate_b_per_s,omitempty"`
	Ratio    float64 `json:"ratio_b_over_a"`
	RatioLo  float64 `json:"ratio_lo"`
	RatioHi  float64 `json:"ratio_hi"`
	P        float64 `json:"p"`
	Verdict  string  `json:"verdict"` // "B higher", "B lower", "no significant difference", "not comparable"
	Why      string  `json:"why,omitempty"`
	Improved *bool   `json:"improved,omitempty"` // for a significant difference: whether B is better
}

// MarshalJSON writes the row with null for a value it does not have (NaN:
// no valid repetition, no interval), which JSON cannot carry as a number.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row // without this method
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		plain
		MedianA *float64 `json:"median_a"`
		MedianB *float64 `json:"median_b"`
		Ratio   *float64 `json:"ratio_b_over_a"`
		RatioLo *float64 `json:"ratio_lo"`
		RatioHi *float64 `json:"ratio_hi"`
		P       *float64 `json:"p"`
	}{plain(r), num(r.MedianA), num(r.MedianB), num(r.Ratio), num(r.RatioLo), num(r.RatioHi), num(r.P)})
}

// metrics are the metrics compare can report, by the names --metrics
// takes.
var metrics = []struct {
	name   string
	metric results.Metric
	kind   results.Kind
}{
	{"capacity", results.Capacity, results.KindCapacity},
	{"p50", results.LatencyP50, results.KindOpen},
	{"p99", results.LatencyP99, results.KindOpen},
	{"p99.9", results.LatencyP999, results.KindOpen},
	{"ctxsw", results.CtxswPerReq, results.KindOpen},
	{"cpu", results.CPUPerReq, results.KindOpen},
	{"allocs", results.AllocsPerReq, results.KindOpen},
	{"bytes", results.BytesPerReq, results.KindOpen},
}

// MetricNames lists the metrics Config.Metrics may name.
func MetricNames() string {
	var names []string
	for _, m := range metrics {
		names = append(names, m.name)
	}
	return strings.Join(names, ", ")
}

// compareRuns pairs the two runs' groups by configuration, kind and
// fraction, and compares each chosen metric over their valid repetitions.
// The notes say what differs between the runs beyond the code under test.
func compareRuns(runA *results.Run, ptsA []results.Point, runB *results.Run, ptsB []results.Point, chosen []int) ([]Row, []string) {
	var notes []string
	for _, u := range runA.Unreadable {
		notes = append(notes, "run A: left out an unreadable point file: "+u.String())
	}
	for _, u := range runB.Unreadable {
		notes = append(notes, "run B: left out an unreadable point file: "+u.String())
	}
	pa, pb := runA.Provenance, runB.Provenance
	for _, d := range []struct{ what, a, b string }{
		{"commit", pa.Commit, pb.Commit}, {"CPU", fmt.Sprintf("%s × %d", pa.CPUModel, pa.NumCPU), fmt.Sprintf("%s × %d", pb.CPUModel, pb.NumCPU)},
		{"kernel", pa.Kernel, pb.Kernel}, {"Go", pa.GoVersion, pb.GoVersion}, {"host", pa.Hostname, pb.Hostname},
	} {
		if d.a != d.b {
			notes = append(notes, fmt.Sprintf("the runs differ in %s: A %s, B %s", d.what, d.a, d.b))
		}
	}
	groupsB := results.GroupPoints(runB, ptsB)
	var rows []Row
	for _, ga := range results.GroupPoints(runA, ptsA) {
		gb := results.Find(groupsB, ga.Config.Name, ga.Kind, ga.LoadValue())
		if gb == nil {
			continue
		}
		for _, i := range chosen {
			cm := metrics[i]
			if cm.kind != ga.Kind {
				continue
			}
			rows = append(rows, compareGroups(ga, gb, cm.metric))
		}
	}
	return rows, notes
}

// compareGroups compares metric m between two groups of the same
// configuration and load.
func compareGroups(ga, gb *results.Group, m results.Metric) Row {
	aa, ab := ga.Aggregate(m), gb.Aggregate(m)
	row := Row{Config: ga.Config.Name, Load: results.LoadLabel(ga.Kind, ga.LoadValue()), Metric: m.Label, Unit: m.Unit,
		MedianA: aa.Stats.Median, MedianB: ab.Stats.Median, NA: aa.Stats.N, NB: ab.Stats.N,
		RateA: offeredRate(ga), RateB: offeredRate(gb), Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN(), P: math.NaN()}
	if aa.Stats.N == 0 || ab.Stats.N == 0 {
		row.Verdict, row.Why = "not comparable", fmt.Sprintf("valid repetitions: %d in A, %d in B", aa.Stats.N, ab.Stats.N)
		return row
	}
	row.P = stats.MannWhitney(aa.Stats.Values, ab.Stats.Values).P
	r := stats.RatioCI(ab.Stats.Values, aa.Stats.Values, results.Confidence)
	row.Ratio, row.RatioLo, row.RatioHi = r.Est, r.Lo, r.Hi
	switch {
	case !r.OK:
		row.Verdict, row.Why = "not comparable", r.Why
	case r.Significant():
		row.Verdict = "B lower"
		if r.Lo > 1 {
			row.Verdict = "B higher"
		}
		better := (r.Lo > 1) == m.HigherIsBetter
		row.Improved = &better
	default:
		row.Verdict = "no significant difference"
	}
	return row
}

// offeredRate returns the median offered rate of g's valid open-loop
// repetitions (0 for capacity points).
func offeredRate(g *results.Group) float64 {
	var xs []float64
	for _, p := range g.Valid() {
		if p.OfferedRatePerS > 0 {
			xs = append(xs, p.OfferedRatePerS)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return results.Summarize(xs).Median
}

// writeComparison prints the table and the verdicts.
func writeComparison(w io.Writer, dirA, dirB string, rows []Row, notes []string) {
	fmt.Fprintf(w, "A: %s\nB: %s\n", dirA, dirB)
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tload\tmetric\tA (n)\tB (n)\tB/A [95% CI]\tp\t")
	for _, r := range rows {
		load := r.Load
		if r.RateA > 0 && r.RateB > 0 && math.Abs(r.RateA-r.RateB) > 0.005*r.RateA {
			load += fmt.Sprintf(" (%s vs %s req/s)", fmtNum(r.RateA), fmtNum(r.RateB))
		}
		ratio := "—"
		if !math.IsNaN(r.Ratio) {
			ratio = fmtNum(r.Ratio) + "×"
			if !math.IsNaN(r.RatioLo) {
				ratio += fmt.Sprintf(" [%s, %s]", fmtNum(r.RatioLo), fmtNum(r.RatioHi))
			}
		}
		p := "—"
		if !math.IsNaN(r.P) {
			p = fmtP(r.P)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%d)\t%s (%d)\t%s\t%s\t\n", r.Config, load, r.Metric,
			fmtValue(r.MedianA, r.Unit), r.NA, fmtValue(r.MedianB, r.Unit), r.NB, ratio, p)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range rows {
		subject := fmt.Sprintf("%s %s %s", r.Config, r.Load, r.Metric)
		switch r.Verdict {
		case "not comparable":
			fmt.Fprintf(w, "%s: not comparable (%s)\n", subject, r.Why)
		case "no significant difference":
			fmt.Fprintf(w, "%s: no significant difference (B/A %s× [%s, %s], p = %s)\n", subject, fmtNum(r.Ratio), fmtNum(r.RatioLo), fmtNum(r.RatioHi), fmtP(r.P))
		default:
			how := "worse"
			if *r.Improved {
				how = "better"
			}
			fmt.Fprintf(w, "%s: B is %s× [%s, %s] A (p = %s; %s)\n", subject, fmtNum(r.Ratio), fmtNum(r.RatioLo), fmtNum(r.RatioHi), fmtP(r.P), how)
		}
	}
}

// fmtNum writes v with 3 significant digits, or 4 decimals where 3 digits
// would round a factor that is not 1 to 1.
func fmtNum(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if s == "1" && v != 1 {
		s = strconv.FormatFloat(v, 'f', 4, 64)
	}
	return s
}

// fmtValue writes a median in its unit: latencies as durations.
func fmtValue(v float64, unit string) string {
	if math.IsNaN(v) {
		return "—"
	}
	if unit == "ns" {
		return time.Duration(v).Round(time.Duration(math.Pow(10, math.Max(0, math.Floor(math.Log10(math.Abs(v)))-2)))).String()
	}
	return fmtNum(v) + " " + unit
}

// fmtP writes a p-value: two significant digits, "<0.001" below that.
func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}
