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
func (sw *sweepSpec) applies(a *Analysis) bool {
	for _, w := range a.SuiteWorkloads() {
		for _, name := range w.Names {
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
func (sw *sweepSpec) sweeps(a *Analysis) []sweepWorkload {
	var out []sweepWorkload
	for _, w := range a.SuiteWorkloads() {
		ws := sweepWorkload{name: w.Name, rate: a.EqualRate(&w)}
		byName := map[string]*sweepSeries{}
		var order []*sweepSeries
		for i, name := range w.Names {
			run := w.Runs[i]
			if !slices.ContainsFunc(a.Groups, func(g *results.Group) bool { return g.Config.Name == run && len(g.Measured()) > 0 }) {
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
func (sp sweepPanel) group(a *Analysis, w *sweepWorkload, run string) *results.Group {
	switch sp.at {
	case sweepRate:
		if w.rate <= 0 {
			return nil
		}
		return results.Find(a.Groups, run, results.KindRate, w.rate)
	case sweepSLO:
		return results.Find(a.Groups, run, results.KindSLO, 0)
	}
	return a.Capacity(run)
}

// sweepDodge spreads the series' markers and error bars at one thread
// count apart, as a factor of the count on the log axis, so that bars of
// different series do not hide each other.
const sweepDodge = 0.06

// threadSweepFigure is the thread sweep's figure (threadsSweep).
func threadSweepFigure(a *Analysis) *Figure { return threadsSweep.figure(a) }

// coresFigure is the cores sweep's figure (coresSweep).
func coresFigure(a *Analysis) *Figure { return coresSweep.figure(a) }

// figure draws, per workload with a sweep, the spec's panels against the
// count (log x: 1, 2, 4, 8, …), one series per model, the references
// (configurations without a count) as horizontal lines at their medians,
// and, for the cores sweep, each series' linear speed-up; error bars are
// each median's interval (bandText). The caption states, per workload and
// model, the best count by each metric and the largest count ÷ the
// smallest with a 95% interval (stats.RatioCI), and whether more
// helped or cost; nil if the run has no sweep of the spec's kind.
func (sw *sweepSpec) figure(a *Analysis) *Figure {
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
	sp := &sweepPlot{sw: sw, a: a, sweeps: sweeps, data: make([][]sweepPanelData, len(sweeps))}
	var findings []string
	for wi := range sweeps {
		findings = append(findings, sp.addWorkload(f, wi))
	}
	slices.Sort(sp.counts)

	f.Caption = fmt.Sprintf("%s; error bars and intervals are each median's 95%% CI or min–max range (see notes); \"k ÷ j %s\" is the ratio of the medians at the largest and smallest count with its 95%% interval (stats.RatioCI, not corrected for the number of ratios). %s%s",
		sw.intro, sw.many, strings.Join(findings, " "), excludedCaption(sp.excludedReps))
	if sp.refExcluded > 0 {
		f.note("%s of the references excluded (not drawn; in no median or line).", Plural(sp.refExcluded, "invalid repetition", "invalid repetitions"))
	}
	f.note("Error bars: %s.", bandText)
	f.noteRanges(sp.anyRange)
	most := 0
	for _, w := range sweeps {
		most = max(most, len(w.series))
	}
	if most > 1 {
		spread := sweepDodge * float64(most-1) / 2
		f.note("The markers of the series at one %s count are drawn slightly apart (×%s to ×%s of the count), so that their error bars do not hide each other; the CSV has the exact counts.",
			sw.one, TrimFloat(1-spread), TrimFloat(1+spread))
	}
	f.build = sp.build
	return f
}

// sweepPlot is what a sweep figure draws, gathered a workload at a time.
type sweepPlot struct {
	sw     *sweepSpec
	a      *Analysis
	sweeps []sweepWorkload
	data   [][]sweepPanelData // workload → panel
	counts []int              // every count measured, ascending once gathered
	// excludedReps counts the series' invalid repetitions drawn,
	// refExcluded the references' invalid repetitions left out.
	excludedReps, refExcluded int
	anyRange                  bool
}

// sweepPanelData is what one panel of a sweep figure draws.
type sweepPanelData struct {
	pts      [][]connPoint // per series, x moved aside by the dodge
	refs     []float64     // per reference: its median, NaN if none
	excluded plotter.XYs   // the series' invalid repetitions' own values
	ys       []float64
}

// addWorkload adds workload wi's panels and returns its sentence of the
// caption: "Under <workload> — <each panel's finding>."
func (sp *sweepPlot) addWorkload(f *Figure, wi int) string {
	w := &sp.sweeps[wi]
	sp.data[wi] = make([]sweepPanelData, len(sp.sw.panels))
	var texts []string
	for pi, panel := range sp.sw.panels {
		texts = append(texts, sp.addPanel(f, w, &sp.data[wi][pi], panel))
	}
	return fmt.Sprintf("Under %s — %s.", w.name, strings.Join(texts, ". "))
}

// addPanel gathers into pd the points of one panel of workload w — its
// series at each count, its references — and returns the panel's
// finding for the caption.
func (sp *sweepPlot) addPanel(f *Figure, w *sweepWorkload, pd *sweepPanelData, panel sweepPanel) string {
	pd.pts = make([][]connPoint, len(w.series))
	for si, s := range w.series {
		dodge := 1 + sweepDodge*(float64(si)-float64(len(w.series)-1)/2)
		for ci, n := range s.counts {
			if !slices.Contains(sp.counts, n) {
				sp.counts = append(sp.counts, n)
			}
			pt := sp.point(f, w, panel, s.name, "pool", strconv.Itoa(n), panel.group(sp.a, w, s.runs[ci]))
			for _, iv := range pt.invalid {
				if iv.v > 0 {
					pd.excluded = append(pd.excluded, plotter.XY{X: float64(n) * dodge, Y: iv.v})
					pd.ys = append(pd.ys, iv.v)
					sp.excludedReps++
				}
			}
			if !pt.plotted {
				continue
			}
			pd.pts[si] = append(pd.pts[si], connPoint{x: float64(n) * dodge, median: pt.median(), lo: pt.lo, hi: pt.hi})
			pd.ys = append(pd.ys, pt.median(), pt.hi)
			if pt.lo > 0 {
				pd.ys = append(pd.ys, pt.lo)
			}
		}
	}
	var refTexts []string
	for _, r := range w.refs {
		pt := sp.point(f, w, panel, r.name, "reference", "", panel.group(sp.a, w, r.run))
		sp.refExcluded += pt.agg.Excluded
		med := math.NaN()
		if pt.plotted {
			med = pt.median()
			pd.ys = append(pd.ys, med)
			refTexts = append(refTexts, r.name+" "+FormatStat(pt.agg.Stats, panel.metric.Unit))
		}
		pd.refs = append(pd.refs, med)
	}
	if panel.at == sweepRate && w.rate <= 0 {
		return "No equal-load point, so no p99"
	}
	var model []string
	for _, s := range w.series {
		model = append(model, sp.sw.finding(sp.a, w, s, panel))
	}
	t := fmt.Sprintf("%s: %s", sweepMetricText(panel, w), strings.Join(model, "; "))
	if len(refTexts) > 0 {
		t += " (references: " + strings.Join(refTexts, ", ") + ")"
	}
	return t
}

// point returns the point of the panel's metric at g (nil: not measured)
// for one series (role "pool", at count) or reference of workload w, and
// writes its CSV row.
func (sp *sweepPlot) point(f *Figure, w *sweepWorkload, panel sweepPanel, series, role, count string, g *results.Group) bandPoint {
	rate := ""
	if panel.at == sweepRate {
		rate = results.FormatFloat(w.rate)
	}
	pt := aggregatePoint(g, panel.metric)
	switch {
	case g == nil:
		pt.note = "not measured"
		pt.agg.Stats.Median = math.NaN() // no median at all: an empty cell
	case !pt.valid():
		pt.note = "no valid repetition"
	case panel.metric.Unit == "ns" && pt.median() <= 0:
		pt.note, pt.plotted = "median ≤ 0 cannot be shown on the log axis; left out", false
	}
	sp.anyRange = sp.anyRange || pt.drawnRange()
	f.addPointRow(&pt, w.name, series, role, count, panel.metric.Name, panel.metric.Unit, rate)
	return pt
}

// build returns the figure's panels, a row per workload, and its legend
// (Figure.build).
func (sp *sweepPlot) build(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
	rows := make([][]*plot.Plot, len(sp.sweeps))
	look := sp.looks()
	for wi := range sp.sweeps {
		rows[wi] = make([]*plot.Plot, len(sp.sw.panels))
		for pi := range sp.sw.panels {
			rows[wi][pi] = sp.panelPlot(tx, wi, pi, look)
		}
	}
	return rows, sp.legend(tx, look)
}

// looks returns the style of each series and reference by name: in every
// panel, that of its configuration at its smallest count under the
// first workload it appears in (styles: the run's one assignment, shared
// by every figure).
func (sp *sweepPlot) looks() map[string]seriesStyle {
	look := map[string]seriesStyle{}
	for _, w := range sp.sweeps {
		for _, s := range w.series {
			if _, ok := look[s.name]; !ok {
				look[s.name] = sp.a.style[s.runs[0]]
			}
		}
		for _, r := range w.refs {
			if _, ok := look[r.name]; !ok {
				look[r.name] = sp.a.style[r.run]
			}
		}
	}
	return look
}

// panelPlot draws panel pi of workload wi: its series with their error
// bars (and linear speed-ups), its references and its invalid
// repetitions.
func (sp *sweepPlot) panelPlot(tx func(string) string, wi, pi int, look map[string]seriesStyle) *plot.Plot {
	w, panel, pd := &sp.sweeps[wi], sp.sw.panels[pi], &sp.data[wi][pi]
	xmin, xmax := float64(sp.counts[0])/1.4, float64(sp.counts[len(sp.counts)-1])*1.4
	var ticks []plot.Tick
	for _, n := range sp.counts {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	title := w.name + ": " + panel.title
	switch {
	case panel.at == sweepRate && w.rate > 0:
		title = fmt.Sprintf("%s: p99 at %s req/s", w.name, formatNumber(w.rate))
	case panel.at == sweepRate:
		title = w.name + ": p99 (no equal-load point)"
	}
	p := newPlot(tx(title), tx(sp.sw.axis), "")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = xmin, xmax
	if panel.metric.Unit == "ns" {
		ymin, ymax, _ := logRange(pd.ys)
		setLogY(p, ymin, ymax, func(v float64) string { return tx(FormatNs(v)) })
	} else {
		p.Y.Min = 0
		p.Y.Tick.Marker = linearTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
		for _, y := range pd.ys {
			p.Y.Max = math.Max(p.Y.Max, y*1.05)
		}
	}
	for si, s := range w.series {
		st := look[s.name]
		addConnSeries(p, pd.pts[si], st, st.glyph(), true, p.Y.Min)
		if sp.sw.linear && len(pd.pts[si]) > 0 {
			addLinear(p, pd.pts[si][0], sp.counts[len(sp.counts)-1], st)
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
	return p
}

// legend returns the figure's legend: each series and reference once,
// the linear speed-up and, if any is drawn, the invalid repetitions.
func (sp *sweepPlot) legend(tx func(string) string, look map[string]seriesStyle) *plot.Legend {
	l := newLegend()
	var seen []string
	for wi := range sp.sweeps {
		w := &sp.sweeps[wi]
		for _, s := range w.series {
			if !slices.Contains(seen, s.name) {
				seen = append(seen, s.name)
				st := look[s.name]
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
	if sp.sw.linear {
		ls := draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.6), Dashes: theoryDash}
		l.Add(tx("linear speed-up"), lineThumb{ls})
	}
	if slices.ContainsFunc(sp.data, func(ps []sweepPanelData) bool {
		return slices.ContainsFunc(ps, func(pd sweepPanelData) bool { return len(pd.excluded) > 0 })
	}) {
		l.Add(tx(excludedLegend), glyphThumb{excludedGlyph()})
	}
	return &l
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
func (sw *sweepSpec) finding(a *Analysis, w *sweepWorkload, s *sweepSeries, sp sweepPanel) string {
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
	text := fmt.Sprintf("%s best at %s (%s)", s.name, Plural(best, sw.one, sw.many), FormatStat(bestSt, sp.metric.Unit))
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
		linear = fmt.Sprintf(" (linear: %s×)", TrimFloat(float64(lastN)/float64(firstN)))
	}
	return text + fmt.Sprintf(", %d ÷ %d %s %s× [%s, %s]%s: %s", lastN, firstN, sw.many, TrimFloat(r.Est), TrimFloat(r.Lo), TrimFloat(r.Hi), linear, verdict)
}
