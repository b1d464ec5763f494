package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"concbench/results"
	"concbench/stats"
)

// Verdict is the judgement of one row.
type Verdict string

// The row verdicts.
const (
	Same       Verdict = "~"          // no significant change, or within the tolerance
	Better     Verdict = "better"     // a change beyond the threshold in the good direction (never fails)
	Regression Verdict = "REGRESSION" // a change beyond the threshold in the bad direction
	Undecided  Verdict = "undecided"  // the row cannot be judged (too few valid samples)
	NotGated   Verdict = "not gated"  // reported only: the metric is too coarse at this load (Rule.MinRequests)
)

// Outcome is the gate's result.
type Outcome string

// The outcomes and their exit statuses (ExitCode).
const (
	Pass      Outcome = "pass"       // exit 0
	Regressed Outcome = "regression" // exit 1
	Unsure    Outcome = "undecided"  // exit 2: the gate could not decide, never a silent pass
)

// Row is one configuration × load × metric of the report.
type Row struct {
	Config   string       `json:"config"`
	Kind     results.Kind `json:"kind"`
	Fraction float64      `json:"fraction"`
	Metric   string       `json:"metric"` // results.Metric.Name
	Label    string       `json:"label"`
	Unit     string       `json:"unit"`
	Method   Method       `json:"method"`
	// Threshold is the rule's bound, as printed ("≥5%", "±0.05").
	Threshold string `json:"threshold"`
	// Old and New summarize the base's and the head's valid samples (the
	// median and its 95 % confidence interval, ±Inf when too small).
	Old, New results.Stats `json:"-"`
	// Delta is the relative change of the medians (new − old) / |old|,
	// AbsDelta the absolute one; P the one-sided U test's p-value for a
	// change in the bad direction and PAdj its Holm-adjusted value (UTest
	// rows).
	Delta, AbsDelta, P, PAdj float64 `json:"-"`
	// MinEffect is a UTest row's minimum effect.
	MinEffect float64 `json:"min_effect,omitempty"`
	// PShift is a Tolerance row's one-sided U test p-value for a shift in
	// the bad direction (NaN for the other methods): a change beyond the
	// tolerance fails only when the test says it is not the metric's
	// spread (PShift < Alpha).
	PShift float64 `json:"-"`
	// Trimmed counts the values left out of the two samples
	// (Rule.TrimHighest).
	Trimmed int `json:"trimmed,omitempty"`
	// bad is the change of the medians in the bad direction, and pBetter
	// the one-sided p-value of a change in the good direction (UTest
	// rows, between judge and judgeUTests).
	bad, pBetter float64
	Verdict      Verdict `json:"verdict"`
	// Why explains an undecided row, or a significant change that the
	// minimum effect size kept from failing the gate.
	Why string `json:"why,omitempty"`
	// Excluded lists the points left out of either sample, and why.
	Excluded []string `json:"excluded,omitempty"`
	// Warnings are the statistics libraries' warnings about the samples.
	Warnings []string `json:"warnings,omitempty"`
}

// Report is the gate's judgement.
type Report struct {
	Outcome Outcome `json:"outcome"`
	// Mode says what was compared and how.
	Mode string `json:"mode"`
	// Alpha is the family-wise error rate of the U-test rows.
	Alpha float64 `json:"alpha"`
	Base  Side    `json:"base"`
	Head  Side    `json:"head"`
	Rows  []Row   `json:"rows"`
	// Problems are why the gate could not decide beyond undecided rows:
	// a build that failed, a model unavailable on one side, a baseline
	// measured with another setup, ….
	Problems []string `json:"problems,omitempty"`
	// Notes are facts the reader needs (who generated the load, points
	// excluded, provenance differences).
	Notes []string `json:"notes,omitempty"`
}

// ExitCode is the gate's exit status: 0 pass, 1 regression, 2 undecided.
func (r *Report) ExitCode() int {
	switch r.Outcome {
	case Pass:
		return 0
	case Regressed:
		return 1
	}
	return 2
}

