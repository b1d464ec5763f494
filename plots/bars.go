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
// repetitions as crosses at their own values, and tabulates them. In a
// run of several workloads the bars are small multiples: a panel per
// workload and metric (barPlot.arrange), each with that workload's
// configurations only, so that no bar stands beside one of another
// workload. The caption, which the caller writes, ends with excluded,
// the count of invalid repetitions the figure left out.
func barFigure(a *Analysis, name, title, where string, pick func(name string) *results.Group, panels []barPanel) (f *Figure, bp *barPlot, excluded int) {
	f = &Figure{
		Name:  name,
		Title: title,
		// One variable per column: the point's kind and its fraction (1
		// for capacity) apart, numbers as numbers.
		Header: []string{"config", "metric", "unit", "kind", "fraction", "n", "median", "band_lo", "band_hi", "band", "invalid_reps", "invalid_values", "skipped_reps", "plotted", "note"},
	}
	for _, cfg := range a.Configs {
		if g := pick(cfg.Name); g != nil {
			excluded += len(g.Invalid())
		}
	}
	vals := make([][]barValue, len(panels))
	haveAny, anyRange := false, false
	for pi, panel := range panels {
		for _, cfg := range a.Configs {
			bv, isRange := a.barPoint(f, cfg, where, pick(cfg.Name), panel.metric)
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
	bp = &barPlot{a: a, panels: panels, vals: vals, cells: a.barCells(vals, pick, where != "capacity")}
	bp.arrange()
	// Laid out at a thesis page's text width in every format, so that the
	// TeX picture is the PNG's and SVG's.
	f.Width = TexMaxWidth
	f.Height = bp.height()
	f.lay = bp.layout
	return f, bp, excluded
}

// barPoint returns configuration cfg's bar of metric m at g (nil: the
// configuration has no point where the figure is drawn), and whether its
// error bar is a min–max range; it notes in f why a bar is missing and
// writes the bar's CSV row.
func (a *Analysis) barPoint(f *Figure, cfg results.ModelConfig, where string, g *results.Group, m results.Metric) (barValue, bool) {
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
		if g := a.AtLoad(cfg.Name); a.Equal && g != nil {
			// The "fraction" column holds the absolute rate.
			kind, frac = string(results.KindRate), results.FormatFloat(g.RatePerS)
		}
	}
	f.addPointRow(&pt, cfg.Name, m.Name, m.Unit, kind, frac)
	return barValue{cfg: cfg, agg: pt.agg, ok: pt.plotted, excluded: pt.invalidByRep()}, pt.drawnRange()
}

// barCell is one workload's bars in a bar figure: a panel per metric.
type barCell struct {
	title string // the workload and its load; "" in a run of one workload
	idx   []int  // the configurations' indexes in the figure's values
}

// barCells returns the figure's workloads that have a bar or an invalid
// repetition to draw, each titled with its name and, at the equal load
// (atRate), the rate every configuration of it was measured at.
func (a *Analysis) barCells(vals [][]barValue, pick func(string) *results.Group, atRate bool) []barCell {
	var cells []barCell
	for _, w := range a.Workloads {
		var c barCell
		for i, v := range vals[0] {
			if !slices.Contains(w.Runs, v.cfg.Name) {
				continue
			}
			drawn := false
			for _, vs := range vals {
				drawn = drawn || vs[i].ok || len(vs[i].excluded) > 0
			}
			if drawn {
				c.idx = append(c.idx, i)
			}
		}
		if len(c.idx) == 0 {
			continue
		}
		if len(a.Workloads) > 1 {
			c.title = w.Name
			if atRate {
				c.title = a.workloadTitle(w)
			}
		}
		cells = append(cells, c)
	}
	return cells
}

// workloadTitle names a workload in a panel's title: "cpu · 19794
// req/s", with the absolute rate its configurations were measured at
// when the chosen load is the equal load (a range if they differ), else
// its name.
func (a *Analysis) workloadTitle(w Workload) string {
	var rates []float64
	for _, run := range w.Runs {
		if g := a.AtLoad(run); a.Equal && g != nil && g.Kind == results.KindRate && !slices.Contains(rates, g.RatePerS) {
			rates = append(rates, g.RatePerS)
		}
	}
	if len(rates) == 0 {
		return w.Name
	}
	slices.Sort(rates)
	r := fmt.Sprintf("%.0f", rates[0])
	if len(rates) > 1 {
		r += fmt.Sprintf("–%.0f", rates[len(rates)-1])
	}
	return w.Name + " · " + r + " req/s"
}

// barPlot is what a bar figure draws: per workload and metric, a bar
// per configuration.
type barPlot struct {
	a      *Analysis
	panels []barPanel
	vals   [][]barValue // per metric, a bar per configuration
	cells  []barCell
	// grid places the panels: grid[row][col] is a workload (cells index)
	// and a metric (panels index), or {-1, -1} for an empty cell.
	grid [][][2]int
	// shared says, per metric, whether its panels share one value axis.
	shared []bool
	// sameNames says that every panel draws the same configuration
	// names in the same order: only the first column writes them.
	sameNames bool
}

// barSharedSpread is how far apart the workloads' largest values may be
// (as a ratio) for their panels to share a value axis: beyond it the
// smallest workload's bars would be slivers, so each panel gets its own.
const barSharedSpread = 3

// barColumns is how many of n panels a row holds when they are wrapped
// into a grid (a figure of one metric or of one workload).
func barColumns(n int) int {
	switch {
	case n <= 1:
		return 1
	case n <= 6:
		return 2
	}
	return 3
}

// wrapGrid places n panels in rows of barColumns(n), in order: each
// cell a panel's index, or -1 for an empty cell at the end.
func wrapGrid(n int) [][]int {
	cols := barColumns(n)
	var grid [][]int
	for k := range n {
		if k%cols == 0 {
			grid = append(grid, slices.Repeat([]int{-1}, cols))
		}
		grid[len(grid)-1][k%cols] = k
	}
	return grid
}

// isPanel reports whether a wrapGrid cell holds a panel (not -1).
func isPanel(k int) bool { return k >= 0 }

// gridPanels builds a wrapped figure's rows of panels from its grid of
// cells: nil for an empty cell (filled false), else panel's plot of the
// cell in column c, axis true when no panel stands below it (its value
// axis's label is the column's). The bar, mechanism and thread figures
// lay out their grids with it.
func gridPanels[C any](grid [][]C, filled func(C) bool, panel func(cell C, c int, axis bool) *plot.Plot) [][]*plot.Plot {
	var rows [][]*plot.Plot
	for r, row := range grid {
		var ps []*plot.Plot
		for c, cell := range row {
			if !filled(cell) {
				ps = append(ps, nil)
				continue
			}
			below := r+1 < len(grid) && filled(grid[r+1][c])
			ps = append(ps, panel(cell, c, !below))
		}
		rows = append(rows, ps)
	}
	return rows
}

// wrappedHeight is the height of a figure of bar panels in rows: its
// title, its rows (a bar pitch for each of the most bars a panel has,
// the panel's title and axis around them) and the legend's band under
// them unless legendInCell (an empty last cell holds it). The bar and
// mechanism figures share it.
func wrappedHeight(rows, bars int, legendInCell bool) vg.Length {
	pitch := 0.2
	if rows > 3 {
		pitch = 0.15
	}
	h := 0.55 + float64(rows)*(pitch*float64(bars)+0.6)
	if !legendInCell {
		h += 0.6 // the legend under the panels
	}
	return vg.Length(h) * vg.Inch
}

// arrange lays out the panels — a figure of one metric (or of one
// workload): its workloads' (metrics') panels wrapped into rows of
// barColumns; else a row per workload, a column per metric — and
// decides which panels share a value axis and which write the names.
func (bp *barPlot) arrange() {
	empty := [2]int{-1, -1}
	var wrap [][2]int // the panels to wrap into rows, if one dimension is 1
	switch {
	case len(bp.panels) == 1:
		for ci := range bp.cells {
			wrap = append(wrap, [2]int{ci, 0})
		}
	case len(bp.cells) == 1:
		for pi := range bp.panels {
			wrap = append(wrap, [2]int{0, pi})
		}
	default:
		for ci := range bp.cells {
			var row [][2]int
			for pi := range bp.panels {
				row = append(row, [2]int{ci, pi})
			}
			bp.grid = append(bp.grid, row)
		}
	}
	for _, row := range wrapGrid(len(wrap)) {
		var r [][2]int
		for _, k := range row {
			at := empty
			if k >= 0 {
				at = wrap[k]
			}
			r = append(r, at)
		}
		bp.grid = append(bp.grid, r)
	}
	bp.shared = make([]bool, len(bp.panels))
	for pi := range bp.panels {
		lo, hi := math.Inf(1), 0.0
		for ci := range bp.cells {
			if m := bp.extent(ci, pi); m > 0 {
				lo, hi = math.Min(lo, m), math.Max(hi, m)
			}
		}
		bp.shared[pi] = hi <= barSharedSpread*lo
	}
	bp.sameNames = true
	for _, c := range bp.cells[1:] {
		bp.sameNames = bp.sameNames && slices.Equal(bp.names(c), bp.names(bp.cells[0]))
	}
}

// names returns the configuration names a cell's panels write: their
// names within the workload.
func (bp *barPlot) names(c barCell) []string {
	var out []string
	for _, i := range c.idx {
		out = append(out, bp.a.BaseName(bp.vals[0][i].cfg.Name))
	}
	return out
}

// extent is the largest value panel (ci, pi) draws: whisker ends, bars
// and invalid repetitions.
func (bp *barPlot) extent(ci, pi int) float64 {
	m := 0.0
	for _, i := range bp.cells[ci].idx {
		v := bp.vals[pi][i]
		if v.ok {
			_, hi, _ := v.agg.Stats.Band()
			m = math.Max(m, math.Max(hi, v.agg.Stats.Median))
		}
		for _, x := range v.excluded {
			m = math.Max(m, x)
		}
	}
	return m
}

// height is the figure's height (wrappedHeight): a bar each
// configuration of a cell.
func (bp *barPlot) height() vg.Length {
	n := 0
	for _, c := range bp.cells {
		n = max(n, len(c.idx))
	}
	last := bp.grid[len(bp.grid)-1]
	return wrappedHeight(len(bp.grid), n, last[len(last)-1][0] < 0)
}

// layout returns the figure's grid of panels and its legend
// (Figure.lay).
func (bp *barPlot) layout(tx func(string) string) layout {
	rows := gridPanels(bp.grid, func(at [2]int) bool { return at[0] >= 0 }, func(at [2]int, c int, axis bool) *plot.Plot {
		return bp.panel(tx, at[0], at[1], c == 0 || !bp.sameNames, axis)
	})
	l := newLegend()
	l.Add(tx("bar: median of valid reps"), &bars{Color: color.Gray{Y: 0xC0}, Line: draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}})
	l.Add(tx("whisker: 95% CI (or range)"), lineThumb{draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}})
	for _, vs := range bp.vals {
		if slices.ContainsFunc(vs, func(v barValue) bool { return len(v.excluded) > 0 }) {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
			break
		}
	}
	return layout{panels: rows, legend: &l}
}

