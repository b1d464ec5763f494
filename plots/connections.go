package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/results"
	"concbench/stats"
)

// connPanel is one metric of the connections figure.
type connPanel struct {
	metric results.Metric
	title  string
	// scale converts the metric's value to the axis's unit; format labels
	// the axis's ticks.
	scale  float64
	format func(float64) string
}

var connPanels = []connPanel{
	{results.LatencyP50, "p50 latency", 1, FormatNs},
	{results.LatencyP99, "p99 latency", 1, FormatNs},
	{results.LatencyP999, "p99.9 latency", 1, FormatNs},
	{results.CPUPerReq, "CPU per request (µs)", 1, formatNumber},
	{results.CtxswPerReq, "context switches per request", 1, formatNumber},
	{results.RSS, "RSS (MiB)", 1.0 / (1 << 20), formatNumber},
	{results.ServerThreads, "OS threads", 1, formatNumber},
	{results.ServerFDs, "open descriptors", 1, formatNumber},
}

// connBase is the smallest connection count the CPU ratio divides by, when
// measured: the "at 100 connections"; else the smallest count
// measured above it.
const connBase = 100

// connSeries is one configuration across connection counts: the run's
// configurations named "<config>/conns=<n>" (the connections profile's
// workloads) are one series, "<config>".
type connSeries struct {
	name string
	rate float64
	// groups are its rate groups, by ascending connections; conns their
	// connections — for a control, the active and idle ones together,
	// where it is plotted.
	groups []*results.Group
	conns  []int
	// control is set for a control series (Workload.Idle: active
	// connections plus idle ones held by another server); base is the
	// series it controls, idle its idle connections.
	control            bool
	base, active, idle string
}

// connSeriesName returns the series g belongs to: its configuration's
// name without the "/conns=<n>" of its workload — and for a control
// workload without its "/conns=<n>,idle=<m>", followed by " +idle".
func connSeriesName(g *results.Group) string {
	if len(g.Points) == 0 {
		return g.Config.Name
	}
	w := g.Points[0].Workload
	if w.Idle > 0 {
		return strings.TrimSuffix(g.Config.Name, fmt.Sprintf("/conns=%d,idle=%d", w.Conns, w.Idle)) + controlSuffix
	}
	return strings.TrimSuffix(g.Config.Name, "/conns="+strconv.Itoa(w.Conns))
}

// controlSuffix ends a control series' name.
const controlSuffix = " +idle"

// connectionSeries returns the run's rate points as series, in report
// order, each with a rate of its own ("<config> @ <rate>/s" when the run
// has several rates).
func (a *Analysis) connectionSeries() []*connSeries {
	rates := map[float64]bool{}
	for _, g := range a.Groups {
		if g.Kind == results.KindRate {
			rates[g.RatePerS] = true
		}
	}
	var out []*connSeries
	byName := map[string]*connSeries{}
	for _, g := range a.Groups {
		if g.Kind != results.KindRate || len(g.Points) == 0 {
			continue
		}
		name := connSeriesName(g)
		if len(rates) > 1 {
			name += fmt.Sprintf(" @ %.0f/s", g.RatePerS)
		}
		w := g.Points[0].Workload
		s := byName[name]
		if s == nil {
			s = &connSeries{name: name, rate: g.RatePerS}
			if w.Idle > 0 {
				s.control, s.active, s.idle = true, strconv.Itoa(w.Conns), strconv.Itoa(w.Idle)
				s.base = strings.Replace(name, controlSuffix, "", 1)
			}
			byName[name] = s
			out = append(out, s)
		}
		s.groups = append(s.groups, g)
		s.conns = append(s.conns, w.Conns+w.Idle)
	}
	for _, s := range out {
		idx := make([]int, len(s.groups))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int { return s.conns[i] - s.conns[j] })
		gs, cs := make([]*results.Group, len(idx)), make([]int, len(idx))
		for k, i := range idx {
			gs[k], cs[k] = s.groups[i], s.conns[i]
		}
		s.groups, s.conns = gs, cs
	}
	return out
}

