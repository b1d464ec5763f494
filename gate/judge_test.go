package gate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"concbench/results"
)

// mkSide returns a side with one group: config's points of kind (open
// points at fraction 0.5), one per value of metric, all valid.
func mkSide(label, config string, kind results.Kind, metric string, vals ...float64) *Side {
	s := &Side{Label: label, Commit: label + "-commit", Unavailable: map[string]string{}}
	s.add(config, kind, metric, vals...)
	return s
}

// add appends a group's points to s.
func (s *Side) add(config string, kind results.Kind, metric string, vals ...float64) *Side {
	frac := 1.0
	if kind == results.KindOpen {
		frac = 0.5
	}
	for i, v := range vals {
		s.Points = append(s.Points, Point{Config: config, Kind: kind, Fraction: frac, Repetition: i,
			Status: results.StatusOK, Valid: true, Values: map[string]float64{metric: v}})
	}
	return s
}

// invalidate marks the first n points of s invalid by the load
// generator's verdict on itself.
func (s *Side) invalidate(n int) *Side {
	for i := range n {
		s.Points[i].Valid, s.Points[i].Fault = false, GeneratorFault
		s.Points[i].Why = "the generator's own lateness moved p99 by 250µs"
	}
	return s
}

// serverFail marks the first n points of s failed by the server: over
// capacity at the equal load.
func (s *Side) serverFail(n int) *Side {
	for i := range n {
		s.Points[i].Valid, s.Points[i].Fault = false, ServerFault
		s.Points[i].Why = "over capacity: the server fell behind the offered 20000 req/s"
	}
	return s
}

func oneRule(r Rule) Options {
	return Options{Rules: []Rule{r}, MinSamples: 4, Alpha: DefaultAlpha}
}

var (
	strictAllocs = Rule{Metric: results.AllocsPerReq, Kind: results.KindCapacity, Method: Strict, Abs: 0.05}
	failures     = Rule{Metric: ServerFailures, Kind: results.KindCapacity, Method: Failures}
	tolCtxsw     = Rule{Metric: results.CtxswPerReq, Kind: results.KindCapacity, Method: Tolerance, Abs: 0.1, Rel: 0.1}
	uCapacity    = Rule{Metric: results.Capacity, Kind: results.KindCapacity, Method: UTest, MinEffect: 0.05}
	uP99         = Rule{Metric: results.LatencyP99, Kind: results.KindOpen, Method: UTest, MinEffect: 0.25}
)

// shift returns xs each plus d.
func shift(xs []float64, d float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + d
	}
	return out
}