// panel draws workload ci's bars of metric pi: its configurations top
// down in the run's order, their names on the left if names, the
// metric's axis label under it if axis.
func (bp *barPlot) panel(tx func(string) string, ci, pi int, names, axis bool) *plot.Plot {
	cell, panel := bp.cells[ci], bp.panels[pi]
	title := cell.title
	switch {
	case len(bp.panels) == 1:
	case title == "":
		title = panel.title // one workload: the panels are the metrics
	case ci == 0 && len(bp.cells) > 1:
		// A row per workload, a column per metric: the metric heads its
		// column.
		title = panel.title + "\n" + title
	}
	xlabel := ""
	if axis {
		xlabel = panel.axis
	}
	p := newPlot(tx(title), tx(xlabel), "")
	p.X.Min = 0
	p.X.Tick.Marker = linearTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
	n := len(cell.idx)
	labels := make([]string, n)
	var crosses plotter.XYs // the invalid repetitions, drawn last, on top
	for k, i := range cell.idx {
		bv := bp.vals[pi][i]
		pos := float64(n - 1 - k) // the first configuration on top
		if names {
			labels[n-1-k] = tx(bp.a.BaseName(bv.cfg.Name))
		}
		right := 0.0
		for _, rep := range slices.Sorted(maps.Keys(bv.excluded)) {
			crosses = append(crosses, plotter.XY{X: bv.excluded[rep], Y: pos})
			right = math.Max(right, bv.excluded[rep])
		}
		if bv.ok {
			addBar(p, bv.agg.Stats, pos, bp.a.style[bv.cfg.Name], right, tx)
		}
	}
	addExcluded(p, crosses)
	top := bp.extent(ci, pi)
	if bp.shared[pi] {
		for c := range bp.cells {
			top = math.Max(top, bp.extent(c, pi))
		}
	}
	// Room for the whiskers' caps and the medians written beside them
	// (unpadded: a quarter of the panel's width).
	p.X.Max = math.Max(top, p.X.Max) * 1.35
	if p.X.Max <= 0 {
		p.X.Max = 1
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Width = 0
	return p
}

// axesText says in a caption how the panels' value axes are scaled: one
// shared axis per metric, or each panel its own.
func (bp *barPlot) axesText() string {
	if len(bp.cells) < 2 {
		return ""
	}
	var own []string
	for pi, sh := range bp.panels {
		if !bp.shared[pi] {
			own = append(own, sh.title)
		}
	}
	switch {
	case len(own) == 0:
		return " Every panel of a metric shares its value axis."
	case len(own) == len(bp.panels):
		return fmt.Sprintf(" Each panel has its own value axis: the workloads' values differ by more than %d×.", barSharedSpread)
	}
	return fmt.Sprintf(" The panels of %s each have their own value axis (the workloads' values differ by more than %d×); those of the other metrics share one.", JoinAnd(own), barSharedSpread)
}

// addBar draws one horizontal bar at pos: the median of st in style, its
// band as a whisker, and the median as text right of the whisker and of
// the invalid repetitions' crosses at or below right (the bar's values).
func addBar(p *plot.Plot, st results.Stats, pos float64, style seriesStyle, right float64, tx func(string) string) {
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
		XYs:    plotter.XYs{{X: math.Max(right, math.Max(hi, st.Median)), Y: pos}},
		Labels: []string{tx(TrimFloat(st.Median))},
	}); err == nil {
		sty := textStyle(fontSmall)
		sty.YAlign = draw.YCenter
		lb.TextStyle = []text.Style{sty}
		lb.Offset = vg.Point{X: vg.Points(6)}
		p.Add(unpadded{lb})
	}
}

