package plots

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/results"
)

// threadShares returns, for each of pts, the threads' shares of the
// handle-set events (in %), busiest first, and the repetitions they come
// from; points without per-thread events are left out.
func threadShares(pts []*results.Point) (out [][]float64, reps []int) {
	for _, p := range pts {
		var total uint64
		for _, t := range p.Server.PerThread {
			total += t.Events
		}
		if total == 0 {
			continue
		}
		shares := make([]float64, len(p.Server.PerThread))
		for i, t := range p.Server.PerThread {
			shares[i] = 100 * float64(t.Events) / float64(total)
		}
		slices.SortFunc(shares, func(x, y float64) int {
			switch {
			case x > y:
				return -1
			case x < y:
				return 1
			}
			return 0
		})
		out = append(out, shares)
		reps = append(reps, p.Repetition)
	}
	return out, reps
}

// trusted returns the points of g that may enter a statistic: measured,
// and not invalid (Aggregate's rule, for the server's own counters).
func trusted(g *results.Group) []*results.Point {
	var out []*results.Point
	for _, p := range g.Measured() {
		if !p.Invalid() {
			out = append(out, p)
		}
	}
	return out
}

// threadsFigure is figure 7: each thread's share of the handle-set events
// for the Leader/Followers configurations (one per promotion order) at the
// chosen load, threads ranked busiest first, grouped bars per rank: the
// median share of the valid repetitions, the invalid ones as crosses.
func threadsFigure(a *analysis) *Figure {
	if !a.hasLoad {
		return nil
	}
	f := &Figure{
		Name:   "threads",
		Title:  fmt.Sprintf("Leader/Followers: share of events per thread at %s", a.loadText()),
		Width:  8 * vg.Inch,
		Height: 4 * vg.Inch,
		Header: []string{"config", "fraction", "rank", "threads", "n", "median_share_pct", "band_lo_pct", "band_hi_pct", "band", "uniform_share_pct",
			"invalid_reps", "invalid_values_pct"},
	}
	excludedReps := 0
	tp := &threadsPlot{a: a}
	for _, cfg := range a.configs {
		if cfg.Model != modelLF {
			continue
		}
		g := a.atLoad(cfg.Name)
		if g == nil {
			f.note("%s has no measured point at %s", cfg.Name, a.loadText())
			continue
		}
		excludedReps += len(g.Invalid())
		if s, ok := threadSharesOf(a, f, cfg, g); ok {
			tp.maxThreads = max(tp.maxThreads, s.threads)
			tp.series = append(tp.series, s)
		}
	}
	if len(tp.series) == 0 {
		return nil
	}
	f.note("Threads are ranked by their share in each repetition (thread ids differ between runs), then the share at each rank is summarized across repetitions.")
	f.note("Error bars: %s.", bandText)

	var parts []string
	for _, s := range tp.series {
		if s.stats[0].N == 0 {
			parts = append(parts, fmt.Sprintf("%s has no valid repetition", s.name))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s's busiest thread handles %.0f%% (uniform: %.0f%%)", s.name, s.stats[0].Median, 100/float64(s.threads)))
	}
	f.Caption = fmt.Sprintf("Share of handle-set events per Leader/Followers thread, busiest first, at %s (medians of the valid repetitions): %s.", a.loadText(), joinAnd(parts)) +
		excludedCaption(excludedReps)
	f.build = tp.build
	return f
}

// threadSeries is one configuration's thread shares in the threads
// figure.
type threadSeries struct {
	name    string
	threads int
	stats   []results.Stats // per rank
	// excluded are the invalid repetitions' shares per rank.
	excluded [][]float64
}

// threadSharesOf returns configuration cfg's thread shares at g, a row of
// f's CSV per rank; false, with a note in f, if g has no per-thread
// event counts.
func threadSharesOf(a *analysis, f *Figure, cfg results.ModelConfig, g *results.Group) (threadSeries, bool) {
	reps, _ := threadShares(trusted(g))
	inv, invReps := threadShares(g.Invalid())
	if len(reps) == 0 && len(inv) == 0 {
		f.note("%s at %s: no per-thread event counts", cfg.Name, a.loadShort())
		return threadSeries{}, false
	}
	if len(reps) == 0 {
		f.note("%s at %s: no valid repetition (%d invalid excluded)", cfg.Name, a.loadShort(), len(g.Invalid()))
	}
	s := threadSeries{name: cfg.Name, excluded: inv}
	for _, r := range append(slices.Clone(reps), inv...) {
		s.threads = max(s.threads, len(r))
	}
	for rank := range s.threads {
		var xs []float64
		for _, r := range reps {
			share := 0.0 // a repetition with fewer threads: this rank had none
			if rank < len(r) {
				share = r[rank]
			}
			xs = append(xs, share)
		}
		st := results.Summarize(xs)
		s.stats = append(s.stats, st)
		lo, hi, band := st.Band()
		vals := map[int]float64{}
		for i, r := range inv {
			if rank < len(r) {
				vals[invReps[i]] = r[rank]
			}
		}
		f.addRow(cfg.Name, results.FormatFloat(a.load), strconv.Itoa(rank+1), strconv.Itoa(s.threads), strconv.Itoa(st.N),
			results.FormatFloat(st.Median), results.FormatFloat(lo), results.FormatFloat(hi), band,
			results.FormatFloat(100/float64(s.threads)), strconv.Itoa(len(g.Invalid())), excludedValues(vals))
	}
	return s, true
}

// threadsPlot is what the threads figure draws.
type threadsPlot struct {
	a          *analysis
	series     []threadSeries
	maxThreads int // the most threads of any series
}

// build returns the figure's one panel and its legend (Figure.build).
func (tp *threadsPlot) build(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
	p := newPlot("", tx("thread rank (1 = busiest)"), tx("share of events (%)"))
	p.Y.Min = 0
	width := 0.8 / float64(len(tp.series))
	l := newLegend()
	for si, s := range tp.series {
		st := tp.a.style[s.name]
		off := -0.4 + width*(float64(si)+0.5)
		var cats, meds []float64
		for i, x := range s.stats {
			if x.N > 0 {
				cats, meds = append(cats, float64(i)), append(meds, x.Median)
			}
		}
		b := &bars{Cats: cats, Values: meds, Width: width * 0.9, Offset: off, Color: st.barFill(), Line: st.barLine()}
		p.Add(b)
		for i, x := range s.stats {
			if x.N == 0 {
				continue
			}
			lo, hi, _ := x.Band()
			if e, err := plotter.NewYErrorBars(errBar{x: float64(i) + off, y: x.Median, lo: lo, hi: hi}); err == nil {
				e.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
				e.CapWidth = vg.Points(4)
				p.Add(e)
			}
		}
		l.Add(tx(s.name), b)
	}
	for _, s := range tp.series {
		u := 100 / float64(s.threads)
		if fn := plotter.NewFunction(func(float64) float64 { return u }); fn != nil {
			fn.LineStyle = draw.LineStyle{Color: tp.a.style[s.name].Color, Width: vg.Points(0.8), Dashes: theoryDash}
			p.Add(fn)
		}
	}
	l.Add(tx("uniform share 1/threads"), lineThumb{draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.8), Dashes: theoryDash}})
	var crosses plotter.XYs
	for si, s := range tp.series {
		off := -0.4 + width*(float64(si)+0.5)
		for _, r := range s.excluded {
			for i, share := range r {
				crosses = append(crosses, plotter.XY{X: float64(i) + off, Y: share})
			}
		}
	}
	addExcluded(p, crosses)
	if len(crosses) > 0 {
		l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
	}
	names := make([]string, tp.maxThreads)
	for i := range names {
		names[i] = strconv.Itoa(i + 1)
	}
	p.Y.Max *= 1.08 // room for the whiskers' caps
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(tp.maxThreads)-0.4
	return [][]*plot.Plot{{p}}, &l
}