// scale returns xs each times f.
func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// TestJudge checks each method's verdicts on synthetic samples: within
// and beyond the bound, in the bad and the good direction, and the U
// test's two conditions (significance and minimum effect).
func TestJudge(t *testing.T) {
	allocs := []float64{1.001, 1.002, 1.0, 1.003, 1.001, 1.002}
	ctxsw := []float64{1.0, 1.02, 0.98, 1.01, 0.99, 1.0}
	capacity := []float64{40000, 40400, 39800, 40100, 39900, 40200}
	p99 := []float64{500e3, 520e3, 480e3, 510e3, 490e3, 505e3}
	interleaved := []float64{40050, 40350, 39850, 40150, 39950, 40250} // overlaps capacity: not significant
	for _, tc := range []struct {
		name      string
		rule      Rule
		old, new  []float64
		want      Verdict
		wantText  string // verdict as printed, if checked
		wantWhy   string // substring of Why, if checked
		wantDelta string // the delta column, if checked
	}{
		{name: "strict unchanged", rule: strictAllocs, old: allocs, new: allocs, want: Same},
		{name: "strict within the bound", rule: strictAllocs, old: allocs, new: shift(allocs, 0.04), want: Same},
		{name: "strict beyond the bound", rule: strictAllocs, old: allocs, new: shift(allocs, 0.06), want: Regression, wantDelta: "+0.060"},
		{name: "strict one more allocation", rule: strictAllocs, old: allocs, new: shift(allocs, 1), want: Regression, wantText: "**REGRESSION**"},
		{name: "strict fewer allocations", rule: strictAllocs, old: allocs, new: shift(allocs, -0.5), want: Better, wantText: "better"},
		{name: "tolerance within", rule: tolCtxsw, old: ctxsw, new: shift(ctxsw, 0.19), want: Same},
		{name: "tolerance beyond", rule: tolCtxsw, old: ctxsw, new: shift(ctxsw, 0.21), want: Regression},
		{name: "tolerance better", rule: tolCtxsw, old: ctxsw, new: shift(ctxsw, -0.3), want: Better},
		{name: "u-test throughput down 20%", rule: uCapacity, old: capacity, new: scale(capacity, 0.8), want: Regression, wantDelta: "-20.0%"},
		{name: "u-test throughput up 20%", rule: uCapacity, old: capacity, new: scale(capacity, 1.2), want: Better, wantText: "+20.0% better"},
		{name: "u-test significant 1% shift", rule: uCapacity, old: capacity, new: scale(capacity, 0.99), want: Same,
			wantWhy: "below the minimum effect 5%"},
		{name: "u-test not significant", rule: uCapacity, old: capacity, new: interleaved, want: Same},
		{name: "u-test large but not significant", rule: uCapacity, old: capacity,
			new: []float64{30000, 46000, 31000, 45000, 32000, 33000}, want: Same},
		{name: "u-test latency up 30%", rule: uP99, old: p99, new: scale(p99, 1.3), want: Regression},
		{name: "u-test latency up 20% (below 25%)", rule: uP99, old: p99, new: scale(p99, 1.2), want: Same, wantWhy: "below the minimum effect 25%"},
		{name: "u-test latency down 30%", rule: uP99, old: p99, new: scale(p99, 0.7), want: Better},
		{name: "tolerance scales with the base", rule: tolCtxsw, old: scale(ctxsw, 10), new: shift(scale(ctxsw, 10), 1.05), want: Same},
		// A no-change CI run at 4e3bfe9 (leaderfollowers/lifo capacity,
		// 7+7 repetitions): the medians 0.376 and 0.577 differ by more
		// than the tolerance, but by the metric's spread.
		{name: "tolerance beyond by the spread", rule: Rule{Metric: results.CtxswPerReq, Kind: results.KindCapacity, Method: Tolerance, Abs: 0.1, Rel: 0.25},
			old:  []float64{0.749, 0.359, 0.285, 0.696, 0.28, 0.376, 0.458},
			new:  []float64{0.42, 0.639, 0.286, 0.712, 0.652, 0.42, 0.577},
			want: Same, wantWhy: "within the metric's spread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.rule.Metric.Name
			base := mkSide("base", "lf", tc.rule.Kind, m, tc.old...)
			head := mkSide("head", "lf", tc.rule.Kind, m, tc.new...)
			r := Compare(base, head, oneRule(tc.rule), "test")
			if len(r.Rows) != 1 {
				t.Fatalf("%d rows, want 1 (problems %v)", len(r.Rows), r.Problems)
			}
			row := &r.Rows[0]
			if row.Verdict != tc.want {
				t.Errorf("verdict %s (delta %s, p %.4f, why %q), want %s", row.Verdict, row.deltaText(), row.P, row.Why, tc.want)
			}
			if tc.wantText != "" && row.verdictText() != tc.wantText {
				t.Errorf("verdict text %q, want %q", row.verdictText(), tc.wantText)
			}
			if !strings.Contains(row.Why, tc.wantWhy) {
				t.Errorf("why %q, want it to contain %q", row.Why, tc.wantWhy)
			}
			if tc.wantDelta != "" && row.deltaText() != tc.wantDelta {
				t.Errorf("delta %q, want %q", row.deltaText(), tc.wantDelta)
			}
			wantOutcome := map[Verdict]Outcome{Same: Pass, Better: Pass, Regression: Regressed}[tc.want]
			if r.Outcome != wantOutcome {
				t.Errorf("outcome %s, want %s", r.Outcome, wantOutcome)
			}
			if (tc.rule.Method == UTest) != (row.P == row.P) { // NaN ≠ NaN
				t.Errorf("p = %v for a %s rule", row.P, tc.rule.Method)
			}
		})
	}
}