// unpadded draws a plotter without asking for room outside the data
// area: gonum shrinks a panel's data area to fit every label's box, by
// a different amount in each panel, which plot.Align cannot line up
// (the grid then ran off the figure's right edge). The panel leaves
// room for the labels on its value axis instead (barPlot.panel).
type unpadded struct{ plot.Plotter }

// capacityFigure is figure 3: capacity (closed-loop saturation rate) per
// configuration.
func capacityFigure(a *Analysis) *Figure {
	f, bp, excluded := barFigure(a, "capacity", "Capacity (closed-loop saturation)", "capacity", a.Capacity,
		[]barPanel{{metric: results.Capacity, title: "capacity", axis: "req/s"}})
	if f == nil {
		return nil
	}
	f.Caption = "Capacity per configuration: medians of the valid closed-loop saturation runs, whiskers their 95% intervals. " +
		Capitalize(a.perWorkload(bp.vals[0], func(vs []barValue) string {
			best, worst := -1, -1
			for i, v := range vs {
				if !v.ok {
					continue
				}
				if best < 0 || v.agg.Stats.Median > vs[best].agg.Stats.Median {
					best = i
				}
				if worst < 0 || v.agg.Stats.Median < vs[worst].agg.Stats.Median {
					worst = i
				}
			}
			if best < 0 {
				return "no configuration has a valid closed-loop saturation run. "
			}
			b, w := vs[best], vs[worst]
			s := fmt.Sprintf("highest is %s at %s", a.BaseName(b.cfg.Name), StatText(b.agg.Stats, "req/s"))
			if best != worst {
				s += fmt.Sprintf(", lowest %s at %s (%.2f× the highest)", a.BaseName(w.cfg.Name), StatText(w.agg.Stats, "req/s"),
					w.agg.Stats.Median/b.agg.Stats.Median)
			}
			if r := runnerUpText(a, vs, true, "req/s"); r != "" {
				s += "; " + r
			}
			return s + ". "
		}))
	f.Caption = strings.TrimSpace(f.Caption) + bp.axesText()
	f.Caption += excludedCaption(excluded)
	return f
}

