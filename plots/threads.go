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

// threadShares returns, for each repetition of g, the threads' shares of
// the handle-set events (in %), busiest first; repetitions without
// per-thread events are left out.
func threadShares(g *results.Group) [][]float64 {
	var out [][]float64
	for _, p := range g.Measured() {
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
	}
	return out
}

// threadsFigure is figure 7: each thread's share of the handle-set events
// for the Leader/Followers configurations (one per promotion order) at the
// chosen load, threads ranked busiest first, grouped bars per rank.
func threadsFigure(a *analysis) *Figure {
	if !a.hasLoad {
		return nil
	}
	f := &Figure{
		Name:   "threads",
		Title:  fmt.Sprintf("Leader/Followers: share of events per thread at %s", a.loadText()),
		Width:  8 * vg.Inch,
		Height: 4 * vg.Inch,
		Header: []string{"config", "fraction", "rank", "threads", "n", "median_share_pct", "band_lo_pct", "band_hi_pct", "band", "uniform_share_pct"},
	}
	type series struct {
		name    string
		threads int
		stats   []results.Stats // per rank
	}
	var ss []series
	maxThreads := 0
	for _, cfg := range a.configs {
		if cfg.Model != modelLF {
			continue
		}
		g := a.atLoad(cfg.Name)
		if g == nil {
			f.note("%s has no measured point at %.2f of capacity", cfg.Name, a.load)
			continue
		}
		reps := threadShares(g)
		if len(reps) == 0 {
			f.note("%s at %.2f: no per-thread event counts", cfg.Name, a.load)
			continue
		}
		s := series{name: cfg.Name}
		for _, r := range reps {
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
			f.addRow(cfg.Name, results.FormatFloat(a.load), strconv.Itoa(rank+1), strconv.Itoa(s.threads), strconv.Itoa(st.N),
				results.FormatFloat(st.Median), results.FormatFloat(lo), results.FormatFloat(hi), band,
				results.FormatFloat(100/float64(s.threads)))
		}
		maxThreads = max(maxThreads, s.threads)
		ss = append(ss, s)
	}
	if len(ss) == 0 {
		return nil
	}
	f.note("Threads are ranked by their share in each repetition (thread ids differ between runs), then the share at each rank is summarized across repetitions.")
	f.note("Error bars: %s.", bandText)

	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s's busiest thread handles %.0f%% (uniform: %.0f%%)", s.name, s.stats[0].Median, 100/float64(s.threads)))
	}
	f.Caption = fmt.Sprintf("Share of handle-set events per Leader/Followers thread, busiest first, at %s: %s.", a.loadText(), joinAnd(parts))

	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		p := newPlot("", tx("thread rank (1 = busiest)"), tx("share of events (%)"))
		p.Y.Min = 0
		width := 0.8 / float64(len(ss))
		l := newLegend()
		for si, s := range ss {
			st := a.style[s.name]
			off := -0.4 + width*(float64(si)+0.5)
			cats, meds := make([]float64, len(s.stats)), make([]float64, len(s.stats))
			for i, x := range s.stats {
				cats[i], meds[i] = float64(i), x.Median
			}
			b := &bars{Cats: cats, Values: meds, Width: width * 0.9, Offset: off, Color: st.fill(0xB0),
				Line: draw.LineStyle{Color: st.Color, Width: vg.Points(0.8)}}
			p.Add(b)
			for i, x := range s.stats {
				lo, hi, _ := x.Band()
				if e, err := plotter.NewYErrorBars(errBar{x: float64(i) + off, y: x.Median, lo: lo, hi: hi}); err == nil {
					e.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
					e.CapWidth = vg.Points(4)
					p.Add(e)
				}
			}
			l.Add(tx(s.name), b)
		}
		for _, s := range ss {
			u := 100 / float64(s.threads)
			if fn := plotter.NewFunction(func(float64) float64 { return u }); fn != nil {
				fn.LineStyle = draw.LineStyle{Color: a.style[s.name].Color, Width: vg.Points(0.8), Dashes: theoryDash}
				p.Add(fn)
			}
		}
		l.Add(tx("uniform share 1/threads"), lineThumb{draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.8), Dashes: theoryDash}})
		names := make([]string, maxThreads)
		for i := range names {
			names[i] = strconv.Itoa(i + 1)
		}
		p.Y.Max *= 1.08 // room for the whiskers' caps
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.6, float64(maxThreads)-0.4
		return [][]*plot.Plot{{p}}, &l
	}
	return f
}
