package plots

import (
	"fmt"
	"math"
	"strconv"

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
		Width:  8 * vg.Inch,
		Height: 4.5 * vg.Inch,
		Header: []string{"config", "fraction", "percentile_pct", "inverse_tail", "latency_ns", "reps_merged", "invalid_reps", "requests", "dropped", "out_of_range", "plotted", "note"},
	}
	// excluded are the invalid repetitions' own percentiles.
	var excluded plotter.XYs
	excludedReps := 0
	type series struct {
		name string
		xys  plotter.XYs
	}
	var ss []series
	var ys []float64
	xmax := 10.0
	type tail struct {
		name string
		p999 float64
	}
	var tails []tail
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
				if x > float64(s.Count) {
					break
				}
				v := float64(pv.v)
				plotted, note := v > 0, fmt.Sprintf("invalid repetition %d (%s): excluded from the merged spectrum, drawn as a grey ×", p.Repetition, p.MainCheck())
				if plotted {
					excluded = append(excluded, plotter.XY{X: x, Y: v})
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
		top := math.Min(float64(n), spectrumMaxX)
		xmax = math.Max(xmax, top)
		s := series{name: cfg.Name}
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
		if n < 1000 {
			f.note("%s: only %d requests merged, so the spectrum ends at the %s percentile", cfg.Name, n, percentileLabel(1-1/top))
		}
		ss = append(ss, s)
		tails = append(tails, tail{cfg.Name, float64(m.Hist.ValueAtQuantile(99.9))})
		addInvalid(cfg.Name, g)
	}
	if len(ys) == 0 {
		return nil
	}
	ymin, ymax, _ := logRange(ys)
	f.Caption = fmt.Sprintf("Corrected latency at every percentile at %s, from the histograms of the valid repetitions merged", a.loadText())
	if len(tails) > 0 {
		lo, hi := tails[0], tails[0]
		for _, t := range tails[1:] {
			if t.p999 < lo.p999 {
				lo = t
			}
			if t.p999 > hi.p999 {
				hi = t
			}
		}
		if len(tails) > 1 {
			f.Caption += fmt.Sprintf(": the lowest p99.9 is %s's (%s), the highest %s's (%s)", lo.name, formatNs(lo.p999), hi.name, formatNs(hi.p999))
		} else {
			f.Caption += fmt.Sprintf(": p99.9 of %s is %s", lo.name, formatNs(lo.p999))
		}
	}
	f.Caption += "." + excludedCaption(excludedReps)

	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		p := newPlot("", tx("percentile"), tx("latency"))
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = texTicks{spectrumTicks{}, tx}
		p.X.Min, p.X.Max = 1, xmax
		setLogY(p, ymin, ymax, func(v float64) string { return tx(formatNs(v)) })
		l := newLegend()
		for _, s := range ss {
			st := a.style[s.name]
			if len(s.xys) > 0 {
				if ln, err := plotter.NewLine(s.xys); err == nil {
					ln.LineStyle = st.line()
					p.Add(ln)
				}
			}
			l.Add(tx(s.name), lineThumb{st.line()})
		}
		addExcluded(p, excluded)
		if len(excluded) > 0 {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
		}
		return [][]*plot.Plot{{p}}, &l
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