// TestOutcomes checks the gate's decision and exit status: undecided
// rows and problems (too few valid samples, unavailable models, a side
// without a group), the precedence of a regression over them, the
// exclusion of points the generator invalidated, and the failures rows.
func TestOutcomes(t *testing.T) {
	six := []float64{1, 1, 1, 1, 1, 1}
	m := results.AllocsPerReq.Name
	opts := oneRule(strictAllocs)
	withFailures := Options{Rules: []Rule{strictAllocs, failures}, MinSamples: 4, Alpha: 0.05}
	for _, tc := range []struct {
		name       string
		base, head *Side
		opt        Options
		want       Outcome
		wantCode   int
		wantRow    Verdict // of the first row, if any
		wantText   string  // in the problems, the row's why, or the excluded points
	}{
		{name: "pass", base: mkSide("base", "lf", results.KindCapacity, m, six...), head: mkSide("head", "lf", results.KindCapacity, m, six...),
			opt: opts, want: Pass, wantCode: 0, wantRow: Same},
		{name: "two invalid points excluded, still decided", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, shift(six, 1)...).invalidate(2),
			opt:  opts, want: Regressed, wantCode: 1, wantRow: Regression, wantText: "head rep 1 invalid (the load generator's verdict on itself)"},
		{name: "three invalid points: too few samples", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, six...).invalidate(3),
			opt:  opts, want: Unsure, wantCode: 2, wantRow: Undecided, wantText: "too few valid samples: base 6, head 3 (4 needed)"},
		{name: "three samples each: the U test cannot decide",
			base: mkSide("base", "lf", results.KindCapacity, results.Capacity.Name, 100, 101, 99, 100, 102, 98).invalidate(3),
			head: mkSide("head", "lf", results.KindCapacity, results.Capacity.Name, 50, 51, 49, 50, 52, 48).invalidate(3),
			opt:  Options{Rules: []Rule{uCapacity}, MinSamples: 3, Alpha: 0.05},
			want: Unsure, wantCode: 2, wantRow: Undecided, wantText: "n=3+3: the smallest p the one-sided U test can give, 0.0500, is not below α/m = 0.0500"},
		{name: "three and five samples: the U test decides",
			base: mkSide("base", "lf", results.KindCapacity, results.Capacity.Name, 100, 101, 99, 100, 102, 98).invalidate(3),
			head: mkSide("head", "lf", results.KindCapacity, results.Capacity.Name, 50, 51, 49, 50, 52, 48).invalidate(1),
			opt:  Options{Rules: []Rule{uCapacity}, MinSamples: 3, Alpha: 0.05},
			want: Regressed, wantCode: 1, wantRow: Regression},
		{name: "regression outranks undecided",
			base: mkSide("base", "lf", results.KindCapacity, m, six...).add("np", results.KindCapacity, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, shift(six, 1)...).add("np", results.KindCapacity, m, 1, 1),
			opt:  opts, want: Regressed, wantCode: 1, wantRow: Regression},
		{name: "unavailable on one side", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: &Side{Label: "head", Unavailable: map[string]string{"lf": "io_uring_setup: operation not permitted"}},
			opt:  opts, want: Unsure, wantCode: 2, wantText: "lf is unavailable on the head side only: io_uring_setup"},
		{name: "unavailable on both sides",
			base: &Side{Label: "base", Unavailable: map[string]string{"lf": "no io_uring"}},
			head: &Side{Label: "head", Unavailable: map[string]string{"lf": "no io_uring"}},
			opt:  opts, want: Unsure, wantCode: 2, wantText: "unavailable on both sides"},
		{name: "measured on one side only", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: mkSide("head", "np", results.KindCapacity, m, six...),
			opt:  opts, want: Unsure, wantCode: 2, wantText: "lf was measured on the base side only"},
		{name: "a group on one side only", base: mkSide("base", "lf", results.KindCapacity, m, six...).add("lf", results.KindOpen, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, six...),
			opt:  opts, want: Unsure, wantCode: 2, wantText: "lf open 0.50 was measured on the base side only"},
		{name: "a server failure on the head is a regression", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, six...).serverFail(1),
			opt:  withFailures, want: Regressed, wantCode: 1, wantText: "the server failed 1 of 6 head points against 0 of 6 base points"},
		{name: "failures on both sides alike", base: mkSide("base", "lf", results.KindCapacity, m, six...).serverFail(1),
			head: mkSide("head", "lf", results.KindCapacity, m, six...).serverFail(1),
			opt:  withFailures, want: Pass, wantCode: 0},
		{name: "half the head crashed", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: func() *Side {
				s := mkSide("head", "lf", results.KindCapacity, m, six...)
				for i := range 3 {
					s.Points[i].Status, s.Points[i].Fault, s.Points[i].Valid = results.StatusFailed, ServerFault, false
					s.Points[i].Why = "the server (pid 7) exited during the point"
				}
				return s
			}(),
			opt: withFailures, want: Regressed, wantCode: 1, wantText: "head rep 0 failed by the server: the server (pid 7) exited"},
		{name: "generator-invalid points are not failures", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: mkSide("head", "lf", results.KindCapacity, m, six...).invalidate(2),
			opt:  withFailures, want: Pass, wantCode: 0},
		{name: "a rate missed while the host took the server's CPUs is not a failure", base: mkSide("base", "lf", results.KindCapacity, m, six...),
			head: func() *Side {
				s := mkSide("head", "lf", results.KindCapacity, m, six...)
				s.Points[1].Valid, s.Points[1].Fault, s.Points[1].Why = false, HostFault, "achieved 98.8% of the scheduled rate"
				return s
			}(),
			opt: withFailures, want: Pass, wantCode: 0, wantText: "head rep 1 invalid while the hypervisor took the server's CPUs (steal): achieved 98.8%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(tc.base, tc.head, tc.opt, "test")
			if r.Outcome != tc.want || r.ExitCode() != tc.wantCode {
				t.Errorf("outcome %s exit %d, want %s exit %d (problems %q)", r.Outcome, r.ExitCode(), tc.want, tc.wantCode, r.Problems)
			}
			var text []string
			text = append(text, r.Problems...)
			for _, row := range r.Rows {
				text = append(text, row.Why)
				text = append(text, row.Excluded...)
			}
			if tc.wantRow != "" {
				if len(r.Rows) == 0 {
					t.Fatalf("no rows, want a first row %s", tc.wantRow)
				}
				if r.Rows[0].Verdict != tc.wantRow {
					t.Errorf("first row %s, want %s", r.Rows[0].Verdict, tc.wantRow)
				}
			}
			if all := strings.Join(text, "\n"); !strings.Contains(all, tc.wantText) {
				t.Errorf("report text:\n%s\nwant it to contain %q", all, tc.wantText)
			}
		})
	}
}

