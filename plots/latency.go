package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/loadgen"
	"concbench/models/registry"
	"concbench/results"
)

// latencyRow is one percentile of the latency figure: a row of panels.
type latencyRow struct {
	metric   results.Metric
	label    string
	quantile float64
	ideal    func(*results.Theory) float64
}

// latencyRows are the figure's rows. p99.9 is not among them: in the
// short windows of a load sweep it rests on a handful of responses at low
// load (MinTailResponses); the spectrum figure draws it from the merged
// histograms at the chosen load.
var latencyRows = []latencyRow{
	{results.LatencyP50, "p50", 0.5, func(t *results.Theory) float64 { return t.P50Ns }},
	{results.LatencyP99, "p99", 0.99, func(t *results.Theory) float64 { return t.P99Ns }},
}

// MinTailResponses is the fewest responses a measured window must have
// above a percentile for the figures to draw that percentile: a
// percentile p of a window of n responses is drawn only if n·(1−p) ≥
// MinTailResponses in every valid repetition (p99 needs 1000 responses).
// Below it the percentile is one of a few largest values, and can fall
// as the load rises.
const MinTailResponses = 10

// supports reports whether n responses support the percentile q.
func supports(n int64, q float64) bool {
	return float64(n)*(1-q) >= MinTailResponses*(1-1e-9)
}

// fewestResponses returns the smallest corrected response count among
// g's valid repetitions, or 0.
func fewestResponses(g *results.Group) int64 {
	var n int64 = -1
	for _, p := range g.Valid() {
		if c := p.Load.Latency.Count; n < 0 || c < n {
			n = c
		}
	}
	return max(n, 0)
}

// latencyPoint is one plotted load of one configuration in one panel: the
// median and band of the valid repetitions.
type latencyPoint struct {
	x, median, lo, hi float64
	band              string
	ideal             float64 // NaN if none
}

// familyOf returns the index of model's family among the model table's
// (registry.Families), the figures' columns in order; a model not in the
// table joins the last.
func familyOf(model string) int {
	if m, ok := registry.Lookup(model); ok {
		if i := slices.Index(registry.Families, m.Family); i >= 0 {
			return i
		}
	}
	return len(registry.Families) - 1
}

// maxPanelSeries is the most configurations one panel draws; a family
// with more is split over several panels.
const maxPanelSeries = 5

// panelColumn is one column of panels: its title and configurations.
type panelColumn struct {
	title   string
	configs []results.ModelConfig
}

// familyColumns splits configs into the families' columns, in the
// families' order, each at most maxPanelSeries configurations, leaving
// out empty families.
func familyColumns(configs []results.ModelConfig) []panelColumn {
	by := make([][]results.ModelConfig, len(registry.Families))
	for _, cfg := range configs {
		fi := familyOf(cfg.Model)
		by[fi] = append(by[fi], cfg)
	}
	var cols []panelColumn
	for i, cs := range by {
		parts := (len(cs) + maxPanelSeries - 1) / maxPanelSeries
		n := 0
		if parts > 0 {
			n = (len(cs) + parts - 1) / parts
		}
		for k := 0; k < parts; k++ {
			title := registry.Families[i]
			if parts > 1 {
				title = fmt.Sprintf("%s (%d/%d)", title, k+1, parts)
			}
			cols = append(cols, panelColumn{title: title, configs: cs[k*n : min((k+1)*n, len(cs))]})
		}
	}
	return cols
}

// idealInputs are the measured inputs of one configuration's M/M/c
// ideal: c servers, each taking serviceNs per request — c ÷ the
// configuration's measured capacity, the busy server's cost per request —
// plus the measured loopback floor. reason says why there is no ideal.
type idealInputs struct {
	c                   int
	capacity, serviceNs float64
	floorNs             float64 // 0 when the floor was not measured
	reason              string
}

// at returns the ideal percentile at the offered rate x, or NaN.
func (in idealInputs) at(x float64, pick func(*results.Theory) float64) float64 {
	if in.reason != "" {
		return math.NaN()
	}
	t := results.MMc(in.c, in.serviceNs, x)
	if !t.Stable {
		return math.NaN()
	}
	return pick(&t) + in.floorNs
}