// Regressions returns one line per regression row, naming the
// configuration, the load and the metric.
func (r *Report) Regressions() []string {
	var out []string
	for i := range r.Rows {
		if row := &r.Rows[i]; row.Verdict == Regression {
			name := row.Label
			if row.Metric == results.Capacity.Name {
				name = "throughput"
			}
			out = append(out, fmt.Sprintf("%s %s: %s %s", row.Config, results.LoadLabel(row.Kind, row.Fraction), name, row.deltaText()))
		}
	}
	return out
}

// decide sets the outcome from the rows and problems: any regression
// fails the gate (1); otherwise any undecided row or problem makes it
// undecided (2); otherwise it passes (0). A gate without a single gated
// row is undecided: it judged nothing.
func (r *Report) decide() {
	gated := 0
	undecided := len(r.Problems) > 0
	for i := range r.Rows {
		switch r.Rows[i].Verdict {
		case Regression:
			r.Outcome = Regressed
			return
		case Undecided:
			undecided = true
		case Same, Better:
			gated++
		}
	}
	if gated == 0 && !undecided {
		r.Problems = append(r.Problems, "nothing was judged: no configuration has a gated metric on both sides")
		undecided = true
	}
	if undecided {
		r.Outcome = Unsure
		return
	}
	r.Outcome = Pass
}

// AddProblem records why the gate cannot decide and updates the outcome.
func (r *Report) AddProblem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	r.decide()
}

// Failed returns a report that decided nothing, for the reasons given (a
// build or a run that failed before anything could be compared).
func Failed(base, head Side, mode string, problems ...string) *Report {
	r := &Report{Mode: mode, Base: base, Head: head, Problems: problems}
	r.decide()
	return r
}

// Compare judges head against base under opt and returns the report.
// Configurations are taken in base's order (head's others follow); each
// configuration's groups (capacity, then each open-loop fraction) are
// judged by every rule of their kind. The U-test rows are judged last,
// together: significance is decided by Holm's step-down procedure over all
// of them, so that the run's family-wise error rate is opt.Alpha.
func Compare(base, head *Side, opt Options, mode string) *Report {
	r := &Report{Mode: mode, Base: *base, Head: *head, Alpha: opt.Alpha}
	r.Base.Points, r.Head.Points = nil, nil // the rows carry the samples
	names := base.configs()
	for _, n := range head.configs() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		r.compareConfig(name, base, head, &opt)
	}
	r.judgeUTests(&opt)
	r.decide()
	return r
}

// compareConfig judges configuration name's groups, each by every rule
// of its kind (opt), or notes in r.Problems why it cannot: unavailable,
// or measured on one side only.
func (r *Report) compareConfig(name string, base, head *Side, opt *Options) {
	ub, inBaseU := base.Unavailable[name]
	uh, inHeadU := head.Unavailable[name]
	bgs, hgs := base.groups(name), head.groups(name)
	switch {
	case inBaseU && inHeadU:
		r.Problems = append(r.Problems, fmt.Sprintf("%s is unavailable on both sides, so it was not judged (%s: %s)", name, base.Label, ub))
		return
	case inBaseU:
		r.Problems = append(r.Problems, fmt.Sprintf("%s is unavailable on the %s side only: %s", name, base.Label, ub))
		return
	case inHeadU:
		r.Problems = append(r.Problems, fmt.Sprintf("%s is unavailable on the %s side only: %s", name, head.Label, uh))
		return
	case len(bgs) == 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s was measured on the %s side only", name, head.Label))
		return
	case len(hgs) == 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s was measured on the %s side only", name, base.Label))
		return
	}
	for _, bg := range bgs {
		hg := findGroup(hgs, bg.kind, bg.fraction)
		if hg == nil {
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s was measured on the %s side only", name, results.LoadLabel(bg.kind, bg.fraction), base.Label))
			continue
		}
		for i := range opt.Rules {
			if rule := &opt.Rules[i]; rule.applies(bg.kind, bg.fraction) {
				r.Rows = append(r.Rows, judge(name, bg, hg, rule, opt, base.Label, head.Label))
			}
		}
	}
	for _, hg := range hgs {
		if findGroup(bgs, hg.kind, hg.fraction) == nil {
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s was measured on the %s side only", name, results.LoadLabel(hg.kind, hg.fraction), head.Label))
		}
	}
}

