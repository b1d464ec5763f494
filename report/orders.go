package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"concbench/models"
	"concbench/plots"
	"concbench/results"
	"concbench/stats"
)

// The promotion orders, as Leader/Followers' --promotion flag names them;
// they must match leaderfollowers.Promotion's text form.
const (
	orderLIFO     = "lifo"
	orderFIFO     = "fifo"
	orderPriority = "priority"
	orderOS       = "os"
	orderOSVacant = "os-vacant"
)

// OrdersAlpha is the "Promotion orders" section's family-wise error rate:
// Holm's procedure over every test of one group of orders.
const OrdersAlpha = 0.05

// ordersSection is the report's "Promotion orders" section: for each
// group of Leader/Followers configurations that differ only in their
// promotion order (under one workload), a table per order at the chosen
// load and computed verdicts comparing each order with fifo.
type ordersSection struct {
	Load   string
	Groups []ordersGroup
	Notes  []string
}

// ordersGroup is one workload's Leader/Followers orders.
type ordersGroup struct {
	Name     string // e.g. "leaderfollowers/cpu"
	Head     []string
	Rows     [][]string
	Verdicts []string
}

// orderMetric is one column of an orders table: a value per valid
// repetition of a configuration's group at the chosen load.
type orderMetric struct {
	head  string
	short string // in a verdict
	unit  string // "ns" for latencies (FormatStat)
	// values returns the metric's values over g's trusted repetitions.
	values func(g *results.Group) []float64
	// optional metrics are shown only when some order has them (counters
	// that older runs lack).
	optional bool
	// untested metrics are shown for reading, not tested against fifo:
	// the verdicts' family of tests is the other metrics'.
	untested bool
}

// aggregated is a metric of results whose values are Aggregate's.
func aggregated(m results.Metric) func(g *results.Group) []float64 {
	return func(g *results.Group) []float64 { return g.Aggregate(m).Stats.Values }
}

var orderMetrics = []orderMetric{
	{head: "busiest thread's share of events (%)", short: "busiest thread's share", values: busiestShares},
	{head: "promotions per event (%)", short: "promotions per event", values: promotionsPerEvent},
	{head: "longest-waiting follower promoted (% of promotions with a choice)", short: longestShort, values: longestPromoted, optional: true},
	{head: "ctxsw/req", short: "ctxsw/req", values: aggregated(results.CtxswPerReq)},
	{head: "CPU µs/req", short: "CPU/req", values: aggregated(results.CPUPerReq)},
	{head: "p50", short: "p50", unit: "ns", values: aggregated(results.LatencyP50), untested: true},
	{head: "p99", short: "p99", unit: "ns", values: aggregated(results.LatencyP99)},
	{head: "os re-waits (% of promotions)", short: "os re-waits", values: osRewaits, optional: true, untested: true},
	{head: "vacancy rejoins (% of events)", short: "vacancy rejoins", values: vacancyRejoins, optional: true, untested: true},
}

// longestShort is the short name of the longest-waiting metric, which the
// os order's verdict quotes.
const longestShort = "longest-waiting promoted"

// busiestShares returns, per trusted repetition of g, the busiest
// thread's share of the handle-set events in %.
func busiestShares(g *results.Group) []float64 {
	shares, _ := plots.ThreadShares(plots.Trusted(g))
	out := make([]float64, 0, len(shares))
	for _, s := range shares {
		out = append(out, s[0])
	}
	return out
}

// promotionsPerEvent returns, per trusted repetition of g, the share (%)
// of the events after which the leader woke a parked follower (the rest
// found no follower, and the next thread to rejoin led without parking).
func promotionsPerEvent(g *results.Group) []float64 {
	var out []float64
	for _, p := range plots.Trusted(g) {
		var ev, pr uint64
		for _, t := range p.Server.PerThread {
			ev += t.Events
			pr += t.Promotions
		}
		if ev > 0 {
			out = append(out, 100*float64(pr)/float64(ev))
		}
	}
	return out
}

// longestPromoted returns, per trusted repetition of g that has the
// model's promotion-order counters, the share (%) of the promotions made
// with two or more followers waiting that promoted the follower that had
// waited longest.
func longestPromoted(g *results.Group) []float64 {
	var out []float64
	for _, p := range plots.Trusted(g) {
		if c := p.Server.Counters["promotions_with_choice"]; c > 0 {
			out = append(out, 100*float64(p.Server.Counters["promoted_longest_waiting"])/float64(c))
		}
	}
	return out
}

// osRewaits returns, per trusted repetition of g that has the os order's
// os_rewaits counter, the followers that came back from the futex wait
// without the leader role and waited again, in % of the promotions (the
// grant protocol's cost that fifo does not pay).
func osRewaits(g *results.Group) []float64 {
	return counterPercent(g, "os_rewaits", func(t models.ThreadStats) uint64 { return t.Promotions })
}

