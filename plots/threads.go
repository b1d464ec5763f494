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

// ThreadShares returns, for each of pts, the threads' shares of the
// handle-set events (in %), busiest first, and the repetitions they come
// from; points without per-thread events are left out.
func ThreadShares(pts []*results.Point) (out [][]float64, reps []int) {
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

// Trusted returns the points of g that may enter a statistic: measured,
// and not invalid (Aggregate's rule, for the server's own counters).
func Trusted(g *results.Group) []*results.Point {
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
func threadsFigure(a *Analysis) *Figure {
	if !a.HasLoad {
		return nil
	}
	f := &Figure{
		Name:   "threads",
		Title:  fmt.Sprintf("Leader/Followers: share of events per thread at %s", a.loadTitle()),
		Width:  8 * vg.Inch,
		Height: 4 * vg.Inch,
		Header: []string{"config", "fraction", "rank", "threads", "n", "median_share_pct", "band_lo_pct", "band_hi_pct", "band", "uniform_share_pct",
			"invalid_reps", "invalid_values_pct"},
	}
	excludedReps := 0
	tp := &threadsPlot{a: a}
	for _, cfg := range a.Configs {
		if cfg.Model != ModelLF {
			continue
		}
		g := a.AtLoad(cfg.Name)
		if g == nil {
			f.note("%s has no measured point at %s", cfg.Name, a.LoadText())
			continue
		}
		excludedReps += len(g.Invalid())
		if s, ok := threadSharesOf(a, f, cfg, g); ok {
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
	f.Caption = fmt.Sprintf("Share of handle-set events per Leader/Followers thread, busiest first, at %s (medians of the valid repetitions): %s.", a.LoadText(), JoinAnd(parts)) +
		excludedCaption(excludedReps)
	tp.arrange()
	if len(tp.panels) > 1 {
		// Small multiples, a panel per workload, at a thesis page's
		// text width.
		f.Width = TexMaxWidth
		f.Height = vg.Length(0.5+2*float64(len(tp.grid))) * vg.Inch
		if last := tp.grid[len(tp.grid)-1]; last[len(last)-1] >= 0 {
			f.Height += vg.Inch // the legend under the panels
		}
		f.Caption += " A panel per workload."
	}
	f.lay = tp.layout
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
func threadSharesOf(a *Analysis, f *Figure, cfg results.ModelConfig, g *results.Group) (threadSeries, bool) {
	reps, _ := ThreadShares(Trusted(g))
	inv, invReps := ThreadShares(g.Invalid())
	if len(reps) == 0 && len(inv) == 0 {
		f.note("%s at %s: no per-thread event counts", cfg.Name, a.LoadShort())
		return threadSeries{}, false
	}
	if len(reps) == 0 {
		f.note("%s at %s: no valid repetition (%d invalid excluded)", cfg.Name, a.LoadShort(), len(g.Invalid()))
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
	a      *Analysis
	series []threadSeries
	// panels are the series' indexes per workload, titles the
	// workloads' (none in a run of one workload); grid places the
	// panels in rows, -1 an empty cell.
	panels [][]int
	titles []string
	grid   [][]int
}

// arrange groups the series by workload, a panel each, wrapped into
// rows (barColumns): a workload's configurations never stand beside
// another's.
func (tp *threadsPlot) arrange() {
	for _, w := range tp.a.Workloads {
		var idx []int
		for i, s := range tp.series {
			if slices.Contains(w.Runs, s.name) {
				idx = append(idx, i)
			}
		}
		if len(idx) > 0 {
			tp.panels = append(tp.panels, idx)
			tp.titles = append(tp.titles, tp.a.workloadTitle(w))
		}
	}
	if len(tp.panels) < 2 {
		tp.panels, tp.titles = [][]int{nil}, []string{""}
		for i := range tp.series {
			tp.panels[0] = append(tp.panels[0], i)
		}
	}
	tp.grid = wrapGrid(len(tp.panels))
}

// layout returns the figure's panels and its legend (Figure.lay).
func (tp *threadsPlot) layout(tx func(string) string) layout {
	rows := gridPanels(tp.grid, isPanel, func(k, _ int, _ bool) *plot.Plot { return tp.panel(tx, k) })
	l := newLegend()
	var named []string
	crosses := false
	for _, s := range tp.series {
		crosses = crosses || len(s.excluded) > 0
		if b := tp.a.BaseName(s.name); !slices.Contains(named, b) {
			named = append(named, b)
			st := tp.a.style[s.name]
			l.Add(tx(b), &bars{Color: st.barFill(), Line: st.barLine()})
		}
	}
	l.Add(tx("uniform share 1/threads"), lineThumb{draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.8), Dashes: theoryDash}})
	if crosses {
		l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
	}
	return layout{panels: rows, legend: &l}
}

// panel draws workload k's series: grouped bars per thread rank, the
// uniform shares as dashed lines, the invalid repetitions as crosses.
func (tp *threadsPlot) panel(tx func(string) string, k int) *plot.Plot {
	idx := tp.panels[k]
	p := newPlot(tx(tp.titles[k]), tx("thread rank (1 = busiest)"), tx("share of events (%)"))
	p.Y.Min = 0
	width := 0.8 / float64(len(idx))
	most := 0
	for si, i := range idx {
		s := tp.series[i]
		most = max(most, s.threads)
		st := tp.a.style[s.name]
		off := -0.4 + width*(float64(si)+0.5)
		var cats, meds []float64
		for r, x := range s.stats {
			if x.N > 0 {
				cats, meds = append(cats, float64(r)), append(meds, x.Median)
			}
		}
		p.Add(&bars{Cats: cats, Values: meds, Width: width * 0.9, Offset: off, Color: st.barFill(), Line: st.barLine()})
		for r, x := range s.stats {
			if x.N == 0 {
				continue
			}
			lo, hi, _ := x.Band()
			if e, err := plotter.NewYErrorBars(errBar{x: float64(r) + off, y: x.Median, lo: lo, hi: hi}); err == nil {
				e.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
				e.CapWidth = vg.Points(4)
				p.Add(e)
			}
		}
	}
	for _, i := range idx {
		s := tp.series[i]
		u := 100 / float64(s.threads)
		if fn := plotter.NewFunction(func(float64) float64 { return u }); fn != nil {
			fn.LineStyle = draw.LineStyle{Color: tp.a.style[s.name].Color, Width: vg.Points(0.8), Dashes: theoryDash}
			p.Add(fn)
		}
	}
	var crosses plotter.XYs
	for si, i := range idx {
		off := -0.4 + width*(float64(si)+0.5)
		for _, r := range tp.series[i].excluded {
			for rank, share := range r {
				crosses = append(crosses, plotter.XY{X: float64(rank) + off, Y: share})
			}
		}
	}
	addExcluded(p, crosses)
	// A label every few ranks where there are many, so that they do not
	// run into each other.
	step := (most + 7) / 8
	names := make([]string, most)
	for i := range names {
		if i == 0 || (i+1)%step == 0 {
			names[i] = strconv.Itoa(i + 1)
		}
	}
	p.Y.Max *= 1.08 // room for the whiskers' caps
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(most)-0.4
	return p
}