// runnerUpText says whether the best configuration of a panel (the
// highest median if higher is better, else the lowest) is clear of the
// runner-up: "clear of the runner-up X (v [lo, hi]) across
// repetitions", or "within the runner-up X's interval (v [lo, hi])"
// when the two intervals overlap. unit follows the runner-up's median;
// "" if fewer than two configurations have a value.
func runnerUpText(a *Analysis, vals []barValue, higherIsBetter bool, unit string) string {
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
	v := StatText(r, unit)
	best, runner := a.BaseName(ok[0].cfg.Name), a.BaseName(ok[1].cfg.Name)
	if overlap {
		return fmt.Sprintf("%s is within the runner-up %s's interval (%s)", best, runner, v)
	}
	return fmt.Sprintf("%s is clear of the runner-up %s (%s) across repetitions", best, runner, v)
}

// StatText is a median with its unit and interval, as the summary
// writes it (FormatStat): "48200 req/s [46600, 49400]".
func StatText(s results.Stats, unit string) string {
	if s.N == 0 || unit == "" || unit == "ns" {
		return FormatStat(s, unit)
	}
	med, rest, _ := strings.Cut(FormatStat(s, unit), " ")
	return strings.TrimSpace(med + " " + unit + " " + rest)
}

// perWorkload applies text to vals, or in a run of several workloads to
// each workload's configurations, prefixing each part with the workload's
// name (configurations of different workloads do not compete).
func (a *Analysis) perWorkload(vals []barValue, text func([]barValue) string) string {
	ws := a.SuiteWorkloads()
	if len(ws) < 2 {
		return text(vals)
	}
	var b strings.Builder
	b.WriteString("per workload: ")
	for _, w := range ws {
		var vs []barValue
		for _, v := range vals {
			if slices.Contains(w.Runs, v.cfg.Name) {
				vs = append(vs, v)
			}
		}
		if t := text(vs); t != "" {
			b.WriteString(w.Name + ": " + t)
		}
	}
	return b.String()
}