// TestNotGated checks that a rule with MinRequests does not read points
// whose windows are too short: reported, neither gated nor undecided.
func TestNotGated(t *testing.T) {
	rule := Rule{Metric: results.AllocsPerReq, Kind: results.KindCapacity, Method: Strict, Abs: 0.05, MinRequests: 20000}
	base := mkSide("base", "lf", results.KindCapacity, rule.Metric.Name, 1, 1, 1, 1, 1, 1)
	head := mkSide("head", "lf", results.KindCapacity, rule.Metric.Name, 2, 2, 2, 2, 2, 2)
	for _, s := range []*Side{base, head} {
		for i := range s.Points {
			s.Points[i].Requests = 6700
		}
	}
	r := Compare(base, head, oneRule(rule), "test")
	if r.Rows[0].Verdict != NotGated || !strings.Contains(r.Rows[0].Why, "fewer than the 20000 requests") {
		t.Errorf("row %s (%q), want not gated", r.Rows[0].Verdict, r.Rows[0].Why)
	}
	if r.Outcome != Unsure { // nothing else was judged
		t.Errorf("outcome %s, want undecided (nothing gated)", r.Outcome)
	}
	for _, s := range []*Side{base, head} {
		for i := range s.Points {
			s.Points[i].Requests = 30000
		}
	}
	if r := Compare(base, head, oneRule(rule), "test"); r.Rows[0].Verdict != Regression {
		t.Errorf("with long enough windows: %s, want a regression", r.Rows[0].Verdict)
	}
}