// hasRatePoints reports whether the run has absolute-rate points
// (results.KindRate): only such a run gets the connections figure, or a
// line saying why it could not be drawn.
func hasRatePoints(a *Analysis) bool {
	return slices.ContainsFunc(a.Groups, func(g *results.Group) bool { return g.Kind == results.KindRate })
}

// connStyles returns each series' style: its model's colour, and a
// marker and dash by its rank among the model's series; each control its
// model series' style (marked by controlGlyph when drawn).
func connStyles(series []*connSeries) []seriesStyle {
	out := make([]seriesStyle, len(series))
	st := newStyler(identity)
	model := func(s *connSeries) string {
		if len(s.groups) > 0 {
			return s.groups[0].Config.Model
		}
		return ""
	}
	for _, s := range series {
		if !s.control {
			st.add(s.name, model(s))
		}
	}
	for i, s := range series {
		if s.control {
			st.add(s.base, model(s))
			out[i] = st.m[s.base]
		} else {
			out[i] = st.m[s.name]
		}
	}
	return out
}

// controlGlyph marks a control's points: a large ring in its model's
// colour, around where the model's own point at that count would be.
func controlGlyph(st seriesStyle) draw.GlyphStyle {
	return draw.GlyphStyle{Color: st.Color, Radius: vg.Points(5.5), Shape: draw.RingGlyph{}}
}

// unavailableReason returns why g's points were not measured, if none
// was and at least one is unavailable (a model's own limit, or a model the
// machine lacks), else "".
func unavailableReason(g *results.Group) string {
	if len(g.Measured()) > 0 {
		return ""
	}
	for _, p := range g.Points {
		if p.Status == results.StatusUnavailable {
			return p.Failure
		}
	}
	return ""
}

