package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/results"
)

// latencyPanel is one percentile of the latency figure.
type latencyPanel struct {
	metric results.Metric
	label  string
	theory func(*results.Theory) float64
}

var latencyPanels = []latencyPanel{
	{results.LatencyP50, "p50", func(t *results.Theory) float64 { return t.P50Ns }},
	{results.LatencyP99, "p99", func(t *results.Theory) float64 { return t.P99Ns }},
	{results.LatencyP999, "p99.9", func(t *results.Theory) float64 { return t.P999Ns }},
}

// latencyPoint is one plotted load of one configuration in one panel: the
// median and band of the valid repetitions.
type latencyPoint struct {
	x, median, lo, hi float64
	band              string
	theory            float64 // NaN if none
}

// theoryAt returns the median of the group's stable M/M/c ideal values
// (the ideal is computed per repetition, at that repetition's rate), or
// NaN. Invalid repetitions count here, as in Group.OfferedRate: the ideal
// follows from the offered rate and the server's calibration, inputs of
// the point, not from the measurement the verdict judges.
func theoryAt(g *results.Group, pick func(*results.Theory) float64) float64 {
	var xs []float64
	for _, p := range g.Measured() {
		if t := p.Theory; t != nil && t.Stable {
			if v := pick(t); v > 0 && !math.IsInf(v, 0) {
				xs = append(xs, v)
			}
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return results.Summarize(xs).Median
}

// latencyFigure is figure 1: corrected latency (p50, p99, p99.9) against
// offered load, per configuration, on log y axes, with the median's
// confidence band across repetitions and the M/M/c ideal dashed beside.
func latencyFigure(a *analysis) *Figure {
	f := &Figure{
		Name:   "latency",
		Title:  "Latency (corrected for coordinated omission) vs offered load",
		Width:  11 * vg.Inch,
		Height: 4 * vg.Inch,
		Header: []string{"config", "percentile", "fraction", "offered_rate_per_s", "n", "median_ns", "band_lo_ns", "band_hi_ns",
			"band", "theory_ns", "invalid_reps", "invalid_values_ns", "skipped_reps", "plotted", "note"},
	}
	type series struct {
		cfg results.ModelConfig
		pts []latencyPoint
	}
	panels := make([][]series, len(latencyPanels))
	// excluded are the invalid repetitions' own values, per panel.
	excluded := make([]plotter.XYs, len(latencyPanels))
	excludedReps := 0
	var all []float64
	anyTheory, anyRange := false, false
	var worst struct {
		name  string
		ratio float64
		frac  float64
	}
	// What every panel needs of a configuration's open-loop groups,
	// computed once.
	type openLoad struct {
		g        *results.Group
		x        float64 // the offered rate
		unstable bool    // some point's M/M/c ideal is unstable
	}
	loads := make([][]openLoad, len(a.configs))
	for ci, cfg := range a.configs {
		for _, g := range a.openGroups(cfg.Name) {
			loads[ci] = append(loads[ci], openLoad{g: g, x: g.OfferedRate(), unstable: hasUnstableTheory(g)})
			excludedReps += len(g.Invalid())
		}
	}
	for pi, lp := range latencyPanels {
		for ci, cfg := range a.configs {
			s := series{cfg: cfg}
			for _, ol := range loads[ci] {
				g, x := ol.g, ol.x
				agg := g.Aggregate(lp.metric)
				st := agg.Stats
				lo, hi, band := st.Band()
				th := theoryAt(g, lp.theory)
				lpnt := latencyPoint{x: x, median: st.Median, lo: lo, hi: hi, band: band, theory: th}
				note, plotted := "", st.N > 0 && !math.IsNaN(x)
				switch {
				case st.N == 0 && agg.Excluded > 0:
					note = "no valid repetition"
				case st.N == 0:
					note = "no measured value"
				case math.IsNaN(x):
					note = "no offered rate"
				case st.Median <= 0:
					note = "median ≤ 0 cannot be shown on the log axis; left out"
					plotted = false
					f.note("%s %s at %.2f: the median is %s, which a log axis cannot show; left out", cfg.Name, lp.label, g.Fraction, formatNs(st.Median))
				case lo <= 0:
					note = "band's lower edge ≤ 0 clamped to the axis"
					f.note("%s %s at %.2f: the band's lower edge is %s, clamped to the bottom of the log axis", cfg.Name, lp.label, g.Fraction, formatNs(lo))
				}
				if plotted {
					s.pts = append(s.pts, lpnt)
					all = append(all, st.Median, hi)
					if lo > 0 {
						all = append(all, lo)
					}
					if !math.IsNaN(th) {
						all = append(all, th)
						anyTheory = true
						if pi == 1 && th > 0 && st.Median/th > worst.ratio {
							worst.name, worst.ratio, worst.frac = cfg.Name, st.Median/th, g.Fraction
						}
					}
					anyRange = anyRange || band == results.BandRange
				}
				if math.IsNaN(th) && ol.unstable {
					f.note("%s at %.2f: the M/M/c ideal is unstable (utilization ≥ 1), so no ideal is drawn there", cfg.Name, g.Fraction)
				}
				// The invalid repetitions, each at its own value and offered
				// rate: drawn, in no line or band.
				vals := map[int]float64{}
				for _, p := range g.Invalid() {
					v, ok := lp.metric.Value(p)
					if !ok {
						continue
					}
					vals[p.Repetition] = v
					px := p.OfferedRatePerS
					if !(px > 0) {
						px = x
					}
					if v <= 0 || math.IsNaN(px) {
						f.note("%s %s at %.2f: invalid repetition %d is %s, which a log axis cannot show; left out", cfg.Name, lp.label, g.Fraction, p.Repetition, formatNs(v))
						continue
					}
					excluded[pi] = append(excluded[pi], plotter.XY{X: px, Y: v})
					all = append(all, v)
				}
				if agg.Excluded > 0 {
					note = joinNote(note, fmt.Sprintf("%d invalid repetition(s) excluded (%s)", agg.Excluded, strings.Join(agg.ExcludedReasons, ", ")))
				}
				f.addRow(cfg.Name, lp.label, results.FormatFloat(g.Fraction), results.FormatFloat(x), strconv.Itoa(st.N),
					results.FormatFloat(st.Median), results.FormatFloat(lo), results.FormatFloat(hi), band,
					results.FormatFloat(th), strconv.Itoa(agg.Excluded), excludedValues(vals), strconv.Itoa(agg.Skipped), strconv.FormatBool(plotted), note)
			}
			panels[pi] = append(panels[pi], s)
		}
	}
	if len(all) == 0 {
		return nil
	}
	ymin, ymax, _ := logRange(all)
	xmax := 0.0
	for pi, ps := range panels {
		for _, s := range ps {
			for _, p := range s.pts {
				xmax = math.Max(xmax, p.x)
			}
		}
		for _, e := range excluded[pi] {
			xmax = math.Max(xmax, e.X)
		}
	}

	f.Caption = fmt.Sprintf("Corrected p50, p99 and p99.9 latency against offered load for %d configuration(s): medians across valid repetitions, shaded bands their 95%% CI (or min–max range)", len(a.configs))
	if anyTheory && worst.name != "" {
		f.Caption += fmt.Sprintf("; dashed: the M/M/c ideal, from which %s departs most (p99 %.1f× the ideal at %.2f of capacity)", worst.name, worst.ratio, worst.frac)
	}
	f.Caption += "." + excludedCaption(excludedReps)
	f.note("Bands: %s.", bandText)
	if anyRange {
		f.note("Some bands are min–max ranges, not confidence intervals (see the CSV's band column).")
	}

	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		row := make([]*plot.Plot, len(latencyPanels))
		for pi, lp := range latencyPanels {
			p := newPlot(tx(lp.label+" latency"), tx("offered load (req/s)"), tx("latency"))
			setLogY(p, ymin, ymax, func(v float64) string { return tx(formatNs(v)) })
			p.X.Min, p.X.Max = 0, xmax*1.05
			p.X.Tick.Marker = linearTicks{Format: formatNumber}
			for _, s := range panels[pi] {
				addLatencySeries(p, s.pts, a.style[s.cfg.Name], ymin)
			}
			addExcluded(p, excluded[pi])
			row[pi] = p
		}
		l := newLegend()
		for _, cfg := range a.configs {
			st := a.style[cfg.Name]
			ln, gl := st.line(), st.glyph()
			l.Add(tx(cfg.Name), lineThumb{ln}, glyphThumb{gl})
		}
		if anyTheory {
			l.Add(tx("M/M/c ideal"), lineThumb{draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1), Dashes: theoryDash}})
		}
		l.Add(tx("band: 95% CI of median (or range)"), bandThumb{color.NRGBA{R: 0x60, G: 0x60, B: 0x60, A: 0x50}})
		if slices.ContainsFunc(excluded, func(e plotter.XYs) bool { return len(e) > 0 }) {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
		}
		return [][]*plot.Plot{row}, &l
	}
	return f
}

