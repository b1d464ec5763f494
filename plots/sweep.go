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
	"concbench/stats"
)

// sweepSpec is one kind of sweep figure: a dimension of the run's
// configurations read from their names, against which capacity and a
// second metric are drawn.
type sweepSpec struct {
	name, title string
	// key ends the name of a configuration of the sweep, followed by its
	// count ("leaderfollowers/lifo/threads=4"); the name before it is the
	// series. Must match harness.ThreadsSuffix and harness.CPUsSuffix.
	key       string
	axis      string // the x axis: "threads"
	one, many string // the count's unit: "thread", "threads"
	panels    []sweepPanel
	// linear draws each series' linear speed-up from its smallest count
	// (the cores sweep: k CPUs should serve k times one CPU's rate).
	linear bool
	// intro opens the caption; dimension names the count in it.
	intro string
}

// threadsSweep is the thread sweep (the threads profile): capacity and
// p99 at equal load against the pool's thread count, the models without
// a count (the Proactor, netpoll) as references.
var threadsSweep = sweepSpec{
	name: "threadsweep", title: "Thread sweep: capacity and p99 at equal load against threads",
	key: "/threads=", axis: "threads", one: "thread", many: "threads",
	panels: []sweepPanel{
		{results.Capacity, sweepCapacity, "capacity (req/s)"},
		{results.LatencyP99, sweepRate, "p99 at equal load"},
	},
	intro: "Capacity and p99 at each workload's equal absolute load against the pool's thread count (log x), one series per pool model, the references (no thread count) as dashed horizontal lines at their medians",
}

// coresSweep is the cores sweep (the cores profile): capacity and the
// capacity at the latency objective against the server's CPUs, with each
// series' linear speed-up.
var coresSweep = sweepSpec{
	name: "cores", title: "Cores: capacity and capacity at the objective against server CPUs",
	key: "/cpus=", axis: "server CPUs", one: "CPU", many: "CPUs",
	panels: []sweepPanel{
		{results.Capacity, sweepCapacity, "capacity (req/s)"},
		{results.SLOCapacity, sweepSLO, "capacity at the objective (req/s)"},
	},
	linear: true,
	intro:  "Capacity and capacity at the workload's latency objective against the server's CPUs (log x), one series per model, each sized for its CPUs by the sizing rule; the thin dashed line of a series is its linear speed-up from its fewest CPUs",
}

// sweepSeries is one pool model of a thread sweep under one workload: its
// configurations by ascending thread count.
type sweepSeries struct {
	name   string   // the configuration's name without threadsKey and the count
	counts []int    // thread counts, ascending
	runs   []string // run names (as in points), in step with counts
}

// sweepRef is a reference configuration (one without a thread count) of
// a workload with a thread sweep.
type sweepRef struct{ name, run string }

// sweepWorkload is one workload of the run that has a thread sweep.
type sweepWorkload struct {
	name   string
	rate   float64 // the workload's equal load (0: none)
	series []*sweepSeries
	refs   []sweepRef
}

