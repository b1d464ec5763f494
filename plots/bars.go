package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/results"
	"concbench/stats"
)

// barPanel is one panel of a bar figure: a metric per configuration.
type barPanel struct {
	metric results.Metric
	title  string
	axis   string
}

// barValue is one configuration's bar in one panel.
type barValue struct {
	cfg results.ModelConfig
	agg results.Aggregate // over the valid repetitions
	ok  bool              // drawn: the configuration has a valid value
	// excluded are the invalid repetitions' values, by repetition: drawn
	// as crosses, in no bar, whisker or test.
	excluded map[int]float64
}

// barFigure draws horizontal bars (median of the valid repetitions, with
// the band as error bars) per configuration for each panel, at the groups
// pick chooses (capacity points, or the chosen load), the invalid
// repetitions as crosses at their own values, and tabulates them. The
// caption, which the caller writes, ends with excluded, the count of
// invalid repetitions the figure left out.
func barFigure(a *analysis, name, title, where string, pick func(name string) *results.Group, panels []barPanel) (f *Figure, vals [][]barValue, excluded int) {
	f = &Figure{
		Name:   name,
		Title:  title,
		Width:  vg.Length(3.2*float64(len(panels))+2.2) * vg.Inch,
		Height: vg.Length(1.2+0.35*float64(len(a.configs))) * vg.Inch,
		// One variable per column: the point's kind and its fraction (1
		// for capacity) apart, numbers as numbers.
		Header: []string{"config", "metric", "unit", "kind", "fraction", "n", "median", "band_lo", "band_hi", "band", "invalid_reps", "invalid_values", "skipped_reps", "plotted", "note"},
	}
	for _, cfg := range a.configs {
		if g := pick(cfg.Name); g != nil {
			excluded += len(g.Invalid())
		}
	}
	vals = make([][]barValue, len(panels))
	haveAny, anyRange := false, false
	for pi, bp := range panels {
		for _, cfg := range a.configs {
			bv, isRange := a.barPoint(f, cfg, where, pick(cfg.Name), bp.metric)
			haveAny = haveAny || bv.ok || len(bv.excluded) > 0
			anyRange = anyRange || isRange
			vals[pi] = append(vals[pi], bv)
		}
	}
	if !haveAny {
		return nil, nil, 0
	}
	f.note("Error bars: %s.", bandText)
	f.noteRanges(anyRange)
	f.build = (&barPlot{a: a, panels: panels, vals: vals}).build
	return f, vals, excluded
}

// barPoint returns configuration cfg's bar of metric m at g (nil: the
// configuration has no point where the figure is drawn), and whether its
// error bar is a min–max range; it notes in f why a bar is missing and
// writes the bar's CSV row.
func (a *analysis) barPoint(f *Figure, cfg results.ModelConfig, where string, g *results.Group, m results.Metric) (barValue, bool) {
	pt := aggregatePoint(g, m)
	switch {
	case g == nil:
		pt.note = "no point at this load"
		f.note("%s: no %s point", cfg.Name, where)
	case !pt.valid() && pt.agg.Excluded > 0:
		pt.note = pt.missingNote()
		f.note("%s: no valid %s at %s (%d invalid repetition(s) excluded)", cfg.Name, m.Label, where, pt.agg.Excluded)
	case !pt.valid():
		pt.note = pt.missingNote()
		f.note("%s: no %s at %s (%s)", cfg.Name, m.Label, where, strings.Join(pt.agg.SkipReasons, "; "))
	}
	kind, frac := string(results.KindCapacity), "1"
	if where != "capacity" {
		kind, frac = string(results.KindOpen), results.FormatFloat(a.load)
		if g := a.atLoad(cfg.Name); a.equal && g != nil {
			// The "fraction" column holds the absolute rate.
			kind, frac = string(results.KindRate), results.FormatFloat(g.RatePerS)
		}
	}
	f.addPointRow(&pt, cfg.Name, m.Name, m.Unit, kind, frac)
	return barValue{cfg: cfg, agg: pt.agg, ok: pt.plotted, excluded: pt.invalidByRep()}, pt.drawnRange()
}

// barPlot is what a bar figure draws: per panel, a bar per configuration.
type barPlot struct {
	a      *analysis
	panels []barPanel
	vals   [][]barValue // per panel, a bar per configuration
}