// judge applies rule to one group's samples on both sides. A U-test row
// gets its p-value here; its verdict waits for judgeUTests.
func judge(config string, bg, hg *group, rule *Rule, opt *Options, baseLabel, headLabel string) Row {
	m := rule.Metric
	row := Row{Config: config, Kind: bg.kind, Fraction: bg.fraction, Metric: m.Name, Label: m.Label, Unit: m.Unit,
		Method: rule.Method, Threshold: rule.threshold(), MinEffect: rule.MinEffect,
		Delta: math.NaN(), AbsDelta: math.NaN(), P: math.NaN(), PAdj: math.NaN(), PShift: math.NaN()}
	bs, hs := sampleOf(bg, m.Name, rule.MinRequests), sampleOf(hg, m.Name, rule.MinRequests)
	if rule.Method == Failures {
		return judgeFailures(row, bg, hg, bs, hs, baseLabel, headLabel)
	}
	for _, e := range bs.excluded {
		row.Excluded = append(row.Excluded, baseLabel+" "+e)
	}
	for _, e := range hs.excluded {
		row.Excluded = append(row.Excluded, headLabel+" "+e)
	}
	if t := rule.TrimHighest; t > 0 {
		for _, s := range []*sample{&bs, &hs} {
			if len(s.values) >= opt.MinSamples+t {
				s.values = slices.Sorted(slices.Values(s.values))[:len(s.values)-t]
				row.Trimmed += t
			}
		}
	}
	row.Old, row.New = results.Summarize(bs.values), results.Summarize(hs.values)
	row.setDelta()
	if (row.Old.N == 0 && bs.short > 0) || (row.New.N == 0 && hs.short > 0) {
		row.Verdict = NotGated
		row.Why = fmt.Sprintf("not gated: the windows hold fewer than the %d requests this metric needs to be exact", rule.MinRequests)
		return row
	}
	if n := opt.MinSamples; row.Old.N < n || row.New.N < n {
		row.Why = fmt.Sprintf("too few valid samples: %s %d, %s %d (%d needed)", baseLabel, row.Old.N, headLabel, row.New.N, n)
		row.Verdict = Undecided
		return row
	}

	// bad is the size of the change in the bad direction (negative: an
	// improvement).
	bad := row.AbsDelta
	if !rule.lowerIsBetter() {
		bad = -bad
	}
	switch rule.Method {
	case Strict, Tolerance:
		row.judgeThreshold(rule, opt, bs.values, hs.values, bad)
	case UTest:
		// One-sided, in the bad direction: only a regression fails.
		worse, better := stats.MannWhitneyGreater(bs.values, hs.values), stats.MannWhitneyGreater(hs.values, bs.values)
		if !rule.lowerIsBetter() {
			worse, better = better, worse
		}
		row.P, row.pBetter = worse, better
		row.bad = bad
	default:
		row.Verdict = Undecided
		row.Why = fmt.Sprintf("unknown method %q", rule.Method)
	}
	return row
}

// setDelta sets the row's change of the medians, absolute and relative
// (±Inf from a zero median), when both sides have one.
func (row *Row) setDelta() {
	if row.Old.N > 0 && row.New.N > 0 {
		row.AbsDelta = row.New.Median - row.Old.Median
		switch {
		case row.Old.Median != 0:
			row.Delta = row.AbsDelta / math.Abs(row.Old.Median)
		case row.AbsDelta == 0:
			row.Delta = 0
		default:
			row.Delta = math.Copysign(math.Inf(1), row.AbsDelta)
		}
	}
}