// validValues returns m's values over g's valid repetitions.
func validValues(g *results.Group, m results.Metric) []float64 {
	var xs []float64
	for _, p := range g.Valid() {
		if v, ok := m.Value(p); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	return xs
}

// cpuRatio states series s's per-request CPU at the run's largest
// connection count top ÷ at its smallest count ≥ connBase with a valid
// value, with a 95% interval (stats.RatioCI), or why there is none.
func cpuRatio(s *connSeries, top int) string {
	base, baseVals := 0, []float64(nil)
	for i, c := range s.conns {
		if c >= connBase {
			if xs := validValues(s.groups[i], results.CPUPerReq); len(xs) > 0 {
				base, baseVals = c, xs
				break
			}
		}
	}
	if base == 0 {
		return fmt.Sprintf("%s: no valid CPU per request at %d connections or more", s.name, connBase)
	}
	i := slices.Index(s.conns, top)
	if i < 0 {
		return fmt.Sprintf("%s: not measured at %d connections", s.name, top)
	}
	if unavailableReason(s.groups[i]) != "" {
		// A model that stops (its own cap) gets its ratio at the largest
		// count it ran, said so: what it paid on the way to its limit.
		for j := i - 1; j >= 0; j-- {
			if c := s.conns[j]; c > base && unavailableReason(s.groups[j]) == "" {
				if xs := validValues(s.groups[j], results.CPUPerReq); len(xs) > 0 {
					return fmt.Sprintf("%s: no ratio at %d connections, not run there (below); at its largest count, %s",
						s.name, top, ratioText(xs, baseVals, c, base))
				}
			}
		}
		return fmt.Sprintf("%s: no ratio, not run at %d connections (below)", s.name, top)
	}
	topVals := validValues(s.groups[i], results.CPUPerReq)
	if len(topVals) == 0 {
		return fmt.Sprintf("%s: no valid CPU per request at %d connections", s.name, top)
	}
	if top == base {
		return fmt.Sprintf("%s: %d connections is also the base count", s.name, top)
	}
	return s.name + ": " + ratioText(topVals, baseVals, top, base)
}

// ratioText states topVals ÷ baseVals (per-request CPU at top and at base
// connections) with its 95% interval, or the ratio of medians where there
// are too few repetitions for one.
func ratioText(topVals, baseVals []float64, top, base int) string {
	r := stats.RatioCI(topVals, baseVals, 0.95)
	if !r.OK {
		return fmt.Sprintf("%s× (%d ÷ %d connections; too few repetitions for an interval)",
			TrimFloat(results.Summarize(topVals).Median/results.Summarize(baseVals).Median), top, base)
	}
	return fmt.Sprintf("%s× [%s, %s] (%d ÷ %d connections)", TrimFloat(r.Est), TrimFloat(r.Lo), TrimFloat(r.Hi), top, base)
}

// connPoint is one plotted x of one series in one panel: a connection
// count, or in the thread-sweep figure a thread count.
type connPoint struct{ x, median, lo, hi float64 }

// connectionsFigure draws each server cost against the number of
// connections (log x), one panel per metric, at the run's absolute rate
// (results.KindRate points): the median across valid repetitions with its
// band. A configuration that stops at a connection count (its own limit,
// such as thread per connection's thread cap, or a model unavailable
// here) is named in the legend and the caption with the reason. The
// caption states every configuration's per-request CPU at the largest
// connection count ÷ at the smallest count ≥ 100 (for one that stops
// earlier, at the largest count it ran).
func connectionsFigure(a *Analysis) *Figure {
	series := a.connectionSeries()
	var counts []int
	for _, s := range series {
		for _, c := range s.conns {
			if !slices.Contains(counts, c) {
				counts = append(counts, c)
			}
		}
	}
	if len(counts) < 2 {
		return nil
	}
	slices.Sort(counts)
	f := &Figure{
		Name:   "connections",
		Title:  "Server costs against connections, at one offered rate",
		Width:  12 * vg.Inch,
		Height: 6 * vg.Inch,
		// conns is every connection the point held (where it is
		// plotted), idle how many of them were idle, held by another
		// server (a control).
		Header: []string{"config", "metric", "unit", "conns", "idle", "offered_rate_per_s", "n", "median", "band_lo", "band_hi", "band",
			"invalid_reps", "skipped_reps", "plotted", "note"},
	}
	cp := &connPlot{
		series: series, counts: counts, stops: map[string]string{},
		pts: make([][][]connPoint, len(connPanels)), excluded: make([]plotter.XYs, len(connPanels)), ys: make([][]float64, len(connPanels)),
	}
	for _, s := range series {
		for _, g := range s.groups {
			cp.excludedReps += len(g.Invalid())
		}
	}
	for pi, panel := range connPanels {
		cp.pts[pi] = make([][]connPoint, len(series))
		for si, s := range series {
			for gi, g := range s.groups {
				cp.point(f, pi, panel, si, s.conns[gi], g)
			}
		}
	}
	if !cp.anyPoint {
		return nil
	}
	cp.caption(f)
	f.build = cp.build
	return f
}

// connPlot is what the connections figure draws, gathered a point at a
// time: per panel (connPanels), each series' points, the invalid
// repetitions' own values, and every value drawn, which sets the panel's
// y range.
type connPlot struct {
	series             []*connSeries
	counts             []int             // the connection counts measured, ascending
	pts                [][][]connPoint   // panel → series → points
	excluded           []plotter.XYs     // per panel, the invalid repetitions' own values
	ys                 [][]float64       // per panel, every value drawn
	stops              map[string]string // series → the first count it was not run at
	stopped            []string          // and why, for the caption
	excludedReps       int
	anyRange, anyPoint bool
}

// point adds series si's group g, at conns connections, to panel pi: its
// point if it is drawn, its invalid repetitions, and its CSV row.
func (cp *connPlot) point(f *Figure, pi int, panel connPanel, si, conns int, g *results.Group) {
	s := cp.series[si]
	pt := aggregatePoint(g, panel.metric)
	switch why := unavailableReason(g); {
	case why != "":
		pt.note, pt.plotted = "unavailable: "+why, false
		if _, ok := cp.stops[s.name]; !ok {
			cp.stops[s.name] = fmt.Sprintf("%d", conns)
			cp.stopped = append(cp.stopped, fmt.Sprintf("%s stops at %d connections: %s", s.name, conns, why))
		}
	case !pt.valid():
		pt.note = pt.missingNote()
	case pt.median() <= 0:
		pt.note, pt.plotted = "median ≤ 0 cannot be shown on the log axis; left out", false
		f.note("%s %s at %d connections: the median is %s, which a log axis cannot show; left out", s.name, panel.title, conns, TrimFloat(pt.median()))
	}
	for _, iv := range pt.invalid {
		if iv.v > 0 {
			cp.excluded[pi] = append(cp.excluded[pi], plotter.XY{X: float64(conns), Y: iv.v * panel.scale})
			cp.ys[pi] = append(cp.ys[pi], iv.v*panel.scale)
			cp.anyPoint = true
		}
	}
	if pt.plotted {
		q := connPoint{x: float64(conns), median: pt.median() * panel.scale, lo: pt.lo * panel.scale, hi: pt.hi * panel.scale}
		cp.pts[pi][si] = append(cp.pts[pi][si], q)
		cp.ys[pi] = append(cp.ys[pi], q.median, q.hi)
		if q.lo > 0 {
			cp.ys[pi] = append(cp.ys[pi], q.lo)
		}
		cp.anyRange = cp.anyRange || pt.drawnRange()
		cp.anyPoint = true
	}
	f.addPointRow(&pt, s.name, panel.metric.Name, panel.metric.Unit, strconv.Itoa(conns), strconv.Itoa(g.Points[0].Workload.Idle), results.FormatFloat(s.rate))
}

// caption writes f's caption — the CPU ratios, where a series stops, and
// the controls — and its notes.
func (cp *connPlot) caption(f *Figure) {
	top := cp.counts[len(cp.counts)-1]
	var ratios, controls []string
	for _, s := range cp.series {
		if !s.control {
			ratios = append(ratios, cpuRatio(s, top))
			continue
		}
		controls = append(controls, controlText(s, cp.series))
	}
	withControls := ""
	if len(controls) > 0 {
		withControls = " and their controls"
	}
	f.Caption = fmt.Sprintf("Each server cost against the number of connections (log x) for %d configuration(s)%s at one offered rate (%s): medians across valid repetitions, error bars their 95%% CI (or min–max range). Per-request CPU at %d ÷ at the smallest count ≥ %d connections, with its 95%% interval: %s.",
		len(ratios), withControls, rateText(cp.series), top, connBase, strings.Join(ratios, "; "))
	if len(cp.stopped) > 0 {
		f.Caption += " " + strings.Join(cp.stopped, "; ") + "."
	}
	if len(controls) > 0 {
		f.Caption += " Control (large rings, in the model's colour, at the connections in all): idle connections held by another server on the same CPUs beside the model's own active ones — where a ring's p99 is near the model's point at that count, the machine's cost of connections, not the model, explains the tail: " +
			strings.Join(controls, "; ") + "."
	}
	f.Caption += excludedCaption(cp.excludedReps)
	f.note("Error bars: %s.", bandText)
	f.noteRanges(cp.anyRange)
	if len(controls) == 0 {
		f.note("No control in this run: connections cost the whole machine, not only the server that holds them — idle connections to another server on the same CPUs raised the measured server's p99.9 as much as idle connections to itself did (100 active and 9 900 idle connections on a 2-CPU machine). Before reading the latency panels as a model's scaling, measure that control (the connections profile's conns=256,idle=9744 workload).")
	}
}

// build returns the figure's two rows of panels and its legend
// (Figure.build).
func (cp *connPlot) build(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
	const cols = 4
	rows := [][]*plot.Plot{make([]*plot.Plot, cols), make([]*plot.Plot, cols)}
	xmin, xmax := float64(cp.counts[0])/1.5, float64(cp.counts[len(cp.counts)-1])*1.5
	styles := connStyles(cp.series)
	for pi, panel := range connPanels {
		p := newPlot(tx(panel.title), tx("connections"), "")
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
		p.X.Min, p.X.Max = xmin, xmax
		ymin, ymax, _ := logRange(cp.ys[pi])
		format := panel.format
		setLogY(p, ymin, ymax, func(v float64) string { return tx(format(v)) })
		for si, s := range cp.series {
			gl := styles[si].glyph()
			if s.control {
				gl = controlGlyph(styles[si])
			}
			addConnSeries(p, cp.pts[pi][si], styles[si], gl, !s.control, ymin)
		}
		addExcluded(p, cp.excluded[pi])
		rows[pi/cols][pi%cols] = p
	}
	l := newLegend()
	anyControl := false
	for si, s := range cp.series {
		if s.control {
			anyControl = true
			continue
		}
		st := styles[si]
		label := s.name
		if at, ok := cp.stops[s.name]; ok {
			label += " (stops at " + at + ": see caption)"
		}
		l.Add(tx(label), lineThumb{st.line()}, glyphThumb{st.glyph()})
	}
	if anyControl {
		l.Add(tx("control: + idle conns elsewhere"), glyphThumb{controlGlyph(seriesStyle{Color: palette[len(palette)-1]})})
	}
	if slices.ContainsFunc(cp.excluded, func(e plotter.XYs) bool { return len(e) > 0 }) {
		l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
	}
	return rows, &l
}

// rateText describes the series' offered rates: "5000 req/s".
func rateText(series []*connSeries) string {
	var rs []string
	for _, s := range series {
		r := fmt.Sprintf("%.0f req/s", s.rate)
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return JoinAnd(rs)
}

// addConnSeries draws one series' error bars, its markers in glyph, and,
// if line is set, its median line.
func addConnSeries(p *plot.Plot, pts []connPoint, st seriesStyle, glyph draw.GlyphStyle, line bool, ymin float64) {
	if len(pts) == 0 {
		return
	}
	med := make(plotter.XYs, len(pts))
	for i, q := range pts {
		med[i] = plotter.XY{X: q.x, Y: q.median}
	}
	for _, q := range pts {
		if math.IsNaN(q.lo) || math.IsNaN(q.hi) {
			continue
		}
		eb := errBar{x: q.x, y: q.median, lo: math.Max(q.lo, ymin), hi: q.hi}
		if bars, err := plotter.NewYErrorBars(eb); err == nil {
			bars.LineStyle = st.line()
			bars.LineStyle.Dashes = nil
			p.Add(bars)
		}
	}
	if !line {
		if sc, err := plotter.NewScatter(med); err == nil {
			sc.GlyphStyle = glyph
			p.Add(sc)
		}
		return
	}
	if ln, sc, err := plotter.NewLinePoints(med); err == nil {
		ln.LineStyle = st.line()
		sc.GlyphStyle = glyph
		p.Add(ln, sc)
	}
}

// controlText compares control series s's p99 with its model's at the
// same number of connections, all of them active.
func controlText(s *connSeries, series []*connSeries) string {
	if len(s.groups) == 0 {
		return s.name + ": no point"
	}
	at := s.conns[0]
	active := strings.TrimSuffix(s.name, controlSuffix)
	own := FormatStat(s.groups[0].Aggregate(results.LatencyP99).Stats, "ns")
	if why := unavailableReason(s.groups[0]); why != "" {
		own = "not run (" + why + ")"
	}
	text := fmt.Sprintf("%s with %s active and %s idle: p99 %s", active, s.active, s.idle, own)
	for _, b := range series {
		if b.name != s.base {
			continue
		}
		if i := slices.Index(b.conns, at); i >= 0 {
			other := FormatStat(b.groups[i].Aggregate(results.LatencyP99).Stats, "ns")
			if unavailableReason(b.groups[i]) != "" {
				other = "not run"
			}
			text += fmt.Sprintf(", against %s with all %d active", other, at)
		}
	}
	return text
}