// count splits a configuration name into its series and the sweep's
// count; ok is false for a name without one.
func (sw *sweepSpec) count(name string) (series string, n int, ok bool) {
	series, rest, found := strings.Cut(name, sw.key)
	if !found {
		return name, 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 {
		return name, 0, false
	}
	return series, n, true
}

// applies reports whether any configuration of the run has the sweep's
// count in its name: only such a run gets the figure, or a line saying
// why it could not be drawn.
func (sw *sweepSpec) applies(a *analysis) bool {
	for _, w := range a.workloadsOf() {
		for _, name := range w.names {
			if _, _, ok := sw.count(name); ok {
				return true
			}
		}
	}
	return false
}

// sweeps returns the run's workloads that have a sweep — a series
// measured at two or more counts —, each with its series (those of one
// count are left out) and its references, in report order.
func (sw *sweepSpec) sweeps(a *analysis) []sweepWorkload {
	var out []sweepWorkload
	for _, w := range a.workloadsOf() {
		ws := sweepWorkload{name: w.name, rate: a.equalRate(&w)}
		byName := map[string]*sweepSeries{}
		var order []*sweepSeries
		for i, name := range w.names {
			run := w.runs[i]
			if !slices.ContainsFunc(a.groups, func(g *results.Group) bool { return g.Config.Name == run && len(g.Measured()) > 0 }) {
				continue
			}
			base, n, ok := sw.count(name)
			if !ok {
				ws.refs = append(ws.refs, sweepRef{name: name, run: run})
				continue
			}
			s := byName[base]
			if s == nil {
				s = &sweepSeries{name: base}
				byName[base] = s
				order = append(order, s)
			}
			s.counts, s.runs = append(s.counts, n), append(s.runs, run)
		}
		for _, s := range order {
			type entry struct {
				n   int
				run string
			}
			es := make([]entry, len(s.counts))
			for i := range es {
				es[i] = entry{s.counts[i], s.runs[i]}
			}
			slices.SortStableFunc(es, func(x, y entry) int { return x.n - y.n })
			for i, e := range es {
				s.counts[i], s.runs[i] = e.n, e.run
			}
			if len(slices.Compact(slices.Clone(s.counts))) >= 2 {
				ws.series = append(ws.series, s)
			}
		}
		if len(ws.series) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// sweepPanel is one metric of a sweep figure.
type sweepPanel struct {
	metric results.Metric
	at     sweepAt
	title  string
}

// sweepAt is the kind of point a sweep panel reads.
type sweepAt int

const (
	sweepCapacity sweepAt = iota // the capacity points
	sweepRate                    // the points at the workload's equal load
	sweepSLO                     // the latency-objective searches' results
)

// group returns run's group of the panel's metric under w, or nil.
func (sp sweepPanel) group(a *analysis, w *sweepWorkload, run string) *results.Group {
	switch sp.at {
	case sweepRate:
		if w.rate <= 0 {
			return nil
		}
		return results.Find(a.groups, run, results.KindRate, w.rate)
	case sweepSLO:
		return results.Find(a.groups, run, results.KindSLO, 0)
	}
	return a.capacity(run)
}

// sweepDodge spreads the series' markers and error bars at one thread
// count apart, as a factor of the count on the log axis, so that bars of
// different series do not hide each other.
const sweepDodge = 0.06

// threadSweepFigure is the thread sweep's figure (threadsSweep).
func threadSweepFigure(a *analysis) *Figure { return threadsSweep.figure(a) }

// coresFigure is the cores sweep's figure (coresSweep).
func coresFigure(a *analysis) *Figure { return coresSweep.figure(a) }

// figure draws, per workload with a sweep, the spec's panels against the
// count (log x: 1, 2, 4, 8, …), one series per model, the references
// (configurations without a count) as horizontal lines at their medians,
// and, for the cores sweep, each series' linear speed-up; error bars are
// each median's interval (bandText). The caption states, per workload and
// model, the best count by each metric and the largest count ÷ the
// smallest with a 95% interval (stats.RatioCI), and whether more
// helped or cost; nil if the run has no sweep of the spec's kind.
func (sw *sweepSpec) figure(a *analysis) *Figure {
	sweeps := sw.sweeps(a)
	if len(sweeps) == 0 {
		return nil
	}
	f := &Figure{
		Name:   sw.name,
		Title:  sw.title,
		Width:  TexMaxWidth,
		Height: vg.Length(len(sweeps))*vg.Points(190) + vg.Points(70),
		Header: []string{"workload", "series", "role", sw.axisColumn(), "metric", "unit", "offered_rate_per_s", "n", "median", "band_lo", "band_hi", "band",
			"invalid_reps", "plotted", "note"},
	}
	type panelData struct {
		pts      [][]connPoint // per series, x moved aside by the dodge
		refs     []float64     // per reference: its median, NaN if none
		excluded plotter.XYs   // the series' invalid repetitions' own values
		ys       []float64
	}
	data := make([][]panelData, len(sweeps)) // workload → panel
	var counts []int
	excludedReps, refExcluded, anyRange := 0, 0, false
	var findings []string
	for wi := range sweeps {
		w := &sweeps[wi]
		data[wi] = make([]panelData, len(sw.panels))
		var texts []string
		for pi, sp := range sw.panels {
			pd := &data[wi][pi]
			pd.pts = make([][]connPoint, len(w.series))
			row := func(series, role, threads, run string, g *results.Group) (results.Stats, bool) {
				rate := ""
				if sp.at == sweepRate {
					rate = results.FormatFloat(w.rate)
				}
				if g == nil {
					f.addRow(w.name, series, role, threads, sp.metric.Name, sp.metric.Unit, rate, "0", "", "", "", results.BandNone, "0", "false", "not measured")
					return results.Stats{}, false
				}
				agg := g.Aggregate(sp.metric)
				st := agg.Stats
				lo, hi, band := st.Band()
				note, plotted := "", st.N > 0
				switch {
				case st.N == 0:
					note = "no valid repetition"
				case sp.metric.Unit == "ns" && st.Median <= 0:
					note, plotted = "median ≤ 0 cannot be shown on the log axis; left out", false
				}
				if agg.Excluded > 0 {
					note = joinNote(note, fmt.Sprintf("%d invalid repetition(s) excluded (%s)", agg.Excluded, strings.Join(agg.ExcludedReasons, ", ")))
				}
				anyRange = anyRange || plotted && band == results.BandRange
				f.addRow(w.name, series, role, threads, sp.metric.Name, sp.metric.Unit, rate, strconv.Itoa(st.N),
					results.FormatFloat(st.Median), results.FormatFloat(lo), results.FormatFloat(hi), band,
					strconv.Itoa(agg.Excluded), strconv.FormatBool(plotted), note)
				return st, plotted
			}
			for si, s := range w.series {
				dodge := 1 + sweepDodge*(float64(si)-float64(len(w.series)-1)/2)
				for ci, n := range s.counts {
					if !slices.Contains(counts, n) {
						counts = append(counts, n)
					}
					g := sp.group(a, w, s.runs[ci])
					st, ok := row(s.name, "pool", strconv.Itoa(n), s.runs[ci], g)
					if g != nil {
						for _, p := range g.Invalid() {
							if v, vok := sp.metric.Value(p); vok && v > 0 && !math.IsInf(v, 0) {
								pd.excluded = append(pd.excluded, plotter.XY{X: float64(n) * dodge, Y: v})
								pd.ys = append(pd.ys, v)
								excludedReps++
							}
						}
					}
					if !ok {
						continue
					}
					lo, hi, _ := st.Band()
					pd.pts[si] = append(pd.pts[si], connPoint{x: float64(n) * dodge, median: st.Median, lo: lo, hi: hi})
					pd.ys = append(pd.ys, st.Median, hi)
					if lo > 0 {
						pd.ys = append(pd.ys, lo)
					}
				}
			}
			var refTexts []string
			for _, r := range w.refs {
				g := sp.group(a, w, r.run)
				st, ok := row(r.name, "reference", "", r.run, g)
				if g != nil {
					refExcluded += g.Aggregate(sp.metric).Excluded
				}
				med := math.NaN()
				if ok {
					med = st.Median
					pd.ys = append(pd.ys, med)
					refTexts = append(refTexts, r.name+" "+fmtStat(st, sp.metric.Unit))
				}
				pd.refs = append(pd.refs, med)
			}
			if sp.at == sweepRate && w.rate <= 0 {
				texts = append(texts, "No equal-load point, so no p99")
				continue
			}
			var model []string
			for _, s := range w.series {
				model = append(model, sw.finding(a, w, s, sp))
			}
			t := fmt.Sprintf("%s: %s", sweepMetricText(sp, w), strings.Join(model, "; "))
			if len(refTexts) > 0 {
				t += " (references: " + strings.Join(refTexts, ", ") + ")"
			}
			texts = append(texts, t)
		}
		findings = append(findings, fmt.Sprintf("Under %s — %s.", w.name, strings.Join(texts, ". ")))
	}
	slices.Sort(counts)

	f.Caption = fmt.Sprintf("%s; error bars and intervals are each median's 95%% CI or min–max range (see notes); \"k ÷ j %s\" is the ratio of the medians at the largest and smallest count with its 95%% interval (stats.RatioCI, not corrected for the number of ratios). %s%s",
		sw.intro, sw.many, strings.Join(findings, " "), excludedCaption(excludedReps))
	if refExcluded > 0 {
		f.note("%s of the references excluded (not drawn; in no median or line).", plural(refExcluded, "invalid repetition", "invalid repetitions"))
	}
	f.note("Error bars: %s.", bandText)
	if anyRange {
		f.note("Some error bars are min–max ranges, not confidence intervals (see the CSV's band column).")
	}
	most := 0
	for _, w := range sweeps {
		most = max(most, len(w.series))
	}
	if most > 1 {
		spread := sweepDodge * float64(most-1) / 2
		f.note("The markers of the series at one %s count are drawn slightly apart (×%s to ×%s of the count), so that their error bars do not hide each other; the CSV has the exact counts.",
			sw.one, trimFloat(1-spread), trimFloat(1+spread))
	}

	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		rows := make([][]*plot.Plot, len(sweeps))
		xmin, xmax := float64(counts[0])/1.4, float64(counts[len(counts)-1])*1.4
		var ticks []plot.Tick
		for _, n := range counts {
			ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
		}
		// A series (and a reference) looks in every panel like its
		// configuration at its smallest count under the first workload
		// it appears in (styles: the run's one assignment, shared by
		// every figure).
		look := map[string]seriesStyle{}
		for _, w := range sweeps {
			for _, s := range w.series {
				if _, ok := look[s.name]; !ok {
					look[s.name] = a.style[s.runs[0]]
				}
			}
			for _, r := range w.refs {
				if _, ok := look[r.name]; !ok {
					look[r.name] = a.style[r.run]
				}
			}
		}
		styleOfSeries := func(s *sweepSeries) seriesStyle { return look[s.name] }
		for wi := range sweeps {
			w := &sweeps[wi]
			rows[wi] = make([]*plot.Plot, len(sw.panels))
			for pi, sp := range sw.panels {
				pd := &data[wi][pi]
				title := w.name + ": " + sp.title
				switch {
				case sp.at == sweepRate && w.rate > 0:
					title = fmt.Sprintf("%s: p99 at %s req/s", w.name, formatNumber(w.rate))
				case sp.at == sweepRate:
					title = w.name + ": p99 (no equal-load point)"
				}
				p := newPlot(tx(title), tx(sw.axis), "")
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.ConstantTicks(ticks)
				p.X.Min, p.X.Max = xmin, xmax
				if sp.metric.Unit == "ns" {
					ymin, ymax, _ := logRange(pd.ys)
					setLogY(p, ymin, ymax, func(v float64) string { return tx(formatNs(v)) })
				} else {
					p.Y.Min = 0
					p.Y.Tick.Marker = linearTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
					for _, y := range pd.ys {
						p.Y.Max = math.Max(p.Y.Max, y*1.05)
					}
				}
				for si, s := range w.series {
					st := styleOfSeries(s)
					addConnSeries(p, pd.pts[si], st, st.glyph(), true, p.Y.Min)
					if sw.linear && len(pd.pts[si]) > 0 {
						addLinear(p, pd.pts[si][0], counts[len(counts)-1], st)
					}
				}
				for ri, r := range w.refs {
					if med := pd.refs[ri]; !math.IsNaN(med) && med > 0 {
						ln, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: med}, {X: xmax, Y: med}})
						if err == nil {
							ln.LineStyle = look[r.name].line()
							ln.LineStyle.Dashes = theoryDash
							p.Add(ln)
						}
					}
				}
				addExcluded(p, pd.excluded)
				rows[wi][pi] = p
			}
		}
		l := newLegend()
		var seen []string
		for wi := range sweeps {
			w := &sweeps[wi]
			for _, s := range w.series {
				if !slices.Contains(seen, s.name) {
					seen = append(seen, s.name)
					st := styleOfSeries(s)
					l.Add(tx(s.name), lineThumb{st.line()}, glyphThumb{st.glyph()})
				}
			}
			for _, r := range w.refs {
				if !slices.Contains(seen, r.name) {
					seen = append(seen, r.name)
					ls := look[r.name].line()
					ls.Dashes = theoryDash
					l.Add(tx(r.name+" (reference)"), lineThumb{ls})
				}
			}
		}
		if sw.linear {
			ls := draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.6), Dashes: theoryDash}
			l.Add(tx("linear speed-up"), lineThumb{ls})
		}
		if slices.ContainsFunc(data, func(ps []panelData) bool {
			return slices.ContainsFunc(ps, func(pd panelData) bool { return len(pd.excluded) > 0 })
		}) {
			l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
		}
		return rows, &l
	}
	return f
}