// build returns the figure's row of panels and its legend (Figure.build).
func (bp *barPlot) build(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
	n := len(bp.a.configs)
	row := make([]*plot.Plot, len(bp.panels))
	for pi, panel := range bp.panels {
		title := panel.title
		if len(bp.panels) == 1 {
			title = "" // the figure's title says it
		}
		axis := panel.axis
		if pi > 0 && axis == bp.panels[pi-1].axis {
			// The same unit as the panel on its left: said once, so
			// that narrow panels' labels do not run into each other.
			axis = ""
		}
		p := newPlot(tx(title), tx(axis), "")
		p.X.Min = 0
		p.X.Tick.Marker = linearTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
		names := make([]string, n)
		var crosses plotter.XYs // the invalid repetitions, drawn last, on top
		for i, bv := range bp.vals[pi] {
			// The first configuration on top.
			pos := float64(n - 1 - i)
			if pi == 0 {
				names[n-1-i] = tx(bv.cfg.Name)
			}
			for _, rep := range slices.Sorted(maps.Keys(bv.excluded)) {
				crosses = append(crosses, plotter.XY{X: bv.excluded[rep], Y: pos})
			}
			if bv.ok {
				addBar(p, bv.agg.Stats, pos, bp.a.style[bv.cfg.Name], tx)
			}
		}
		addExcluded(p, crosses)
		p.X.Max *= 1.08 // room for the whiskers' caps
		p.NominalY(names...)
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		p.Y.Tick.Width = 0
		row[pi] = p
	}
	l := newLegend()
	l.Add(tx("bar: median of valid reps"), &bars{Color: color.Gray{Y: 0xC0}, Line: draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}})
	l.Add(tx("whisker: 95% CI (or range)"), lineThumb{draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}})
	for _, vs := range bp.vals {
		if slices.ContainsFunc(vs, func(v barValue) bool { return len(v.excluded) > 0 }) {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
			break
		}
	}
	return [][]*plot.Plot{row}, &l
}

// addBar draws one horizontal bar at pos: the median of st in style, its
// band as a whisker, and the median as text beside the whisker.
func addBar(p *plot.Plot, st results.Stats, pos float64, style seriesStyle, tx func(string) string) {
	b := &bars{Cats: []float64{pos}, Values: []float64{st.Median}, Width: 0.7, Horizontal: true,
		Color: style.barFill(), Line: style.barLine()}
	p.Add(b)
	lo, hi, _ := st.Band()
	eb := errBar{x: st.Median, y: pos, lo: lo, hi: hi}
	if e, err := plotter.NewXErrorBars(eb); err == nil {
		e.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
		e.CapWidth = vg.Points(5)
		p.Add(e)
	}
	// The median as text beside the whisker, so that bars too short to
	// see (LF's allocations) still read as a number.
	if lb, err := plotter.NewLabels(plotter.XYLabels{
		XYs:    plotter.XYs{{X: math.Max(hi, st.Median), Y: pos}},
		Labels: []string{tx(trimFloat(st.Median))},
	}); err == nil {
		sty := textStyle(fontSmall)
		sty.YAlign = draw.YCenter
		lb.TextStyle = []text.Style{sty}
		lb.Offset = vg.Point{X: vg.Points(6)}
		p.Add(lb)
	}
}

// capacityFigure is figure 3: capacity (closed-loop saturation rate) per
// configuration.
func capacityFigure(a *analysis) *Figure {
	f, vals, excluded := barFigure(a, "capacity", "Capacity (closed-loop saturation)", "capacity", a.capacity,
		[]barPanel{{metric: results.Capacity, title: "capacity", axis: "req/s"}})
	if f == nil {
		return nil
	}
	best, worst := -1, -1
	for i, v := range vals[0] {
		if !v.ok {
			continue
		}
		if best < 0 || v.agg.Stats.Median > vals[0][best].agg.Stats.Median {
			best = i
		}
		if worst < 0 || v.agg.Stats.Median < vals[0][worst].agg.Stats.Median {
			worst = i
		}
	}
	if best < 0 {
		f.Caption = "Capacity per configuration: no configuration has a valid closed-loop saturation run." + excludedCaption(excluded)
		return f
	}
	b, w := vals[0][best], vals[0][worst]
	f.Caption = fmt.Sprintf("Capacity per configuration (median of the valid closed-loop saturation runs): %s is highest at %s req/s",
		b.cfg.Name, trimFloat(b.agg.Stats.Median))
	if best != worst {
		f.Caption += fmt.Sprintf(", %s lowest at %s req/s (%.2f× the highest)", w.cfg.Name, trimFloat(w.agg.Stats.Median),
			w.agg.Stats.Median/b.agg.Stats.Median)
	}
	if len(a.workloadsOf()) > 1 {
		f.Caption += ". " + capitalize(strings.TrimSuffix(a.perWorkload(vals[0], func(v []barValue) string {
			if r := runnerUpText(v, true, " req/s"); r != "" {
				return r + ". "
			}
			return ""
		}), " "))
		f.Caption = strings.TrimSuffix(f.Caption, ".")
	} else if r := runnerUpText(vals[0], true, " req/s"); r != "" {
		f.Caption += "; " + r
	}
	f.Caption += "." + excludedCaption(excluded)
	return f
}