// blocking reports whether the workload has blocking work.
func blocking(w results.Workload) bool {
	d, err := loadgen.ParseDurationDist(w.Block)
	return err == nil && d.Mean() > 0
}

// idealOf returns the measured inputs of the configuration's ideal, from
// its capacity points, its open-loop points' server count (Theory.C:
// the server's CPUs, at most its threads) and the run's floor.
func (a *Analysis) idealOf(cfg results.ModelConfig, open []*results.Group) idealInputs {
	in := idealInputs{}
	if a.floor != nil && a.floor.MeanNs > 0 {
		in.floorNs = a.floor.MeanNs
	}
	for _, g := range open {
		for _, p := range g.Measured() {
			if blocking(p.Workload) {
				in.reason = "blocking work: M/M/c does not apply (a blocked request holds no CPU)"
				return in
			}
			if p.Theory != nil && p.Theory.C > 0 && in.c == 0 {
				in.c = p.Theory.C
			}
		}
	}
	if in.c == 0 {
		in.reason = "no server count recorded (no M/M/c ideal in its points)"
		return in
	}
	cg := a.Capacity(cfg.Name)
	if cg == nil {
		in.reason = "no capacity point"
		return in
	}
	st := cg.Aggregate(results.Capacity).Stats
	if st.N == 0 || !(st.Median > 0) {
		in.reason = "no valid capacity"
		return in
	}
	in.capacity = st.Median
	in.serviceNs = float64(in.c) * 1e9 / st.Median
	return in
}

// dodgeSpan is the width, as a fraction of the largest offered rate, over
// which a panel's configurations are spread sideways.
const dodgeSpan = 0.04

// latencyFigure is figure 1: corrected p50 and p99 latency against
// offered load, a row per percentile and a column per model family, log
// y axes shared along a row, the medians with their intervals as error
// bars offset sideways, and each configuration's M/M/c ideal from
// measured inputs dashed.
func latencyFigure(a *Analysis) *Figure {
	cols := familyColumns(a.Configs)
	f := &Figure{
		Name:   "latency",
		Title:  "Latency (corrected for coordinated omission) vs offered load",
		Width:  vg.Length(3.3*float64(len(cols))+2.4) * vg.Inch,
		Height: 5.2 * vg.Inch,
		Header: []string{"config", "percentile", "fraction", "offered_rate_per_s", "n", "fewest_responses", "median_ns", "band_lo_ns", "band_hi_ns",
			"band", "ideal_ns", "ideal_c", "ideal_service_ns", "floor_ns", "invalid_reps", "invalid_values_ns", "skipped_reps", "plotted", "note"},
	}
	lp := newLatencyPlot(a, f, cols)
	for ri, lr := range latencyRows {
		lp.addRow(f, ri, lr)
	}
	if !slices.ContainsFunc(lp.values, func(v []float64) bool { return len(v) > 0 }) {
		return nil
	}
	f.Caption = lp.caption()
	f.note("Error bars: %s. They are drawn offset sideways by up to ±%.0f%% of the largest offered rate, in the configurations' order within a panel; the CSV has the true offered rates.", bandText, 100*dodgeSpan/2)
	f.noteRanges(lp.anyRange)
	f.build = lp.build
	return f
}

// latencyPlot is what the latency figure draws, gathered a point at a
// time: per row of panels (latencyRows) a series per configuration, the
// invalid repetitions' values per panel, and every value drawn in a row,
// which sets its y range.
type latencyPlot struct {
	a      *Analysis
	cols   []panelColumn
	colOf  map[string]int     // configuration → its column
	loads  [][]*results.Group // per configuration, its open-loop groups
	ideals []idealInputs      // per configuration, its M/M/c ideal
	series [][]latencySeries  // per row, a series per configuration
	invals [][]plotter.XYs    // per row and column, the invalid repetitions' own values
	values [][]float64        // per row, every value drawn
	// excludedReps counts the invalid repetitions left out, unsupported
	// the percentile points too few responses leave out.
	excludedReps, unsupported int
	anyIdeal, anyRange        bool
}

// latencySeries is one configuration's points in one row of panels.
type latencySeries struct {
	cfg results.ModelConfig
	pts []latencyPoint
}