// judgeThreshold judges a Strict or Tolerance row from the base's and the
// head's values (before, after) and bad, the size of the change in the bad
// direction: a regression beyond the rule's bound, which for Tolerance
// the one-sided U test must confirm as a shift.
func (row *Row) judgeThreshold(rule *Rule, opt *Options, before, after []float64, bad float64) {
	tol := rule.Abs
	if rule.Method == Tolerance {
		tol += rule.Rel * math.Abs(row.Old.Median)
	}
	shifted := true
	if rule.Method == Tolerance {
		// Note: the medians alone were not enough. Context switches
		// per request at Leader/Followers' capacity on one CPU spread
		// so widely within one side of a no-change run that a median
		// moved by that spread failed the tolerance (docs/findings.md,
		// "A no-change failure on context switches"). A regression
		// shifts every repetition (the injected hand-off: no overlap),
		// so a one-sided U test at Alpha, uncorrected — the tolerance
		// is the criterion, the test only confirms a shift — keeps it.
		worse := stats.MannWhitneyGreater(before, after)
		if !rule.lowerIsBetter() {
			worse = stats.MannWhitneyGreater(after, before)
		}
		row.PShift = worse
		shifted = worse < opt.Alpha
	}
	switch {
	case bad > tol && shifted:
		row.Verdict = Regression
	case bad > tol:
		row.Verdict = Same
		row.Why = fmt.Sprintf("beyond the tolerance, but within the metric's spread (one-sided U test p=%.4f, not below %.2f)", row.PShift, opt.Alpha)
	case bad < -tol:
		row.Verdict = Better
	default:
		row.Verdict = Same
	}
}

// judgeFailures judges the Failures row of a group: the points the server
// failed on each side. Any more on the head side is a regression; the
// row is undecided when either side has fewer than half of its points
// measured at all, so that a comparison of scraps never passes.
func judgeFailures(row Row, bg, hg *group, bs, hs sample, baseLabel, headLabel string) Row {
	row.Old = results.Summarize([]float64{float64(bs.server)})
	row.New = results.Summarize([]float64{float64(hs.server)})
	row.AbsDelta = float64(hs.server - bs.server)
	for _, e := range hs.excluded {
		if strings.Contains(e, "failed by the server") {
			row.Excluded = append(row.Excluded, headLabel+" "+e)
		}
	}
	for _, e := range bs.excluded {
		if strings.Contains(e, "failed by the server") {
			row.Excluded = append(row.Excluded, baseLabel+" "+e)
		}
	}
	switch {
	case hs.server > bs.server:
		row.Verdict = Regression
		row.Why = fmt.Sprintf("the server failed %d of %d %s points against %d of %d %s points", hs.server, len(hg.points), headLabel, bs.server, len(bg.points), baseLabel)
	case hs.server < bs.server:
		row.Verdict = Better
	default:
		row.Verdict = Same
	}
	return row
}