// hasUnstableTheory reports whether some measured point of g has an
// M/M/c ideal that is unstable.
func hasUnstableTheory(g *results.Group) bool {
	for _, p := range g.Measured() {
		if p.Theory != nil && !p.Theory.Stable {
			return true
		}
	}
	return false
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
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

// addLatencySeries draws one configuration's band, median line and
// markers, and its M/M/c ideal, clamping band edges to ymin.
func addLatencySeries(p *plot.Plot, pts []latencyPoint, st seriesStyle, ymin float64) {
	if len(pts) == 0 {
		return
	}
	med := make(plotter.XYs, len(pts))
	for i, q := range pts {
		med[i] = plotter.XY{X: q.x, Y: q.median}
	}
	if len(pts) >= 2 {
		poly := make(plotter.XYs, 0, 2*len(pts))
		for _, q := range pts {
			poly = append(poly, plotter.XY{X: q.x, Y: q.hi})
		}
		for i := len(pts) - 1; i >= 0; i-- {
			poly = append(poly, plotter.XY{X: pts[i].x, Y: math.Max(pts[i].lo, ymin)})
		}
		if band, err := plotter.NewPolygon(poly); err == nil {
			band.Color = st.fill(0x40)
			band.LineStyle.Width = 0
			p.Add(band)
		}
	} else {
		q := pts[0]
		eb := errBar{x: q.x, y: q.median, lo: math.Max(q.lo, ymin), hi: q.hi}
		if bars, err := plotter.NewYErrorBars(eb); err == nil {
			bars.LineStyle = st.line()
			p.Add(bars)
		}
	}
	var th plotter.XYs
	for _, q := range pts {
		if !math.IsNaN(q.theory) {
			th = append(th, plotter.XY{X: q.x, Y: q.theory})
		}
	}
	if len(th) > 0 {
		if ln, err := plotter.NewLine(th); err == nil {
			ln.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(1), Dashes: theoryDash}
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
	bandThumb  struct{ c color.Color }
)

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.s, c.Min.X, y, c.Max.X, y)
}

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.s, c.Center()) }

func (t bandThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(t.c, pts)
}