// newLatencyPlot gathers the configurations' open-loop groups and ideals
// (noting in f why a configuration has no ideal) for a figure of the
// columns cols.
func newLatencyPlot(a *Analysis, f *Figure, cols []panelColumn) *latencyPlot {
	lp := &latencyPlot{
		a: a, cols: cols, colOf: map[string]int{},
		loads: make([][]*results.Group, len(a.Configs)), ideals: make([]idealInputs, len(a.Configs)),
		series: make([][]latencySeries, len(latencyRows)), invals: make([][]plotter.XYs, len(latencyRows)),
		values: make([][]float64, len(latencyRows)),
	}
	for ci, col := range cols {
		for _, cfg := range col.configs {
			lp.colOf[cfg.Name] = ci
		}
	}
	for ci, cfg := range a.Configs {
		lp.loads[ci] = a.openGroups(cfg.Name)
		for _, g := range lp.loads[ci] {
			lp.excludedReps += len(g.Invalid())
		}
		lp.ideals[ci] = a.idealOf(cfg, lp.loads[ci])
		if r := lp.ideals[ci].reason; r != "" && len(lp.loads[ci]) > 0 {
			f.note("%s: no M/M/c ideal drawn: %s", cfg.Name, r)
		}
	}
	return lp
}

// addRow adds row ri's points, percentile lr, of every configuration at
// every load: drawn or not, each a row of f's CSV.
func (lp *latencyPlot) addRow(f *Figure, ri int, lr latencyRow) {
	lp.invals[ri] = make([]plotter.XYs, len(lp.cols))
	for ci, cfg := range lp.a.Configs {
		s := latencySeries{cfg: cfg}
		for _, g := range lp.loads[ci] {
			if q, ok := lp.point(f, ri, lr, ci, g); ok {
				s.pts = append(s.pts, q)
			}
		}
		lp.series[ri] = append(lp.series[ri], s)
	}
}

// point adds group g of configuration ci to row ri, percentile lr: its
// notes, its invalid repetitions and its CSV row; it returns the point
// to draw, if it is drawn.
func (lp *latencyPlot) point(f *Figure, ri int, lr latencyRow, ci int, g *results.Group) (latencyPoint, bool) {
	cfg, in := lp.a.Configs[ci], lp.ideals[ci]
	x := g.OfferedRate()
	pt := aggregatePoint(g, lr.metric)
	ideal := math.NaN()
	if !math.IsNaN(x) {
		ideal = in.at(x, lr.ideal)
	}
	fewest := fewestResponses(g)
	pt.plotted = pt.plotted && !math.IsNaN(x)
	switch {
	case !pt.valid():
		pt.note = pt.missingNote()
	case math.IsNaN(x):
		pt.note = "no offered rate"
	case !supports(fewest, lr.quantile):
		pt.note = fmt.Sprintf("a repetition has %d responses, %s above the %s (fewer than %d): left out", fewest, TrimFloat(float64(fewest)*(1-lr.quantile)), lr.label, MinTailResponses)
		pt.plotted = false
		lp.unsupported++
		f.note("%s %s at %.2f: a repetition has only %d responses, too few for its %s (%d above it needed); left out", cfg.Name, lr.label, g.Fraction, fewest, lr.label, MinTailResponses)
	case pt.median() <= 0:
		pt.note = "median ≤ 0 cannot be shown on the log axis; left out"
		pt.plotted = false
		f.note("%s %s at %.2f: the median is %s, which a log axis cannot show; left out", cfg.Name, lr.label, g.Fraction, FormatNs(pt.median()))
	case pt.lo <= 0:
		pt.note = "band's lower edge ≤ 0 clamped to the axis"
		f.note("%s %s at %.2f: the band's lower edge is %s, clamped to the bottom of the log axis", cfg.Name, lr.label, g.Fraction, FormatNs(pt.lo))
	}
	if pt.plotted {
		lp.values[ri] = append(lp.values[ri], pt.median(), pt.hi)
		if pt.lo > 0 {
			lp.values[ri] = append(lp.values[ri], pt.lo)
		}
		lp.anyRange = lp.anyRange || pt.drawnRange()
	}
	if !math.IsNaN(ideal) {
		if pt.plotted {
			lp.values[ri] = append(lp.values[ri], ideal)
			lp.anyIdeal = true
		}
	} else if in.reason == "" && !math.IsNaN(x) {
		f.note("%s at %.2f: the measured M/M/c ideal is unstable there (offered rate ≥ capacity), so none is drawn", cfg.Name, g.Fraction)
	}
	// The invalid repetitions, each at its own value and offered rate:
	// drawn, in no line or band.
	for _, iv := range pt.invalid {
		px := iv.rate
		if !(px > 0) {
			px = x
		}
		if iv.v <= 0 || math.IsNaN(px) {
			f.note("%s %s at %.2f: invalid repetition %d is %s, which a log axis cannot show; left out", cfg.Name, lr.label, g.Fraction, iv.rep, FormatNs(iv.v))
			continue
		}
		col := lp.colOf[cfg.Name]
		lp.invals[ri][col] = append(lp.invals[ri][col], plotter.XY{X: px, Y: iv.v})
		lp.values[ri] = append(lp.values[ri], iv.v)
	}
	idealC, idealS, floor := "", "", ""
	if in.reason == "" {
		idealC, idealS = strconv.Itoa(in.c), results.FormatFloat(in.serviceNs)
	}
	if in.floorNs > 0 {
		floor = results.FormatFloat(in.floorNs)
	}
	f.addPointRow(&pt, cfg.Name, lr.label, results.FormatFloat(g.Fraction), results.FormatFloat(x), strconv.FormatInt(fewest, 10),
		results.FormatFloat(ideal), idealC, idealS, floor)
	return latencyPoint{x: x, median: pt.median(), lo: pt.lo, hi: pt.hi, band: pt.band, ideal: ideal}, pt.plotted
}

