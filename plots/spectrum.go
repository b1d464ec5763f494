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

	"concbench/results"
)

// spectrumSteps is the number of quantiles per decade of 1/(1-p).
const spectrumSteps = 20

// spectrumMaxX caps 1/(1-p) at the 99.9999th percentile.
const spectrumMaxX = 1e6

// spectrumFigure is figure 2: the corrected latency percentile spectrum
// (x = 1/(1-p), log) at the chosen load, every configuration, from the
// histograms merged across the valid repetitions; each invalid
// repetition's own p50, p90, p99 and p99.9 are drawn as crosses.
func spectrumFigure(a *Analysis) *Figure {
	f, _ := newSpectrum(a)
	return f
}

// newSpectrum returns the spectrum figure and what it draws; nil if the
// run has nothing to draw.
func newSpectrum(a *Analysis) (*Figure, *spectrumPlot) {
	if !a.HasLoad {
		return nil, nil
	}
	f := &Figure{
		Name:   "spectrum",
		Title:  fmt.Sprintf("Latency percentile spectrum at %s (corrected, valid repetitions merged)", a.loadTitle()),
		Width:  11 * vg.Inch,
		Height: 4.2 * vg.Inch,
		Header: []string{"config", "fraction", "percentile_pct", "inverse_tail", "latency_ns", "reps_merged", "invalid_reps", "requests", "dropped", "out_of_range", "plotted", "note"},
	}
	sp := &spectrumPlot{a: a, excluded: map[string]plotter.XYs{}, merged: map[string]int64{}, xmax: 10}
	for _, cfg := range a.Configs {
		sp.addConfig(f, cfg)
	}
	if len(sp.ys) == 0 {
		return nil, nil
	}
	var cfgs []results.ModelConfig
	for _, c := range a.Configs {
		if sp.merged[c.Name] > 0 || len(sp.excluded[c.Name]) > 0 {
			cfgs = append(cfgs, c)
		}
	}
	sp.grid = a.panelGrid(cfgs)
	for _, l := range sp.grid.rowLabels {
		title := l
		if i := slices.IndexFunc(a.Workloads, func(w Workload) bool { return w.Name == l }); i >= 0 && l != "" {
			title = a.workloadTitle(a.Workloads[i])
		}
		sp.grid.rowTitles = append(sp.grid.rowTitles, title)
	}
	// At a thesis page's text width in every format, each column's
	// legend under it (a name is found under the panel that draws it):
	// a panel row of the suite's grid is short, its legends are not
	// repeated per row.
	f.Width = TexMaxWidth
	rowHeight := 2.4
	if len(sp.grid.rowLabels) > 1 {
		rowHeight = 1.45
	}
	entries := 0
	for ci := range sp.grid.colTitles {
		entries = max(entries, len(sp.columnConfigs(ci))+1)
	}
	f.Height = vg.Length(0.55+rowHeight*float64(len(sp.grid.rowLabels))+0.17*float64(entries)+0.15) * vg.Inch
	f.Caption = sp.caption()
	f.lay = sp.layout
	return f, sp
}

