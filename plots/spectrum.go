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
func spectrumFigure(a *analysis) *Figure {
	if !a.hasLoad {
		return nil
	}
	f := &Figure{
		Name:   "spectrum",
		Title:  fmt.Sprintf("Latency percentile spectrum at %s (corrected, valid repetitions merged)", a.loadText()),
		Width:  11 * vg.Inch,
		Height: 4.2 * vg.Inch,
		Header: []string{"config", "fraction", "percentile_pct", "inverse_tail", "latency_ns", "reps_merged", "invalid_reps", "requests", "dropped", "out_of_range", "plotted", "note"},
	}
	// excluded are the invalid repetitions' own percentiles.
	excluded := map[string]plotter.XYs{}
	excludedReps := 0
	type series struct {
		cfg results.ModelConfig
		xys plotter.XYs
	}
	var ss []series
	var ys []float64
	xmax := 10.0
	var tails []tailAt
	merged := map[string]int64{} // requests merged, per configuration
	// addInvalid draws g's invalid repetitions' own percentiles and
	// tabulates them after the configuration's merged spectrum.
	addInvalid := func(name string, g *results.Group) {
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
					excluded[name] = append(excluded[name], plotter.XY{X: x, Y: v})
					ys = append(ys, v)
					xmax = math.Max(xmax, x)
				} else {
					note += "; latency ≤ 0 cannot be shown on the log axis; left out"
				}
				f.addRow(name, results.FormatFloat(a.load), results.FormatFloat(100*pv.q), results.FormatFloat(x), results.FormatFloat(v),
					"0", "1", strconv.FormatInt(s.Count, 10), "0", strconv.FormatInt(s.OutOfRange, 10), strconv.FormatBool(plotted), note)
			}
		}
	}
	for _, cfg := range a.configs {
		g := a.atLoad(cfg.Name)
		if g == nil {
			f.note("%s has no measured point at %s", cfg.Name, a.loadText())
			continue
		}
		m := g.MergeLatency(false)
		excludedReps += m.Excluded
		for _, pr := range m.Problems {
			f.note("%s: %s", cfg.Name, pr)
		}
		if m.Hist == nil || m.Hist.TotalCount() == 0 {
			if m.Excluded > 0 {
				f.note("%s at %s: no valid repetition to merge (%d invalid excluded)", cfg.Name, a.loadShort(), m.Excluded)
			} else {
				f.note("%s at %s: no latency histogram to merge", cfg.Name, a.loadShort())
			}
			addInvalid(cfg.Name, g)
			continue
		}
		if m.Dropped > 0 {
			f.note("%s at %s: %d values fell outside the merged histogram and were dropped", cfg.Name, a.loadShort(), m.Dropped)
		}
		if m.OutOfRange > 0 {
			f.note("%s at %s: %d values were out of the histogram range when recorded (clamped to its ends)", cfg.Name, a.loadShort(), m.OutOfRange)
		}
		n := m.Hist.TotalCount()
		// Drawn only as far as the sample supports: MinTailResponses
		// responses above the highest percentile drawn.
		top := math.Min(float64(n)/MinTailResponses, spectrumMaxX)
		if top < 2 {
			f.note("%s at %s: only %d requests merged, too few for any percentile to have %d responses above it; not drawn", cfg.Name, a.loadShort(), n, MinTailResponses)
			addInvalid(cfg.Name, g)
			continue
		}
		xmax = math.Max(xmax, top)
		s := series{cfg: cfg}
		dropped := 0
		steps := int(math.Floor(math.Log10(top) * spectrumSteps))
		for k := 0; k <= steps; k++ {
			x := math.Pow(10, float64(k)/spectrumSteps)
			q := 1 - 1/x
			v := float64(m.Hist.ValueAtQuantile(100 * q))
			plotted, note := v > 0, ""
			if plotted {
				s.xys = append(s.xys, plotter.XY{X: x, Y: v})
				ys = append(ys, v)
			} else {
				dropped++
				note = "latency ≤ 0 cannot be shown on the log axis; left out"
			}
			f.addRow(cfg.Name, results.FormatFloat(a.load), results.FormatFloat(100*q), results.FormatFloat(x), results.FormatFloat(v),
				strconv.Itoa(m.Points), strconv.Itoa(m.Excluded), strconv.FormatInt(n, 10), strconv.FormatInt(m.Dropped, 10), strconv.FormatInt(m.OutOfRange, 10),
				strconv.FormatBool(plotted), note)
		}
		if dropped > 0 {
			f.note("%s: %d low percentile(s) are 0 and left out (a log axis cannot show 0)", cfg.Name, dropped)
		}
		if top < 1000 {
			f.note("%s at %s: %d requests merged, so its curve ends at p%s (%d responses above it) and has no p99.9", cfg.Name, a.loadShort(), n, strconv.FormatFloat(100*(1-1/top), 'f', 2, 64), MinTailResponses)
		}
		ss = append(ss, s)
		merged[cfg.Name] = n
		addInvalid(cfg.Name, g)
	}
	if len(ys) == 0 {
		return nil
	}
	ymin, ymax, _ := logRange(ys)
	f.Caption = fmt.Sprintf("Corrected latency at every percentile at %s, from the histograms of the valid repetitions merged, a panel per model family, each curve drawn up to the percentile with %d responses above it", a.loadText(), MinTailResponses)
	// The finding: the tail percentile every configuration's sample
	// supports, lowest and highest, and whether the lowest is clear of the
	// runner-up across the repetitions.
	q := 0.999
	for _, n := range merged {
		for q > 0.5 && !supports(n, q) {
			q = 1 - (1-q)*10
		}
	}
	if q > 0.5 {
		metric := map[float64]results.Metric{0.999: results.LatencyP999, 0.99: results.LatencyP99, 0.9: results.LatencyP90}[math.Round(q*1000)/1000]
		for _, s := range ss {
			g := a.atLoad(s.cfg.Name)
			m := g.MergeLatency(false)
			t := tailAt{name: s.cfg.Name, v: float64(m.Hist.ValueAtQuantile(100 * q))}
			if metric.Name != "" {
				t.st = g.Aggregate(metric).Stats
			}
			tails = append(tails, t)
		}
	}
	var cfgs []results.ModelConfig
	for _, c := range a.configs {
		if merged[c.Name] > 0 || len(excluded[c.Name]) > 0 {
			cfgs = append(cfgs, c)
		}
	}
	grid := a.panelGrid(cfgs)
	f.Width = vg.Length(3.3*float64(max(len(grid.colTitles), 1))+2.4) * vg.Inch
	if len(grid.rowLabels) > 1 {
		f.Height = vg.Length(0.9+1.9*float64(len(grid.rowLabels))) * vg.Inch
	}

	if len(grid.rowLabels) > 1 {
		f.Caption = strings.Replace(f.Caption, "a panel per model family", "a row per workload and a column per model family", 1)
	}
	// The finding, per workload in a run of several (configurations of
	// different workloads do not compete).
	lab := "p" + strings.TrimSuffix(percentileLabel(q), "%")
	var findings []string
	for ri, cells := range grid.cells {
		var ts []tailAt
		for _, cell := range cells {
			for _, c := range cell {
				if i := slices.IndexFunc(tails, func(t tailAt) bool { return t.name == c.Name }); i >= 0 {
					ts = append(ts, tails[i])
				}
			}
		}
		if fd := tailFinding(ts, lab); fd != "" {
			if grid.rowLabels[ri] != "" {
				fd = grid.rowLabels[ri] + ": " + fd
			}
			findings = append(findings, fd)
		}
	}
	if len(findings) > 0 {
		f.Caption += ": " + strings.Join(findings, "; ")
	}
	f.Caption += "." + excludedCaption(excludedReps)

	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		var panels [][]*plot.Plot
		l := newLegend()
		for ri, cells := range grid.cells {
			var row []*plot.Plot
			for ci, cell := range cells {
				title, xlabel, ylabel := "", "", ""
				if ri == 0 {
					title = grid.colTitles[ci]
				}
				if ri == len(grid.cells)-1 {
					xlabel = "percentile"
				}
				if ci == 0 {
					ylabel = strings.TrimSpace(grid.rowLabels[ri] + " latency")
				}
				p := newPlot(tx(title), tx(xlabel), tx(ylabel))
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = texTicks{spectrumTicks{}, tx}
				p.X.Min, p.X.Max = 1, xmax
				setLogY(p, ymin, ymax, func(v float64) string { return tx(formatNs(v)) })
				for _, s := range ss {
					if !slices.ContainsFunc(cell, func(c results.ModelConfig) bool { return c.Name == s.cfg.Name }) {
						continue
					}
					st := a.style[s.cfg.Name]
					if len(s.xys) > 0 {
						if ln, err := plotter.NewLine(s.xys); err == nil {
							ln.LineStyle = st.line()
							p.Add(ln)
						}
					}
					l.Add(tx(s.cfg.Name), lineThumb{st.line()})
				}
				addExcluded(p, excludedIn(excluded, cell))
				row = append(row, p)
			}
			panels = append(panels, row)
		}
		if len(excluded) > 0 {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
		}
		return panels, &l
	}
	return f
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
		return fmt.Sprintf("%s of %s is %s", lab, ts[0].name, formatNs(ts[0].v))
	}
	lo, hi := ts[0], ts[len(ts)-1]
	s := fmt.Sprintf("the lowest %s is %s's (%s), %.1f× below the highest, %s's (%s)", lab, lo.name, formatNs(lo.v), hi.v/lo.v, hi.name, formatNs(hi.v))
	if r := ts[1]; lo.st.N > 0 && r.st.N > 0 {
		_, loHi, _ := lo.st.Band()
		rLo, _, _ := r.st.Band()
		if loHi >= rLo {
			s += fmt.Sprintf(", the runner-up %s (%s) within its interval across repetitions", r.name, formatNs(r.v))
		} else {
			s += fmt.Sprintf(", clear of the runner-up %s (%s) across repetitions", r.name, formatNs(r.v))
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