// vacancyRejoins returns, per trusted repetition of g that has the
// os-vacant order's vacancy_rejoins counter, the vacant roles a rejoining
// thread took before the woken follower, in % of the events (each event
// follows one promotion).
func vacancyRejoins(g *results.Group) []float64 {
	return counterPercent(g, "vacancy_rejoins", func(t models.ThreadStats) uint64 { return t.Events })
}

// counterPercent returns, per trusted repetition of g whose model has the
// counter name, its value in % of per summed over the threads (where
// that sum is not 0).
func counterPercent(g *results.Group, name string, per func(models.ThreadStats) uint64) []float64 {
	var out []float64
	for _, p := range plots.Trusted(g) {
		n, ok := p.Server.Counters[name]
		if !ok {
			// A counter that did not move in the window is left out of
			// the deltas; the model has it if it has an end value.
			_, ok = p.Server.CountersAtEnd[name]
		}
		var d uint64
		for _, t := range p.Server.PerThread {
			d += per(t)
		}
		if ok && d > 0 {
			out = append(out, 100*float64(n)/float64(d))
		}
	}
	return out
}

// promotionOrder returns the --promotion value of a Leader/Followers
// configuration's arguments (the model's default, lifo, without one).
func promotionOrder(args []string) string {
	order := orderLIFO
	for i, a := range args {
		switch {
		case (a == "--promotion" || a == "-promotion") && i+1 < len(args):
			order = args[i+1]
		case strings.HasPrefix(a, "--promotion="), strings.HasPrefix(a, "-promotion="):
			order = a[strings.Index(a, "=")+1:]
		}
	}
	return order
}

// orderKey names the group of a configuration: its name without the
// segment that names its order ("leaderfollowers/os/cpu" →
// "leaderfollowers/cpu").
func orderKey(name, order string) string {
	segs := strings.Split(name, "/")
	out := segs[:0]
	for _, s := range segs {
		if s != order {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return plots.ModelLF
	}
	return strings.Join(out, "/")
}

// orderRank sorts the orders as the model's documentation lists them.
func orderRank(o string) int {
	if i := slices.Index([]string{orderLIFO, orderFIFO, orderPriority, orderOS, orderOSVacant}, o); i >= 0 {
		return i
	}
	return 99
}

// orders computes the section, or nil when no workload of the run has
// two or more Leader/Followers promotion orders measured at the chosen
// load.
func (a *analysis) orders() *ordersSection {
	if !a.HasLoad {
		return nil
	}
	type entry struct {
		order string
		name  string
		g     *results.Group
	}
	groups := map[string][]entry{}
	var keys []string
	for _, cfg := range a.Configs {
		if cfg.Model != plots.ModelLF {
			continue
		}
		g := a.AtLoad(cfg.Name)
		if g == nil {
			continue
		}
		o := promotionOrder(cfg.Args)
		k := orderKey(cfg.Name, o)
		if !slices.ContainsFunc(groups[k], func(e entry) bool { return e.order == o }) {
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], entry{o, cfg.Name, g})
		}
	}
	s := &ordersSection{Load: a.LoadText()}
	for _, k := range keys {
		es := groups[k]
		if len(es) < 2 {
			continue
		}
		slices.SortStableFunc(es, func(x, y entry) int { return cmp.Compare(orderRank(x.order), orderRank(y.order)) })
		og := ordersGroup{Name: k, Head: []string{"order", "configuration", "threads", "n"}}
		var ms []orderMetric
		for _, m := range orderMetrics {
			if !m.optional || slices.ContainsFunc(es, func(e entry) bool { return len(m.values(e.g)) > 0 }) {
				ms = append(ms, m)
				og.Head = append(og.Head, m.head)
			}
		}
		vals := map[string][][]float64{} // order → per metric
		for _, e := range es {
			threads := "—"
			if e.g.Config.Threads > 0 {
				threads = fmt.Sprint(e.g.Config.Threads)
			}
			row := []string{e.order, e.name, threads, fmt.Sprint(len(plots.Trusted(e.g)))}
			for _, m := range ms {
				v := m.values(e.g)
				vals[e.order] = append(vals[e.order], v)
				row = append(row, fmtBand(results.Summarize(v), m.unit))
			}
			og.Rows = append(og.Rows, row)
		}
		og.Verdicts = orderVerdicts(vals, ms, es[0].g.Config.Threads)
		s.Groups = append(s.Groups, og)
	}
	if len(s.Groups) == 0 {
		return nil
	}
	if !a.Equal {
		s.Notes = append(s.Notes, "The load is a fraction of each configuration's own capacity, so the orders' absolute rates differ as their capacities do; a suite run (harness RatesFromSlowest) compares them at one absolute rate.")
	}
	s.Notes = append(s.Notes, []string{
		"Each cell: the median over the valid repetitions with its 95% confidence interval in brackets, or, with fewer than 6 repetitions (too few for that interval), their range marked \"range\". Shares rank the threads by their events in each repetition (thread ids differ between runs); promotions per event is the share of events after which the leader woke a parked follower that then led (the others found no follower, so the next thread to finish led without sleeping, or, in os-vacant order, a rejoining thread took the vacant role first); the longest-waiting share (the model's promoted_longest_waiting over promotions_with_choice, where the run has them) is which follower a promotion chose: 100% is FIFO's choice by construction, 0% LIFO's, and os's shows the kernel's wake order. p50, os re-waits (followers the kernel woke that found the leader role taken and waited again at the queue's tail, per promotion; where the run has the counter) and vacancy rejoins (os-vacant: vacant roles a rejoining thread took before the woken follower, per event) are shown, not tested.",
		fmt.Sprintf("Verdicts: each order against fifo, per metric, by the two-sided Welch t-test on the logarithms of the repetitions, the p-values adjusted by Holm's procedure over the group's tests (family-wise α %g); the ratio is the Hodges–Lehmann estimate with its 95%% interval (stats.RatioCI). \"No significant difference\" is a result: with few repetitions it bounds, not excludes, a small effect.", OrdersAlpha),
	}...)
	return s
}