// caption states the figure's finding, its ideal and what it left out.
func (lp *latencyPlot) caption() string {
	c := "Corrected p50 (top) and p99 (bottom) latency against offered load, a panel per model family: medians across valid repetitions, error bars their 95% CI (or min–max range), offset sideways so that they do not cover each other"
	if finding := latencyFinding(lp.a, lp.loads, latencyRows[1]); finding != "" {
		c += ". " + finding
	}
	c += ". " + idealCaption(lp.a, lp.ideals, lp.loads, latencyRows[1], lp.anyIdeal)
	if lp.unsupported > 0 {
		c += fmt.Sprintf(" %d percentile point(s) left out: a repetition had fewer than %d responses above the percentile.", lp.unsupported, MinTailResponses)
	}
	return c + excludedCaption(lp.excludedReps)
}

// xmax returns the largest offered rate drawn: a measured load's, or an
// invalid repetition's own.
func (lp *latencyPlot) xmax() float64 {
	xmax := 0.0
	for ci := range lp.a.Configs {
		for _, g := range lp.loads[ci] {
			if x := g.OfferedRate(); !math.IsNaN(x) {
				xmax = math.Max(xmax, x)
			}
		}
	}
	for _, ex := range lp.invals {
		for _, e := range ex {
			for _, p := range e {
				xmax = math.Max(xmax, p.X)
			}
		}
	}
	return xmax
}

// build returns the figure's panels, a row per percentile and a column
// per family, and its legend (Figure.build).
func (lp *latencyPlot) build(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
	xmax := lp.xmax()
	grid := make([][]*plot.Plot, len(latencyRows))
	for ri, lr := range latencyRows {
		ymin, ymax := 1.0, 10.0
		if len(lp.values[ri]) > 0 {
			ymin, ymax, _ = logRange(lp.values[ri])
		}
		grid[ri] = make([]*plot.Plot, len(lp.cols))
		for ci, col := range lp.cols {
			title, xlabel, ylabel := "", "", ""
			if ri == 0 {
				title = col.title
			}
			if ri == len(latencyRows)-1 {
				xlabel = "offered load (req/s)"
			}
			if ci == 0 {
				ylabel = lr.label + " latency"
			}
			p := newPlot(tx(title), tx(xlabel), tx(ylabel))
			setLogY(p, ymin, ymax, func(v float64) string { return tx(FormatNs(v)) })
			p.X.Min, p.X.Max = 0, xmax*1.08
			p.X.Tick.Marker = linearTicks{Format: formatNumber}
			k, n := 0, len(col.configs)
			for _, s := range lp.series[ri] {
				if lp.colOf[s.cfg.Name] != ci {
					continue
				}
				dx := 0.0
				if n > 1 {
					dx = (float64(k)/float64(n-1) - 0.5) * dodgeSpan * xmax
				}
				addLatencySeries(p, s.pts, lp.a.style[s.cfg.Name], ymin, dx)
				k++
			}
			addExcluded(p, lp.invals[ri][ci])
			grid[ri][ci] = p
		}
	}
	return grid, lp.legend(tx)
}