// runnerUpText says whether the best configuration of a panel (the
// highest median if higher is better, else the lowest) is clear of the
// runner-up: "clear of the runner-up X (v) across repetitions", or
// "within the runner-up X's interval (v)" when the two intervals
// overlap. unit follows the runner-up's value; "" if fewer than two
// configurations have a value.
func runnerUpText(vals []barValue, higherIsBetter bool, unit string) string {
	var ok []barValue
	for _, v := range vals {
		if v.ok {
			ok = append(ok, v)
		}
	}
	if len(ok) < 2 {
		return ""
	}
	slices.SortStableFunc(ok, func(x, y barValue) int {
		c := cmpFloat(x.agg.Stats.Median, y.agg.Stats.Median)
		if higherIsBetter {
			return -c
		}
		return c
	})
	b, r := ok[0].agg.Stats, ok[1].agg.Stats
	bLo, bHi, _ := b.Band()
	rLo, rHi, _ := r.Band()
	overlap := bLo <= rHi && rLo <= bHi
	v := trimFloat(r.Median) + unit
	if overlap {
		return fmt.Sprintf("%s is within the runner-up %s's interval (%s)", ok[0].cfg.Name, ok[1].cfg.Name, v)
	}
	return fmt.Sprintf("%s is clear of the runner-up %s (%s) across repetitions", ok[0].cfg.Name, ok[1].cfg.Name, v)
}

// perWorkload applies text to vals, or in a run of several workloads to
// each workload's configurations, prefixing each part with the workload's
// name (configurations of different workloads do not compete).
func (a *analysis) perWorkload(vals []barValue, text func([]barValue) string) string {
	ws := a.workloadsOf()
	if len(ws) < 2 {
		return text(vals)
	}
	var b strings.Builder
	b.WriteString("per workload: ")
	for _, w := range ws {
		var vs []barValue
		for _, v := range vals {
			if slices.Contains(w.runs, v.cfg.Name) {
				vs = append(vs, v)
			}
		}
		if t := text(vs); t != "" {
			b.WriteString(w.name + ": " + t)
		}
	}
	return b.String()
}