// sweepMetricText names a panel's metric in the caption: "capacity",
// "p99 at 2100 req/s" or "capacity at the objective".
func sweepMetricText(sp sweepPanel, w *sweepWorkload) string {
	switch sp.at {
	case sweepRate:
		return fmt.Sprintf("p99 at %s req/s", results.FormatFloat(w.rate))
	case sweepSLO:
		return "capacity at the objective"
	}
	return "capacity"
}

// axisColumn is the CSV column of the sweep's count: "threads", "cpus".
func (sw *sweepSpec) axisColumn() string {
	if sw.key == "/cpus=" {
		return "cpus"
	}
	return "threads"
}

// addLinear draws a series' linear speed-up from its first point: the
// median at count c0, times k ÷ c0 at k up to last, thin and dashed.
func addLinear(p *plot.Plot, first connPoint, last int, st seriesStyle) {
	c0 := first.x // the dodge moves x by a few percent: the line starts at the marker
	if c0 <= 0 || first.median <= 0 {
		return
	}
	ln, err := plotter.NewLine(plotter.XYs{{X: c0, Y: first.median}, {X: float64(last), Y: first.median * float64(last) / math.Round(c0)}})
	if err != nil {
		return
	}
	ln.LineStyle = st.line()
	ln.LineStyle.Width = vg.Points(0.6)
	ln.LineStyle.Dashes = theoryDash
	p.Add(ln)
	p.Y.Max = math.Max(p.Y.Max, first.median*float64(last)/math.Round(c0)*1.05)
}

