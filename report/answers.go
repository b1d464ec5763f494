package report

import (
	"fmt"
	"strconv"
	"strings"

	"concbench/plots"
	"concbench/results"
	"concbench/stats"
)

// answer is one line of the report's opening: for one metric, which
// configuration is best and by what factor it differs from each other.
type answer struct {
	Metric string // "Capacity", "p99 latency at 0.50 of capacity", …
	Text   string
}

// answerMetric is a summary metric the answers rank.
type answerMetric struct {
	label  string
	metric results.Metric
	group  func(name string) *results.Group
}

// answers fills the report's opening, before any table: per summary
// metric, the best configuration by median, and every other one's median
// as a factor of it with a 95% interval (stats.RatioCI), or "no
// significant difference" when that interval holds 1 — the one-line
// verdicts of hyperfine and benchstat. Only valid repetitions count, as
// everywhere in the report.
func (rep *report) answers(a *analysis) {
	if len(a.Configs) < 2 {
		return
	}
	// The answers rank every configuration of the run against every other:
	// across workloads that would set, say, one model under tiny work
	// against another under heavy work. A run of several workloads gets
	// the who-wins-where table (per workload) instead, and says so.
	if ws := a.SuiteWorkloads(); len(ws) > 1 {
		rep.AnswerNote = fmt.Sprintf("This run has %d workloads; its configurations are compared within each workload only "+
			"(the who-wins-where table above, and the summary below), not ranked against each other across workloads.", len(ws))
		if t := rep.Winners; t != nil {
			for _, w := range ws {
				text := "nothing decided"
				if ds := t.byWorkload[w.Name]; len(ds) > 0 {
					text = strings.Join(ds, "; ")
				}
				rep.Answers = append(rep.Answers, answer{Metric: w.Name, Text: text})
			}
			rep.AnswerNote += " Per workload, the cells of the table that are decided."
		}
		return
	}
	var ms []answerMetric
	ms = append(ms, answerMetric{label: "Capacity", metric: results.Capacity, group: a.Capacity})
	for _, f := range []float64{0.5, 0.9} {
		if frac, ok := results.NearestFraction(a.Groups, f); ok && !containsFraction(ms, frac) {
			frac := frac
			ms = append(ms, answerMetric{
				label:  fmt.Sprintf("p99 latency at %.2f of capacity", frac),
				metric: results.LatencyP99,
				group:  func(name string) *results.Group { return results.Find(a.Groups, name, results.KindOpen, frac) },
			})
		}
	}
	if a.HasLoad {
		for _, c := range []struct {
			m     results.Metric
			label string
		}{{results.CtxswPerReq, "Context switches per request"}, {results.CPUPerReq, "CPU time per request"}, {results.AllocsPerReq, "Allocations per request"}} {
			ms = append(ms, answerMetric{label: fmt.Sprintf("%s at %s", c.label, a.LoadText()), metric: c.m, group: a.AtLoad})
		}
	}
	for _, m := range ms {
		if line, ok := a.answerFor(m); ok {
			rep.Answers = append(rep.Answers, answer{Metric: m.label, Text: line})
		}
	}
	if len(rep.Answers) > 0 {
		rep.AnswerNote = "Medians of the valid repetitions, the best's with its 95% interval as in the Summary. A factor's interval is the 95% distribution-free interval of the ratio " +
			"(Hodges–Lehmann estimate, Moses interval: the order statistics of the ratios over all pairs of repetitions), each pair on its own; " +
			"\"no significant difference\" where it holds 1. Loads are fractions of each configuration's own capacity, so the latency lines compare " +
			"the configurations at the same utilization, not at the same request rate (the offered rates are in points.csv)."
	}
}

// containsFraction reports whether ms already ranks p99 at frac (0.5 and
// 0.9 can be nearest to the same measured fraction).
func containsFraction(ms []answerMetric, frac float64) bool {
	label := fmt.Sprintf("p99 latency at %.2f of capacity", frac)
	for _, m := range ms {
		if m.label == label {
			return true
		}
	}
	return false
}