// orderVerdicts compares every order with fifo, metric by metric, and
// writes a paragraph per order: the computed verdict, then the fixed
// explanation of what the order does.
func orderVerdicts(vals map[string][][]float64, ms []orderMetric, threads int) []string {
	if _, ok := vals[orderFIFO]; !ok {
		return []string{"No fifo configuration at this load: the orders are not tested (fifo is the reference)."}
	}
	var others []string
	for _, o := range []string{orderOS, orderOSVacant, orderLIFO, orderPriority} {
		if _, ok := vals[o]; ok {
			others = append(others, o)
		}
	}
	tested := make([]bool, len(ms))
	for mi := range ms {
		tested[mi] = !ms[mi].untested
	}
	tests := results.CompareOrders(vals, orderFIFO, others, tested, OrdersAlpha)
	var out []string
	for _, o := range others {
		var diff, same, untested []string
		for _, t := range tests {
			if t.Order != o {
				continue
			}
			m := ms[t.Metric].short
			switch {
			case math.IsNaN(t.P):
				untested = append(untested, fmt.Sprintf("%s (%s)", m, t.Why))
			case t.Sig:
				diff = append(diff, fmt.Sprintf("%s %s of fifo's (p%s, Holm%s)", m, orderRatio(t.Ratio), pText(t.P), pText(t.Adj)))
			default:
				same = append(same, fmt.Sprintf("%s %s (p%s)", m, orderRatio(t.Ratio), pText(t.P)))
			}
		}
		var b strings.Builder
		if len(diff) == 0 {
			fmt.Fprintf(&b, "**%s vs fifo: no significant difference**", o)
		} else {
			fmt.Fprintf(&b, "**%s differs from fifo** in %s", o, plots.JoinAnd(diff))
		}
		if len(same) > 0 {
			if len(diff) == 0 {
				fmt.Fprintf(&b, ": %s", plots.JoinAnd(same))
			} else {
				fmt.Fprintf(&b, "; not in %s", plots.JoinAnd(same))
			}
		}
		if len(untested) > 0 {
			fmt.Fprintf(&b, "; untested: %s", plots.JoinAnd(untested))
		}
		b.WriteString(". ")
		concentrated := false
		if st := results.Summarize(vals[o][0]); threads > 0 && st.N > 0 {
			concentrated = st.Median >= 1.5*100/float64(threads)
		}
		b.WriteString(orderExplanation(o, len(diff) > 0, results.BusiestVerdict(tests, o), concentrated, threads))
		if i := slices.IndexFunc(ms, func(m orderMetric) bool { return m.short == longestShort }); (o == orderOS || o == orderOSVacant) && i >= 0 {
			if st := results.Summarize(vals[o][i]); st.N > 0 {
				fmt.Fprintf(&b, " The model's counters: %s promoted the longest-waiting follower in %s%% (median; range %s–%s%%) of its promotions with two or more followers waiting.",
					o, plots.TrimFloat(st.Median), plots.TrimFloat(st.Min), plots.TrimFloat(st.Max))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// orderRatio writes an order's ratio to fifo's: "1.04× [0.98, 1.10]".
func orderRatio(r stats.Ratio) string {
	switch {
	case r.OK:
		return factorCI(r)
	case r.Est > 0:
		return factorText(r.Est) + " (no interval)"
	}
	return "no ratio"
}

// orderExplanation is the fixed text on what order o does on Linux,
// chosen by the computed verdicts: differs (any metric significant) and
// busiest (the busiest thread's share against fifo's: +1 larger, -1
// smaller, 0 not told apart); concentrated says that o's median busiest
// share is at least 1.5 times the uniform share 1/threads.
func orderExplanation(o string, differs bool, busiest int, concentrated bool, threads int) string {
	uniform := ""
	if threads > 0 {
		uniform = fmt.Sprintf(" (uniform: %.0f%%)", 100/float64(threads))
	}
	switch o {
	case orderOS:
		why := "Why they should not differ: in os order the followers sleep on one futex word and FUTEX_WAKE wakes one of them. Linux queues a futex's waiters on a priority list (plist) in the futex's hash bucket with priority min(normal_prio, MAX_RT_PRIO) — every thread that is not real-time, whatever its nice value, gets the same one — and wakes from the front, so the waiters are woken in FIFO order (kernel/futex/core.c, __futex_queue, formerly __queue_me: \"all RT-threads are woken first in priority order, and the others are woken last, in FIFO order\"): the longest-waiting follower, fifo's choice. What remains is the grant protocol: a woken follower takes the leader role under the pool's lock, and one woken after another took it sleeps again at the queue's tail."
		if differs {
			return why + " A difference here is therefore the grant protocol's cost or a departure from that wake order (real-time threads, a follower requeued at the tail), not a different choice of thread by design."
		}
		return why + " The measurements agree: no metric tells os from fifo."
	case orderOSVacant:
		why := "os-vacant is os as the paper's promote_new_leader has it: the promotion leaves the role vacant and wakes the longest waiter (as os does), and whichever thread joins first leads, so a processing thread that rejoins before the woken follower runs leads again without parking (vacancy rejoins), and the woken follower waits again. Where rejoins are frequent the thread that has just served leads again, concentrating the events as lifo does and sparing that thread a park and a wake-up; where they are rare it is os."
		switch {
		case busiest == 1:
			return why + " The result: its busiest thread takes a significantly larger share than fifo's, the rejoining threads' doing."
		case differs:
			return why + " A difference here with no larger busiest share is the vacancy's cost or saving in wake-ups, not a concentration of the events."
		}
		return why + " Here no metric tells os-vacant from fifo."
	case orderLIFO:
		why := "LIFO promotes the follower that parked last, whose cache is warmest and which may not be asleep yet; it should concentrate the events on few threads" + uniform + " when the pool often has several followers, and spread them like fifo when it rarely has more than one (every promotion then wakes the only follower)."
		switch {
		case busiest == 1 && concentrated:
			return why + " The result agrees: lifo's busiest thread takes a significantly larger share than fifo's, at least 1.5 times the uniform share."
		case busiest == 1:
			return why + " Lifo's busiest thread takes a significantly larger share than fifo's, but less than 1.5 times the uniform share: the events stay spread across the threads at this load."
		case busiest == -1:
			return why + " Against that prediction, lifo's busiest thread takes a significantly smaller share than fifo's."
		}
		return why + " Here lifo's busiest thread's share is not told apart from fifo's: lifo does not concentrate the events at this load."
	case orderPriority:
		why := "Priority promotes the follower with the lowest nice value, so the most urgent thread leads whenever it is a follower (a larger busiest share is expected), and the kernel's CFS then weights the processing threads' CPU time by their nice values; that weighting matters only when the pool's threads compete for a CPU (runnable at once), not when each runs alone. It does not read the request's priority field (lanes do, --lanes)."
		if busiest == 1 {
			return why + " The result agrees: its busiest thread takes a significantly larger share than fifo's."
		}
		return why
	}
	return ""
}

// Markdown renders the section's body as report.md shows it.
func (s *ordersSection) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Leader/Followers' promotion orders compared at %s.\n", s.Load)
	for _, g := range s.Groups {
		fmt.Fprintf(&b, "\n### %s\n\n", g.Name)
		mdTable(&b, g.Head, g.Rows)
		for _, v := range g.Verdicts {
			b.WriteString("\n" + v + "\n")
		}
	}
	for _, n := range s.Notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}

// fmtBand formats a median with its confidence interval, or with the
// sample's range when there is none: "25.3 [25.1, 25.6]", "25.3 (range
// 25.1–25.6)".
func fmtBand(s results.Stats, unit string) string {
	lo, hi, kind := s.Band()
	if kind != results.BandRange {
		return plots.FormatStat(s, unit)
	}
	format := plots.TrimFloat
	if unit == "ns" {
		format = plots.FormatNs
	}
	return fmt.Sprintf("%s (range %s–%s)", format(s.Median), format(lo), format(hi))
}

// pText writes a p-value after "p": "=0.032", or "<1e-15" below what a
// float's rounding leaves meaningful.
func pText(p float64) string {
	if p < 1e-15 {
		return "<1e-15"
	}
	return fmt.Sprintf("=%.2g", p)
}