// finding states one series' result in one panel: its best count by
// median (highest capacity, lowest p99) with its value and interval, and
// the largest count ÷ the smallest with a 95% interval and what it says:
// more help, cost, or no clear difference; for the cores sweep beside
// the linear speed-up.
func (sw *sweepSpec) finding(a *analysis, w *sweepWorkload, s *sweepSeries, sp sweepPanel) string {
	best, bestSt := -1, results.Stats{}
	var first, last []float64
	firstN, lastN := 0, 0
	for ci, n := range s.counts {
		g := sp.group(a, w, s.runs[ci])
		if g == nil {
			continue
		}
		agg := g.Aggregate(sp.metric)
		st := agg.Stats
		if st.N == 0 {
			continue
		}
		if best < 0 || sp.metric.HigherIsBetter && st.Median > bestSt.Median || !sp.metric.HigherIsBetter && st.Median < bestSt.Median {
			best, bestSt = n, st
		}
		xs := agg.Values
		if first == nil {
			first, firstN = xs, n
		}
		last, lastN = xs, n
	}
	if best < 0 {
		return s.name + " no valid value"
	}
	text := fmt.Sprintf("%s best at %s (%s)", s.name, plural(best, sw.one, sw.many), fmtStat(bestSt, sp.metric.Unit))
	if lastN == firstN {
		return text + fmt.Sprintf(", measured at one %s count only", sw.one)
	}
	r := stats.RatioCI(last, first, 0.95)
	if !r.OK {
		return text + fmt.Sprintf(", %d ÷ %d %s: no interval (%s)", lastN, firstN, sw.many, r.Why)
	}
	verdict := "no clear difference"
	helps := r.Lo > 1
	costs := r.Hi < 1
	if !sp.metric.HigherIsBetter {
		helps, costs = costs, helps
	}
	switch {
	case helps:
		verdict = "more " + sw.many + " help"
	case costs:
		verdict = "more " + sw.many + " cost"
	}
	linear := ""
	if sw.linear {
		linear = fmt.Sprintf(" (linear: %s×)", trimFloat(float64(lastN)/float64(firstN)))
	}
	return text + fmt.Sprintf(", %d ÷ %d %s %s× [%s, %s]%s: %s", lastN, firstN, sw.many, trimFloat(r.Est), trimFloat(r.Lo), trimFloat(r.Hi), linear, verdict)
}