// judgeUTests decides the U-test rows together. Holm's step-down
// procedure (stats.Holm) over the one-sided p-values for a change in the
// bad direction: sort the m p-values ascending; the i-th (from 0) is
// significant if it and every smaller one is below Alpha/(m−i), so that
// the probability of any false regression in the run is at most Alpha.
// A row whose samples could not reach significance even as the smallest
// of the family (its smallest possible p at least Alpha/m) is undecided,
// never "~". A significant row fails only with at least its minimum
// effect in the bad direction. A change of at least the minimum effect
// in the good direction, significant one-sided at Alpha by itself, is
// reported as an improvement (never a failure, so not part of the
// family).
func (r *Report) judgeUTests(opt *Options) {
	var idx []int
	for i := range r.Rows {
		if row := &r.Rows[i]; row.Method == UTest && row.Verdict == "" {
			idx = append(idx, i)
		}
	}
	m := len(idx)
	if m == 0 {
		return
	}
	ps := make([]float64, m)
	for k, i := range idx {
		ps[k] = r.Rows[i].P
	}
	adj, sig := stats.Holm(ps, opt.Alpha)
	for k, i := range idx {
		row := &r.Rows[i]
		row.PAdj = adj[k]
		significant := sig[k]
		if pmin := stats.MannWhitneyMinP(row.Old.N, row.New.N); pmin >= opt.Alpha/float64(m) {
			// Not "~": a test that cannot reject would pass silently.
			row.Verdict = Undecided
			row.Why = fmt.Sprintf("n=%d+%d: the smallest p the one-sided U test can give, %.4f, is not below α/m = %.4f (family-wise α %g over %d U tests)",
				row.Old.N, row.New.N, pmin, opt.Alpha/float64(m), opt.Alpha, m)
			continue
		}
		effect := math.Abs(row.Delta)
		switch {
		case row.bad < 0 && effect >= row.MinEffect && row.pBetter < opt.Alpha:
			row.Verdict = Better
		case !significant:
			row.Verdict = Same
		case effect < row.MinEffect || row.bad <= 0:
			row.Verdict = Same
			row.Why = fmt.Sprintf("significant (p=%.4f, Holm-adjusted %.4f) but %.1f%% is below the minimum effect %.0f%%", row.P, row.PAdj, 100*effect, 100*row.MinEffect)
		default:
			row.Verdict = Regression
		}
	}
}

// deltaText is the row's change as printed: relative for U-test rows,
// absolute in the metric's unit for the others.
func (row *Row) deltaText() string {
	if math.IsNaN(row.AbsDelta) {
		return "n/a"
	}
	if row.Method == UTest {
		return fmtPercent(row.Delta)
	}
	s := fmtUnit(row.Unit, math.Abs(row.AbsDelta))
	switch {
	case row.AbsDelta > 0:
		return "+" + s
	case row.AbsDelta < 0:
		return "-" + s
	}
	return "0"
}

// verdictText is the row's verdict as printed.
func (row *Row) verdictText() string {
	switch row.Verdict {
	case Regression:
		return "**REGRESSION**"
	case Better:
		if row.Method == UTest {
			return fmt.Sprintf("+%.1f%% better", 100*math.Abs(row.Delta))
		}
		return "better"
	}
	return string(row.Verdict)
}

func fmtPercent(d float64) string {
	switch {
	case math.IsNaN(d):
		return "n/a"
	case math.IsInf(d, 1):
		return "+∞%"
	case math.IsInf(d, -1):
		return "-∞%"
	}
	return fmt.Sprintf("%+.1f%%", 100*d)
}

// fmtValue formats v in m's unit with the precision that unit needs.
func fmtValue(m results.Metric, v float64) string { return fmtUnit(m.Unit, v) }

// fmtUnit formats v in unit with the precision that unit needs.
func fmtUnit(unit string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case unit == "ns":
		return fmtNs(v)
	case unit == "req/s":
		if math.Abs(v) >= 1000 {
			return fmt.Sprintf("%.1fk", v/1000)
		}
		return fmt.Sprintf("%.0f", v)
	case unit == "B/req":
		return fmt.Sprintf("%.1f", v)
	case strings.HasSuffix(unit, "/req"):
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// fmtNs formats a latency with three significant digits: "812ns",
// "45.1µs", "1.23ms".
func fmtNs(ns float64) string {
	v, unit := ns, "ns"
	for _, u := range []string{"µs", "ms", "s"} {
		if math.Abs(v) < 1000 {
			break
		}
		v, unit = v/1000, u
	}
	switch {
	case unit == "ns":
		return fmt.Sprintf("%.0f%s", v, unit)
	case math.Abs(v) < 10:
		return fmt.Sprintf("%.2f%s", v, unit)
	case math.Abs(v) < 100:
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}