// TestHolm checks the family-wise correction: three U-test rows whose
// samples are completely separated (one-sided p 0.0011 each at 6+6) all
// fail together, but a row with one overlap (p 0.0022), significant alone,
// is not among 24 rows (α/24 = 0.0021).
func TestHolm(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98}
	slow := scale(base, 0.8)
	mixed := []float64{80, 81, 99.5, 79, 82, 78} // one overlap
	mk := func(label string, a, b, c []float64) *Side {
		s := mkSide(label, "a", results.KindCapacity, results.Capacity.Name, a...)
		s.add("b", results.KindCapacity, results.Capacity.Name, b...)
		s.add("c", results.KindCapacity, results.Capacity.Name, c...)
		return s
	}
	opt := Options{Rules: []Rule{uCapacity}, MinSamples: 4, Alpha: 0.05}
	r := Compare(mk("base", base, base, base), mk("head", slow, slow, slow), opt, "test")
	if r.Outcome != Regressed || len(r.Regressions()) != 3 {
		t.Errorf("three separated rows: outcome %s, regressions %q, want all three", r.Outcome, r.Regressions())
	}
	alone := Compare(mkSide("base", "a", results.KindCapacity, results.Capacity.Name, base...),
		mkSide("head", "a", results.KindCapacity, results.Capacity.Name, mixed...), opt, "test")
	if alone.Outcome != Regressed {
		t.Fatalf("one overlapping row alone: %s (p %.4f), want a regression", alone.Outcome, alone.Rows[0].P)
	}
	many := []*Side{mkSide("base", "x", results.KindCapacity, results.Capacity.Name, base...), mkSide("head", "x", results.KindCapacity, results.Capacity.Name, mixed...)}
	for i := range 23 {
		name := fmt.Sprintf("r%d", i)
		many[0].add(name, results.KindCapacity, results.Capacity.Name, base...)
		many[1].add(name, results.KindCapacity, results.Capacity.Name, base...)
	}
	r = Compare(many[0], many[1], opt, "test")
	if r.Outcome != Pass {
		t.Errorf("the same row among 24: outcome %s (p %.4f, adjusted %.4f), want pass", r.Outcome, r.Rows[0].P, r.Rows[0].PAdj)
	}
	if got := r.Rows[0].PAdj; math.Abs(got-math.Min(1, 24*r.Rows[0].P)) > 1e-9 {
		t.Errorf("adjusted p %.5f, want 24 × %.5f", got, r.Rows[0].P)
	}
}

// TestTrimHighest checks that a latency row leaves out each side's
// highest repetition: one stalled repetition of the base does not hide a
// regression that moved every repetition of the head.
func TestTrimHighest(t *testing.T) {
	rule := Rule{Metric: results.LatencyP99, Kind: results.KindOpen, Method: UTest, MinEffect: 0.25, TrimHighest: 1}
	base := []float64{229e3, 296e3, 301e3, 343e3, 462e3, 493e3, 1308e3} // one stall of the machine
	head := []float64{1159e3, 1167e3, 1190e3, 1204e3, 1211e3, 1225e3, 4497e3}
	opt := Options{Rules: []Rule{rule}, MinSamples: 5, Alpha: 0.05}
	r := Compare(mkSide("base", "lf", results.KindOpen, rule.Metric.Name, base...), mkSide("head", "lf", results.KindOpen, rule.Metric.Name, head...), opt, "test")
	if row := r.Rows[0]; row.Verdict != Regression || row.Trimmed != 2 || row.Old.N != 6 {
		t.Errorf("row %s (p %.4f, trimmed %d, n %d), want a regression on 6+6", row.Verdict, row.P, row.Trimmed, row.Old.N)
	}
	untrimmed := rule
	untrimmed.TrimHighest = 0
	opt.Rules = []Rule{untrimmed}
	r = Compare(mkSide("base", "lf", results.KindOpen, rule.Metric.Name, base...), mkSide("head", "lf", results.KindOpen, rule.Metric.Name, head...), opt, "test")
	if p := r.Rows[0].P; p < 0.005 {
		t.Errorf("untrimmed p %.4f: the outlier should weaken the test (the point of trimming)", p)
	}
}

// TestFailed checks the report of a gate that could not measure: exit
// status 2 with the reason.
func TestFailed(t *testing.T) {
	r := Failed(Side{Label: "base"}, Side{Label: "head"}, "test", "the base HEAD~1 cannot be built: syntax error")
	if r.Outcome != Unsure || r.ExitCode() != 2 || len(r.Rows) != 0 {
		t.Errorf("outcome %s exit %d rows %d, want undecided, 2, none", r.Outcome, r.ExitCode(), len(r.Rows))
	}
	r = &Report{}
	r.decide()
	if r.ExitCode() != 2 {
		t.Errorf("an empty report exits %d, want 2 (it judged nothing)", r.ExitCode())
	}
}