// lowestText names the configuration with the lowest median of a panel
// and how it stands against the runner-up: "lowest is proactor (22.4);
// proactor is clear of …".
func lowestText(vals []barValue, unit string) string {
	best := -1
	for i, v := range vals {
		if v.ok && (best < 0 || v.agg.Stats.Median < vals[best].agg.Stats.Median) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	s := fmt.Sprintf("lowest is %s (%s%s)", vals[best].cfg.Name, trimFloat(vals[best].agg.Stats.Median), unit)
	if r := runnerUpText(vals, false, unit); r != "" {
		s += "; " + r
	}
	return s + ". "
}

// claim is one of the seed's claims about Leader/Followers (LF) and
// Half-Sync/Half-Reactive (HS/HR) that a cost figure tests.
type claim struct {
	text   string // the claim, e.g. "LF needs no context switch per request; HS/HR pays one"
	metric results.Metric
	unit   string // per-request unit for the caption
	verb   string // "switches", "spends", "allocates": LF … less than HS/HR
}

// costFigure draws per-request costs at the chosen load and states
// whether the data shows the claim.
func costFigure(a *analysis, name, title string, panels []barPanel, c claim) *Figure {
	if !a.hasLoad {
		return nil
	}
	f, vals, excluded := barFigure(a, name, fmt.Sprintf("%s at %s", title, a.loadText()), "open "+a.loadShort(), a.atLoad, panels)
	if f == nil {
		return nil
	}
	pi := slices.IndexFunc(panels, func(p barPanel) bool { return p.metric.Name == c.metric.Name })
	if pi < 0 {
		panic("plots: the claim of figure " + name + " is about " + c.metric.Name + ", which none of its panels shows")
	}
	verdict, warnings := testClaim(c, vals[pi])
	f.Caption = fmt.Sprintf("%s per configuration at %s (medians of the valid repetitions). %s%s", title, a.loadText(), capitalize(a.perWorkload(vals[pi], func(v []barValue) string { return lowestText(v, " "+c.unit) })), verdict) + excludedCaption(excluded)
	for _, w := range warnings {
		f.note("Claim test: %s", w)
	}
	return f
}

// testClaim tests "LF's metric is lower than HS/HR's" on every pair of an
// LF and an HS/HR configuration at the chosen load (vals: the bars of the
// claim's metric, valid repetitions only), with benchstat's Mann–Whitney U
// test, and says whether
// the data shows it, refutes it, or cannot decide; warnings are the test's
// own (e.g. too few repetitions to ever reach significance).
func testClaim(c claim, vals []barValue) (verdict string, warnings []string) {
	type side struct {
		name string
		agg  results.Aggregate
	}
	var lf, hs []side
	for _, v := range vals {
		if !v.ok {
			continue
		}
		switch v.cfg.Model {
		case modelLF:
			lf = append(lf, side{v.cfg.Name, v.agg})
		case modelHSHR:
			hs = append(hs, side{v.cfg.Name, v.agg})
		}
	}
	head := fmt.Sprintf("Claim (%s): ", c.text)
	if len(lf) == 0 || len(hs) == 0 {
		missing := "Leader/Followers"
		if len(lf) > 0 {
			missing = "Half-Sync/Half-Reactive"
		}
		return head + fmt.Sprintf("cannot be tested — the run has no valid %s measurement at this load.", missing), nil
	}
	var higher, unsure []string
	maxP := 0.0
	for _, l := range lf {
		for _, h := range hs {
			cmp := stats.MannWhitney(l.agg.Stats.Values, h.agg.Stats.Values)
			pair := fmt.Sprintf("%s vs %s (p=%.3g)", l.name, h.name, cmp.P)
			for _, w := range cmp.Warnings {
				if w = pair + ": " + w; !slices.Contains(warnings, w) {
					warnings = append(warnings, w)
				}
			}
			switch {
			case !cmp.Significant():
				unsure = append(unsure, pair)
			case l.agg.Stats.Median < h.agg.Stats.Median:
				maxP = math.Max(maxP, cmp.P)
			default:
				higher = append(higher, pair)
			}
		}
	}
	values := func(ss []side) string {
		var parts []string
		for _, s := range ss {
			parts = append(parts, fmt.Sprintf("%s %s", s.name, trimFloat(s.agg.Stats.Median)))
		}
		return strings.Join(parts, ", ")
	}
	nums := fmt.Sprintf("medians %s: LF %s; HS/HR %s", c.unit, values(lf), values(hs))
	switch {
	case len(higher) > 0:
		return head + fmt.Sprintf("refuted — LF %s significantly more than HS/HR for %s (%s).", c.verb, joinAnd(higher), nums), warnings
	case len(unsure) > 0:
		return head + fmt.Sprintf("not shown — no significant difference for %s (Mann–Whitney U, α=0.05; %s).", joinAnd(unsure), nums), warnings
	}
	return head + fmt.Sprintf("shown — every LF configuration %s significantly less than every HS/HR one (Mann–Whitney U, p ≤ %.3g; %s).", c.verb, maxP, nums), warnings
}

// ctxswFigure is figure 4: context switches per request.
func ctxswFigure(a *analysis) *Figure {
	return costFigure(a, "ctxsw", "Server context switches per request", []barPanel{
		{metric: results.CtxswPerReq, title: "all", axis: "context switches / request"},
		{metric: results.VoluntaryCtxswPerReq, title: "voluntary", axis: "context switches / request"},
		{metric: results.InvoluntaryCtxswPerReq, title: "involuntary", axis: "context switches / request"},
	}, claim{text: "LF needs no context switch per request; HS/HR pays one for the hand-off", metric: results.CtxswPerReq,
		unit: "ctxsw/req", verb: "switches"})
}

// cpuFigure is figure 5: server CPU per request.
func cpuFigure(a *analysis) *Figure {
	return costFigure(a, "cpu", "Server CPU time per request", []barPanel{
		{metric: results.CPUPerReq, title: "user + system", axis: "µs / request"},
	}, claim{text: "LF avoids the hand-off's synchronization and copying, so it spends less CPU per request than HS/HR", metric: results.CPUPerReq,
		unit: "µs/req", verb: "spends CPU"})
}

// allocsFigure is figure 6: allocations per request.
func allocsFigure(a *analysis) *Figure {
	return costFigure(a, "allocs", "Server heap allocations per request", []barPanel{
		{metric: results.AllocsPerReq, title: "objects", axis: "allocations / request"},
		{metric: results.BytesPerReq, title: "bytes", axis: "bytes / request"},
	}, claim{text: "LF needs no allocation per request; HS/HR allocates one to hand each request over", metric: results.AllocsPerReq,
		unit: "allocs/req", verb: "allocates"})
}