// lowestText names the configuration with the lowest median of a panel
// and how it stands against the runner-up: "lowest is proactor (22.4
// µs/req [21, 23]); proactor is clear of …".
func lowestText(a *Analysis, vals []barValue, unit string) string {
	best := -1
	for i, v := range vals {
		if v.ok && (best < 0 || v.agg.Stats.Median < vals[best].agg.Stats.Median) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	s := fmt.Sprintf("lowest is %s (%s)", a.BaseName(vals[best].cfg.Name), StatText(vals[best].agg.Stats, unit))
	if r := runnerUpText(a, vals, false, unit); r != "" {
		s += "; " + r
	}
	return s + ". "
}

// costFigure draws per-request costs at the chosen load; its caption
// names the lowest configuration of each workload and points to the
// Claims table when the figure draws a claim's metric.
func costFigure(a *Analysis, name, title string, panels []barPanel) *Figure {
	if !a.HasLoad {
		return nil
	}
	f, bp, excluded := barFigure(a, name, fmt.Sprintf("%s at %s", title, a.loadTitle()), "open "+a.LoadShort(), a.AtLoad, panels)
	if f == nil {
		return nil
	}
	unit := panels[0].metric.Unit
	if i := slices.IndexFunc(results.Claims, func(c results.Claim) bool { return c.Metric.Name == panels[0].metric.Name }); i >= 0 {
		unit = results.Claims[i].Unit
	}
	f.Caption = fmt.Sprintf("%s per configuration at %s: medians of the valid repetitions, whiskers their 95%% intervals. %s",
		title, a.LoadText(), Capitalize(a.perWorkload(bp.vals[0], func(v []barValue) string { return lowestText(a, v, unit) })))
	f.Caption = strings.TrimSpace(f.Caption) + bp.axesText()
	for _, p := range panels {
		if slices.ContainsFunc(results.Claims, func(c results.Claim) bool { return c.Metric.Name == p.metric.Name }) {
			f.Caption += " The Claims section tests the patterns' claims about this cost, workload by workload."
			break
		}
	}
	f.Caption += excludedCaption(excluded)
	return f
}

// ctxswFigure is figure 4: context switches per request.
func ctxswFigure(a *Analysis) *Figure {
	return costFigure(a, "ctxsw", "Server context switches per request", []barPanel{
		{metric: results.CtxswPerReq, title: "all", axis: "switches / request"},
		{metric: results.VoluntaryCtxswPerReq, title: "voluntary", axis: "switches / request"},
		{metric: results.InvoluntaryCtxswPerReq, title: "involuntary", axis: "switches / request"},
	})
}

// cpuFigure is figure 5: server CPU per request.
func cpuFigure(a *Analysis) *Figure {
	return costFigure(a, "cpu", "Server CPU time per request", []barPanel{
		{metric: results.CPUPerReq, title: "user + system", axis: "µs / request"},
	})
}

// allocsFigure is figure 6: allocations per request.
func allocsFigure(a *Analysis) *Figure {
	return costFigure(a, "allocs", "Server heap allocations per request", []barPanel{
		{metric: results.AllocsPerReq, title: "objects", axis: "allocations / request"},
		{metric: results.BytesPerReq, title: "bytes", axis: "bytes / request"},
	})
}