// columnConfigs returns the names within their workload of the
// configurations column ci draws in any row, once each, in order.
func (sp *spectrumPlot) columnConfigs(ci int) []results.ModelConfig {
	var out []results.ModelConfig
	for _, row := range sp.grid.cells {
		for _, c := range row[ci] {
			if !slices.ContainsFunc(out, func(o results.ModelConfig) bool { return sp.a.BaseName(o.Name) == sp.a.BaseName(c.Name) }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// spectrumPlot is what the spectrum figure draws, gathered a
// configuration at a time.
type spectrumPlot struct {
	a *Analysis
	// curves are the configurations' merged spectra; excluded the
	// invalid repetitions' own percentiles, by configuration.
	curves   []spectrumCurve
	excluded map[string]plotter.XYs
	// excludedReps counts the invalid repetitions left out of the
	// merged histograms; merged the requests merged, per configuration.
	excludedReps int
	merged       map[string]int64
	ys           []float64 // every latency drawn
	xmax         float64   // the largest 1/(1-p) drawn
	grid         panelGrid
}

// spectrumCurve is one configuration's merged spectrum.
type spectrumCurve struct {
	cfg results.ModelConfig
	xys plotter.XYs
}

// addConfig adds configuration cfg at the chosen load: its merged
// spectrum, as far as its sample supports, and its invalid repetitions'
// own percentiles, each a row of f's CSV; it notes in f what it could
// not draw.
func (sp *spectrumPlot) addConfig(f *Figure, cfg results.ModelConfig) {
	a := sp.a
	g := a.AtLoad(cfg.Name)
	if g == nil {
		f.note("%s has no measured point at %s", cfg.Name, a.LoadText())
		return
	}
	m := g.MergeLatency(false)
	sp.excludedReps += m.Excluded
	for _, pr := range m.Problems {
		f.note("%s: %s", cfg.Name, pr)
	}
	if m.Hist == nil || m.Hist.TotalCount() == 0 {
		if m.Excluded > 0 {
			f.note("%s at %s: no valid repetition to merge (%d invalid excluded)", cfg.Name, a.LoadShort(), m.Excluded)
		} else {
			f.note("%s at %s: no latency histogram to merge", cfg.Name, a.LoadShort())
		}
		sp.addInvalid(f, cfg.Name, g)
		return
	}
	if m.Dropped > 0 {
		f.note("%s at %s: %d values fell outside the merged histogram and were dropped", cfg.Name, a.LoadShort(), m.Dropped)
	}
	if m.OutOfRange > 0 {
		f.note("%s at %s: %d values were out of the histogram range when recorded (clamped to its ends)", cfg.Name, a.LoadShort(), m.OutOfRange)
	}
	n := m.Hist.TotalCount()
	// Drawn only as far as the sample supports: MinTailResponses
	// responses above the highest percentile drawn.
	top := math.Min(float64(n)/MinTailResponses, spectrumMaxX)
	if top < 2 {
		f.note("%s at %s: only %d requests merged, too few for any percentile to have %d responses above it; not drawn", cfg.Name, a.LoadShort(), n, MinTailResponses)
		sp.addInvalid(f, cfg.Name, g)
		return
	}
	sp.xmax = math.Max(sp.xmax, top)
	sp.addCurve(f, cfg, m, top)
	if top < 1000 {
		f.note("%s at %s: %d requests merged, so its curve ends at p%s (%d responses above it) and has no p99.9", cfg.Name, a.LoadShort(), n, strconv.FormatFloat(100*(1-1/top), 'f', 2, 64), MinTailResponses)
	}
	sp.merged[cfg.Name] = n
	sp.addInvalid(f, cfg.Name, g)
}

// addCurve adds configuration cfg's spectrum from the merged histogram
// m, spectrumSteps quantiles a decade up to 1/(1-p) = top, each a row of
// f's CSV.
func (sp *spectrumPlot) addCurve(f *Figure, cfg results.ModelConfig, m results.Merged, top float64) {
	n := m.Hist.TotalCount()
	c := spectrumCurve{cfg: cfg}
	dropped := 0
	steps := int(math.Floor(math.Log10(top) * spectrumSteps))
	for k := 0; k <= steps; k++ {
		x := math.Pow(10, float64(k)/spectrumSteps)
		q := 1 - 1/x
		v := float64(m.Hist.ValueAtQuantile(100 * q))
		plotted, note := v > 0, ""
		if plotted {
			c.xys = append(c.xys, plotter.XY{X: x, Y: v})
			sp.ys = append(sp.ys, v)
		} else {
			dropped++
			note = "latency ≤ 0 cannot be shown on the log axis; left out"
		}
		f.addRow(cfg.Name, results.FormatFloat(sp.a.load), results.FormatFloat(100*q), results.FormatFloat(x), results.FormatFloat(v),
			strconv.Itoa(m.Points), strconv.Itoa(m.Excluded), strconv.FormatInt(n, 10), strconv.FormatInt(m.Dropped, 10), strconv.FormatInt(m.OutOfRange, 10),
			strconv.FormatBool(plotted), note)
	}
	if dropped > 0 {
		f.note("%s: %d low percentile(s) are 0 and left out (a log axis cannot show 0)", cfg.Name, dropped)
	}
	sp.curves = append(sp.curves, c)
}

// addInvalid draws g's invalid repetitions' own percentiles and
// tabulates them after the configuration's merged spectrum.
func (sp *spectrumPlot) addInvalid(f *Figure, name string, g *results.Group) {
	for _, p := range g.Invalid() {
		s := &p.Load.Latency
		if s.Count == 0 {
			continue
		}
		for _, pv := range []struct {
			q, x float64 // the percentile and its 1/(1-q)
			v    int64
		}{{0.5, 2, s.P50Ns}, {0.9, 10, s.P90Ns}, {0.99, 100, s.P99Ns}, {0.999, 1000, s.P999Ns}} {
			x := pv.x
			if !supports(s.Count, pv.q) {
				break
			}
			v := float64(pv.v)
			plotted, note := v > 0, fmt.Sprintf("invalid repetition %d (%s): excluded from the merged spectrum, drawn as a grey ×", p.Repetition, p.MainCheck())
			if plotted {
				sp.excluded[name] = append(sp.excluded[name], plotter.XY{X: x, Y: v})
				sp.ys = append(sp.ys, v)
				sp.xmax = math.Max(sp.xmax, x)
			} else {
				note += "; latency ≤ 0 cannot be shown on the log axis; left out"
			}
			f.addRow(name, results.FormatFloat(sp.a.load), results.FormatFloat(100*pv.q), results.FormatFloat(x), results.FormatFloat(v),
				"0", "1", strconv.FormatInt(s.Count, 10), "0", strconv.FormatInt(s.OutOfRange, 10), strconv.FormatBool(plotted), note)
		}
	}
}

// caption says what the figure draws and its finding: the tail
// percentile every configuration's sample supports, lowest and highest,
// and whether the lowest is clear of the runner-up across the
// repetitions — per workload in a run of several (configurations of
// different workloads do not compete).
func (sp *spectrumPlot) caption() string {
	c := fmt.Sprintf("Corrected latency at every percentile at %s, from the histograms of the valid repetitions merged, a panel per model family, each curve drawn up to the percentile with %d responses above it", sp.a.LoadText(), MinTailResponses)
	if len(sp.grid.rowLabels) > 1 {
		c = strings.Replace(c, "a panel per model family", "a row per workload and a column per model family", 1)
	}
	q, tails := sp.tails()
	lab := "p" + strings.TrimSuffix(percentileLabel(q), "%")
	var findings []string
	for ri, cells := range sp.grid.cells {
		var ts []tailAt
		for _, cell := range cells {
			for _, cfg := range cell {
				if i := slices.IndexFunc(tails, func(t tailAt) bool { return t.name == cfg.Name }); i >= 0 {
					ts = append(ts, tails[i])
				}
			}
		}
		if fd := tailFinding(ts, lab); fd != "" {
			if sp.grid.rowLabels[ri] != "" {
				fd = sp.grid.rowLabels[ri] + ": " + fd
			}
			findings = append(findings, fd)
		}
	}
	if len(findings) > 0 {
		c += ": " + strings.Join(findings, "; ")
	}
	return c + "." + excludedCaption(sp.excludedReps)
}

// tails returns the highest tail percentile q every configuration's
// merged sample supports (p99.9, p99, p90), and each drawn
// configuration's latency there; none if no tail percentile is
// supported.
func (sp *spectrumPlot) tails() (q float64, tails []tailAt) {
	q = 0.999
	for _, n := range sp.merged {
		for q > 0.5 && !supports(n, q) {
			q = 1 - (1-q)*10
		}
	}
	if q <= 0.5 {
		return q, nil
	}
	metric := map[float64]results.Metric{0.999: results.LatencyP999, 0.99: results.LatencyP99, 0.9: results.LatencyP90}[math.Round(q*1000)/1000]
	for _, c := range sp.curves {
		g := sp.a.AtLoad(c.cfg.Name)
		m := g.MergeLatency(false)
		t := tailAt{name: c.cfg.Name, v: float64(m.Hist.ValueAtQuantile(100 * q))}
		if metric.Name != "" {
			t.st = g.Aggregate(metric).Stats
		}
		tails = append(tails, t)
	}
	return q, tails
}

// layout returns the figure's panels (panelGrid) and a legend under
// each column: the configurations it draws, by their names within their
// workload, and the invalid repetitions' cross if the column has any
// (Figure.lay).
func (sp *spectrumPlot) layout(tx func(string) string) layout {
	ymin, ymax, _ := logRange(sp.ys)
	var panels [][]*plot.Plot
	for ri, cells := range sp.grid.cells {
		var row []*plot.Plot
		for ci, cell := range cells {
			// A panel says its workload (a row of the suite's grid) in its
			// title, under its family's name on the top row. Note: not as
			// the y axis's label: gonum places a rotated label on a log
			// axis by the arithmetic mean of the axis's ends, near its
			// top, and pads the panel for it there.
			title, xlabel := sp.grid.rowTitles[ri], ""
			if ri == 0 {
				title = strings.TrimSpace(sp.grid.colTitles[ci] + "\n" + title)
			}
			if ri == len(sp.grid.cells)-1 {
				xlabel = "percentile (%)"
			}
			p := newPlot(tx(title), tx(xlabel), "")
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = texTicks{spectrumTicks{}, tx}
			p.X.Min, p.X.Max = 1, sp.xmax
			setLogY(p, ymin, ymax, func(v float64) string { return tx(FormatNs(v)) })
			// Every panel has the same axes: their values are written
			// along the bottom row and the left column only, which
			// leaves the data room a thesis page's width does not.
			if ri < len(sp.grid.cells)-1 {
				p.X.Tick.Marker = unlabelled{p.X.Tick.Marker}
			}
			if ci > 0 {
				p.Y.Tick.Marker = unlabelled{p.Y.Tick.Marker}
			}
			for _, c := range sp.curves {
				if !slices.ContainsFunc(cell, func(mc results.ModelConfig) bool { return mc.Name == c.cfg.Name }) || len(c.xys) == 0 {
					continue
				}
				if ln, err := plotter.NewLine(c.xys); err == nil {
					ln.LineStyle = sp.a.style[c.cfg.Name].line()
					p.Add(ln)
				}
			}
			addExcluded(p, excludedIn(sp.excluded, cell))
			row = append(row, p)
		}
		panels = append(panels, row)
	}
	var legends []*plot.Legend
	for ci := range sp.grid.colTitles {
		l := newLegend()
		l.TextStyle.Font = fontSmall
		l.ThumbnailWidth = vg.Points(16)
		crosses := false
		for _, c := range sp.columnConfigs(ci) {
			l.Add(tx(sp.a.BaseName(c.Name)), lineThumb{sp.a.style[c.Name].line()})
		}
		for _, row := range sp.grid.cells {
			crosses = crosses || len(excludedIn(sp.excluded, row[ci])) > 0
		}
		if crosses {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
		}
		legends = append(legends, &l)
	}
	return layout{panels: panels, columns: legends}
}

// unlabelled is another ticker's ticks without their labels.
type unlabelled struct{ plot.Ticker }

// Ticks returns the ticker's ticks, unlabelled.
func (u unlabelled) Ticks(min, max float64) []plot.Tick {
	ticks := u.Ticker.Ticks(min, max)
	for i := range ticks {
		ticks[i].Label = ""
	}
	return ticks
}

// texTicks passes another ticker's labels through tx.
type texTicks struct {
	plot.Ticker
	tx func(string) string
}

// Ticks returns the ticker's ticks with escaped labels.
func (t texTicks) Ticks(min, max float64) []plot.Tick {
	ticks := t.Ticker.Ticks(min, max)
	for i := range ticks {
		ticks[i].Label = t.tx(ticks[i].Label)
	}
	return ticks
}

// excludedIn returns the invalid repetitions' points of the configurations.
func excludedIn(excluded map[string]plotter.XYs, configs []results.ModelConfig) plotter.XYs {
	var out plotter.XYs
	for _, c := range configs {
		out = append(out, excluded[c.Name]...)
	}
	return out
}

// tailFinding names the lowest and highest of ts at the percentile lab,
// and whether the lowest is clear of the runner-up across repetitions.
func tailFinding(ts []tailAt, lab string) string {
	if len(ts) == 0 {
		return ""
	}
	slices.SortStableFunc(ts, func(x, y tailAt) int { return cmpFloat(x.v, y.v) })
	if len(ts) == 1 {
		return fmt.Sprintf("%s of %s is %s", lab, ts[0].name, FormatNs(ts[0].v))
	}
	lo, hi := ts[0], ts[len(ts)-1]
	s := fmt.Sprintf("the lowest %s is %s's (%s), %.1f× below the highest, %s's (%s)", lab, lo.name, FormatNs(lo.v), hi.v/lo.v, hi.name, FormatNs(hi.v))
	if r := ts[1]; lo.st.N > 0 && r.st.N > 0 {
		_, loHi, _ := lo.st.Band()
		rLo, _, _ := r.st.Band()
		if loHi >= rLo {
			s += fmt.Sprintf(", the runner-up %s (%s) within its interval across repetitions", r.name, FormatNs(r.v))
		} else {
			s += fmt.Sprintf(", clear of the runner-up %s (%s) across repetitions", r.name, FormatNs(r.v))
		}
	}
	return s
}

// tailAt is one configuration's latency at the spectrum's caption
// percentile: from the merged histogram (v) and across repetitions (st).
type tailAt struct {
	name string
	v    float64
	st   results.Stats
}