// legend returns the figure's legend: the configurations, the ideal, the
// error bars and, if any is drawn, the invalid repetitions.
func (lp *latencyPlot) legend(tx func(string) string) *plot.Legend {
	l := newLegend()
	for _, cfg := range lp.a.Configs {
		st := lp.a.style[cfg.Name]
		l.Add(tx(cfg.Name), lineThumb{st.line()}, glyphThumb{st.glyph()})
	}
	grey := color.Gray{Y: 0x60}
	if lp.anyIdeal {
		l.Add(tx("M/M/c ideal, measured inputs"), lineThumb{draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: theoryDash}})
	}
	l.Add(tx("bar: 95% CI of median (or range)"), errThumb{draw.LineStyle{Color: grey, Width: vg.Points(0.9)}})
	if slices.ContainsFunc(lp.invals, func(ex []plotter.XYs) bool {
		return slices.ContainsFunc(ex, func(e plotter.XYs) bool { return len(e) > 0 })
	}) {
		l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
	}
	return &l
}

// addExcluded draws invalid repetitions' values as excludedGlyph, on top
// of everything else.
func addExcluded(p *plot.Plot, xys plotter.XYs) {
	if len(xys) == 0 {
		return
	}
	if sc, err := plotter.NewScatter(xys); err == nil {
		sc.GlyphStyle = excludedGlyph()
		p.Add(sc)
	}
}

// addLatencySeries draws one configuration's median line, markers and
// error bars, dx to the side of their offered rates, and its M/M/c ideal
// at the true offered rates, clamping error bars to ymin.
func addLatencySeries(p *plot.Plot, pts []latencyPoint, st seriesStyle, ymin, dx float64) {
	if len(pts) == 0 {
		return
	}
	med := make(plotter.XYs, len(pts))
	for i, q := range pts {
		med[i] = plotter.XY{X: q.x + dx, Y: q.median}
		eb := errBar{x: q.x + dx, y: q.median, lo: math.Max(q.lo, ymin), hi: q.hi}
		if bars, err := plotter.NewYErrorBars(eb); err == nil {
			bars.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(0.9)}
			bars.CapWidth = vg.Points(3)
			p.Add(bars)
		}
	}
	var ideal plotter.XYs
	for _, q := range pts {
		if !math.IsNaN(q.ideal) {
			ideal = append(ideal, plotter.XY{X: q.x, Y: q.ideal})
		}
	}
	if len(ideal) > 0 {
		if ln, err := plotter.NewLine(ideal); err == nil {
			ln.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(0.8), Dashes: theoryDash}
			p.Add(ln)
		}
	}
	if ln, sc, err := plotter.NewLinePoints(med); err == nil {
		ln.LineStyle = st.line()
		sc.GlyphStyle = st.glyph()
		p.Add(ln, sc)
	}
}

// errBar is one point with an asymmetric error, in the shape gonum's
// error bars read.
type errBar struct{ x, y, lo, hi float64 }

func (e errBar) Len() int                      { return 1 }
func (e errBar) XY(int) (float64, float64)     { return e.x, e.y }
func (e errBar) YError(int) (float64, float64) { return e.y - e.lo, e.hi - e.y }
func (e errBar) XError(int) (float64, float64) { return e.x - e.lo, e.hi - e.x }

// Legend thumbnails.
type (
	lineThumb  struct{ s draw.LineStyle }
	glyphThumb struct{ s draw.GlyphStyle }
	errThumb   struct{ s draw.LineStyle }
)

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.s, c.Min.X, y, c.Max.X, y)
}

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.s, c.Center()) }