// answerFor writes one metric's line: "leaderfollowers/lifo is highest,
// 50000 req/s: 1.04× [0.98, 1.10] leaderfollowers/fifo's (no significant
// difference) and 1.68× [1.60, 1.75] halfsynchalfreactive's." or
// "leaderfollowers/lifo is lowest, 242µs: netpoll's is 1.21× [1.15, 1.28]
// that and …".
// It reports false when fewer than two configurations have a valid value.
func (a *analysis) answerFor(m answerMetric) (string, bool) {
	type cand struct {
		name   string
		values []float64
		median float64
		stats  results.Stats
	}
	var cs []cand
	var none []string // configurations measured here without a valid value
	for _, cfg := range a.Configs {
		g := m.group(cfg.Name)
		if g == nil {
			continue
		}
		agg := g.Aggregate(m.metric)
		if agg.Stats.N == 0 {
			if len(g.Measured()) > 0 {
				none = append(none, cfg.Name)
			}
			continue
		}
		cs = append(cs, cand{name: cfg.Name, values: agg.Stats.Values, median: agg.Stats.Median, stats: agg.Stats})
	}
	if len(cs) < 2 {
		return "", false
	}
	higher := m.metric.HigherIsBetter
	best := 0
	for i, c := range cs {
		if (higher && c.median > cs[best].median) || (!higher && c.median < cs[best].median) {
			best = i
		}
	}
	b := cs[best]
	format := plots.TrimFloat
	if m.metric.Unit == "ns" {
		format = plots.FormatNs
	}
	unit := ""
	if m.metric.Unit != "ns" && m.metric.Unit != "" {
		unit = " " + m.metric.Unit
	}
	var parts []string
	// Configurations without a factor (a zero among the values) are named
	// once with the reason, not each with it.
	var noFactor []string
	noFactorWhy := ""
	for i, c := range cs {
		if i == best {
			continue
		}
		// The factor reads the same way in both directions: how many times
		// the best is the other (higher is better), or the other the best
		// (lower is better), so every factor is at least about 1.
		num, den := b.values, c.values
		if !higher {
			num, den = c.values, b.values
		}
		r := stats.RatioCI(num, den, results.Confidence)
		factor, note := "", ""
		switch {
		case !r.OK && r.Est > 0:
			factor = fmt.Sprintf("%s (no interval: %s)", factorText(r.Est), r.Why)
		case !r.OK:
			parts = append(parts, fmt.Sprintf("%s's is %s", c.name, format(c.median)+unit))
			noFactor = append(noFactor, c.name)
			noFactorWhy = r.Why
			continue
		case r.Significant():
			factor = factorCI(r)
		default:
			factor = factorCI(r)
			note = " (no significant difference)"
		}
		if higher {
			parts = append(parts, fmt.Sprintf("%s %s's%s", factor, c.name, note))
		} else {
			parts = append(parts, fmt.Sprintf("%s's is %s that%s", c.name, factor, note))
		}
	}
	word := "lowest"
	if higher {
		word = "highest"
	}
	line := fmt.Sprintf("%s is %s, %s: %s.", b.name, word, plots.StatText(b.stats, m.metric.Unit), plots.JoinAnd(parts))
	if len(noFactor) > 0 {
		line += fmt.Sprintf(" No factor for %s: %s.", plots.JoinAnd(noFactor), noFactorWhy)
	}
	if len(none) > 0 {
		line += fmt.Sprintf(" No valid repetition: %s.", plots.JoinAnd(none))
	}
	return line, true
}

// factorText writes a ratio estimate as a factor: "1.21×".
func factorText(x float64) string { return factorNum(x) + "×" }

// factorCI is a ratio with its interval: "1.32× [1.2, 1.45]".
func factorCI(r stats.Ratio) string {
	return fmt.Sprintf("%s [%s, %s]", factorText(r.Est), factorNum(r.Lo), factorNum(r.Hi))
}

// factorNum writes a factor with 3 significant digits, or 4 decimals where
// 3 digits would round it to 1 (an interval bound of 1.002 must not read
// as 1, which would say the opposite of the significance).
func factorNum(x float64) string {
	s := plots.TrimFloat(x)
	if s == "1" && x != 1 {
		s = strconv.FormatFloat(x, 'f', 4, 64)
	}
	return s
}