func (t errThumb) Thumbnail(c *draw.Canvas) {
	x, cy := c.Center().X, c.Center().Y
	h, w := (c.Max.Y-c.Min.Y)/2, vg.Points(3)
	c.StrokeLine2(t.s, x, cy-h, x, cy+h)
	c.StrokeLine2(t.s, x-w/2, cy-h, x+w/2, cy-h)
	c.StrokeLine2(t.s, x-w/2, cy+h, x+w/2, cy+h)
}

// shownAt returns the row's statistics of g when the figure draws them
// (a valid median, > 0, on a sample that supports the percentile).
func shownAt(g *results.Group, row latencyRow) (results.Stats, bool) {
	st := g.Aggregate(row.metric).Stats
	ok := st.N > 0 && st.Median > 0 && supports(fewestResponses(g), row.quantile) && !math.IsNaN(g.OfferedRate())
	return st, ok
}

// latencyFinding says, from the data, which configuration has the lowest
// median of the row's percentile at each load, and where its interval
// overlaps the runner-up's: "lowest p99 at every load: netpoll (within
// the runner-up's interval at 0.10)".
func latencyFinding(a *Analysis, loads [][]*results.Group, row latencyRow) string {
	type entry struct {
		name string
		st   results.Stats
	}
	at := map[float64][]entry{}
	var fracs []float64
	for ci, cfg := range a.Configs {
		for _, g := range loads[ci] {
			st, ok := shownAt(g, row)
			if !ok {
				continue
			}
			if _, seen := at[g.Fraction]; !seen {
				fracs = append(fracs, g.Fraction)
			}
			at[g.Fraction] = append(at[g.Fraction], entry{cfg.Name, st})
		}
	}
	slices.Sort(fracs)
	var bests, overlaps, parts []string
	for _, fr := range fracs {
		es := at[fr]
		if len(es) < 2 {
			continue
		}
		slices.SortStableFunc(es, func(x, y entry) int { return cmpFloat(x.st.Median, y.st.Median) })
		_, hi, _ := es[0].st.Band()
		lo, _, _ := es[1].st.Band()
		over := hi >= lo
		bests = append(bests, es[0].name)
		label := fmt.Sprintf("%.2f", fr)
		if over {
			overlaps = append(overlaps, label)
		}
		part := es[0].name + " at " + label
		if over {
			part += " (within " + es[1].name + "'s interval)"
		}
		parts = append(parts, part)
	}
	if len(bests) == 0 {
		return ""
	}
	if len(slices.Compact(slices.Clone(bests))) == 1 && len(bests) > 1 {
		s := fmt.Sprintf("Lowest %s at every load: %s", row.label, bests[0])
		if len(overlaps) > 0 {
			s += fmt.Sprintf(" (within the runner-up's interval at %s)", JoinAnd(overlaps))
		}
		return s
	}
	return fmt.Sprintf("Lowest %s: %s", row.label, JoinAnd(parts))
}

// cmpFloat orders two numbers.
func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// idealCaption names the ideal's measured inputs with their values, the
// configurations it is not drawn for and why, and how far the row's
// percentile is from it at the chosen load.
func idealCaption(a *Analysis, ideals []idealInputs, loads [][]*results.Group, row latencyRow, anyIdeal bool) string {
	var svc []named
	cs := map[int]bool{}
	reasons := map[string][]string{}
	var reasonOrder []string
	for ci, cfg := range a.Configs {
		in := ideals[ci]
		if len(loads[ci]) == 0 {
			continue
		}
		if in.reason != "" {
			if _, ok := reasons[in.reason]; !ok {
				reasonOrder = append(reasonOrder, in.reason)
			}
			reasons[in.reason] = append(reasons[in.reason], cfg.Name)
			continue
		}
		svc = append(svc, named{cfg.Name, in.serviceNs})
		cs[in.c] = true
	}
	var b strings.Builder
	if len(svc) > 0 && anyIdeal {
		lo, hi := extremes(svc)
		cl := slices.Sorted(maps.Keys(cs))
		var cstr []string
		for _, c := range cl {
			cstr = append(cstr, strconv.Itoa(c))
		}
		fmt.Fprintf(&b, "Dashed: each configuration's M/M/c ideal from measured inputs, c = %s server(s) (the server's CPUs, at most its threads), each with the service time c ÷ the configuration's measured capacity", strings.Join(cstr, " or "))
		if lo.name == hi.name {
			fmt.Fprintf(&b, ", %s (%s)", FormatNs(lo.v), lo.name)
		} else {
			fmt.Fprintf(&b, ", from %s (%s) to %s (%s)", FormatNs(lo.v), lo.name, FormatNs(hi.v), hi.name)
		}
		if a.floor != nil && a.floor.MeanNs > 0 {
			fmt.Fprintf(&b, ", plus the loopback floor measured in this run, %s mean (zero work, idle server, %d requests)", FormatNs(a.floor.MeanNs), a.floor.Requests)
		} else {
			b.WriteString("; the loopback floor was not measured in this run (no validation.json), so the ideal is drawn without it")
		}
		b.WriteString(" (the nominal CPU work is not used)")
		// How far the measured percentile is from it at the chosen load.
		if a.HasLoad && !a.Equal {
			var ratios []named
			for ci, cfg := range a.Configs {
				for _, g := range loads[ci] {
					if g.Fraction != a.load {
						continue
					}
					st, ok := shownAt(g, row)
					id := ideals[ci].at(g.OfferedRate(), row.ideal)
					if ok && id > 0 {
						ratios = append(ratios, named{cfg.Name, st.Median / id})
					}
				}
			}
			if len(ratios) > 0 {
				lo, hi := extremes(ratios)
				if lo.name == hi.name {
					fmt.Fprintf(&b, "; at %.2f of capacity %s's %s is %.1f× its ideal", a.load, lo.name, row.label, lo.v)
				} else {
					fmt.Fprintf(&b, "; at %.2f of capacity the %s is from %.1f× its ideal (%s) to %.1f× (%s)", a.load, row.label, lo.v, lo.name, hi.v, hi.name)
				}
			}
		}
		b.WriteString(".")
	} else {
		b.WriteString("No M/M/c ideal is drawn.")
	}
	for _, r := range reasonOrder {
		fmt.Fprintf(&b, " No ideal for %s: %s.", JoinAnd(reasons[r]), r)
	}
	return b.String()
}

// panelGrid is a figure's small multiples: a row per workload in a run of
// several workloads (else one row), a column per model family, and in
// each cell the configurations it draws.
type panelGrid struct {
	rowLabels []string // the workloads; "" for a single row
	rowTitles []string // the workloads as a panel's title says them (the spectrum's)
	colTitles []string
	cells     [][][]results.ModelConfig
}

// panelGrid lays cfgs out: in a run of one workload, the columns of
// familyColumns (a family of more than maxPanelSeries configurations
// split); in a run of several, a row per workload (SuiteWorkloads) and a
// column per family, unsplit, as each workload runs each model once or a
// few times.
func (a *Analysis) panelGrid(cfgs []results.ModelConfig) panelGrid {
	ws := a.SuiteWorkloads()
	if len(ws) < 2 {
		g := panelGrid{rowLabels: []string{""}, cells: [][][]results.ModelConfig{nil}}
		for _, c := range familyColumns(cfgs) {
			g.colTitles = append(g.colTitles, c.title)
			g.cells[0] = append(g.cells[0], c.configs)
		}
		return g
	}
	famOf := familyOf
	var used []int // the families present, in order
	for _, c := range cfgs {
		if fi := famOf(c.Model); !slices.Contains(used, fi) {
			used = append(used, fi)
		}
	}
	slices.Sort(used)
	var g panelGrid
	for _, fi := range used {
		g.colTitles = append(g.colTitles, registry.Families[fi])
	}
	for _, w := range ws {
		row := make([][]results.ModelConfig, len(used))
		any := false
		for _, c := range cfgs {
			if slices.Contains(w.Runs, c.Name) {
				ci := slices.Index(used, famOf(c.Model))
				row[ci] = append(row[ci], c)
				any = true
			}
		}
		if any {
			g.rowLabels = append(g.rowLabels, w.Name)
			g.cells = append(g.cells, row)
		}
	}
	return g
}

// named is a configuration's value, for a caption's range.
type named struct {
	name string
	v    float64
}

// extremes returns the first lowest and the first highest of the
// non-empty xs.
func extremes(xs []named) (lo, hi named) {
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		if x.v < lo.v {
			lo = x
		}
		if x.v > hi.v {
			hi = x
		}
	}
	return lo, hi
}
