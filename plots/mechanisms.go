package plots

import (
	"cmp"
	"fmt"
	"image/color"
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

// MechRow is one configuration's mechanisms under one workload: the
// medians, over its valid mechanisms points, of its counts per request,
// or why it has none.
type MechRow struct {
	Workload string // the workload's name
	Name     string // the configuration's name, as the who-wins table has it
	OK       bool
	Why      string // without counts: "not counted: …", "no valid point (…)"
	N        int    // valid repetitions
	Total    results.Stats
	Kinds    map[string]float64 // per kind (results.SyscallKindNames), the median
	Wakes    float64
	IPIs     float64
	IPIsWhy  string // why the IPIs were not counted
}

// HasMechanisms reports whether the run has mechanisms points
// (results.KindMechanisms): only such a run gets the Mechanisms table and
// figure.
func HasMechanisms(a *Analysis) bool {
	return slices.ContainsFunc(a.Groups, func(g *results.Group) bool { return g.Kind == results.KindMechanisms })
}

// mechGroup returns the configuration's mechanisms group at rate (the
// workload's equal load), else its one at the highest rate, or nil.
func (a *Analysis) mechGroup(run string, rate float64) *results.Group {
	if g := results.Find(a.Groups, run, results.KindMechanisms, rate); g != nil {
		return g
	}
	var best *results.Group
	for _, g := range a.Groups {
		if g.Config.Name == run && g.Kind == results.KindMechanisms && (best == nil || g.RatePerS > best.RatePerS) {
			best = g
		}
	}
	return best
}

// MechRows returns a row per workload and configuration of the run that
// has mechanisms points, in report order.
func (a *Analysis) MechRows() []MechRow {
	var rows []MechRow
	for _, w := range a.SuiteWorkloads() {
		rate := a.EqualRate(&w)
		for k, run := range w.Runs {
			row := MechRow{Workload: w.Name, Name: w.Names[k]}
			if g := a.mechGroup(run, rate); g != nil {
				row.fill(g)
			} else {
				row.Why = a.noMechanisms(run)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// noMechanisms says why configuration run has no mechanisms point: it is
// unavailable on the machine, or it has none.
func (a *Analysis) noMechanisms(run string) string {
	for _, u := range a.Run.Unavailable {
		if u.Config.Name == run {
			return "unavailable: " + u.Reason
		}
	}
	return "no mechanisms point"
}

// fill sets r from its mechanisms group g: the medians over the valid
// points that were counted, or why there are none.
func (r *MechRow) fill(g *results.Group) {
	total := g.Aggregate(results.SyscallsPerReq)
	r.N, r.Total = total.Stats.N, total.Stats
	if r.N == 0 {
		r.Why = mechMissing(g, total)
		return
	}
	r.OK = true
	r.Kinds = map[string]float64{}
	for _, k := range results.SyscallKindNames() {
		r.Kinds[k] = g.Aggregate(results.SyscallKindPerReq(k)).Stats.Median
	}
	r.Wakes = g.Aggregate(results.FutexWakesPerReq).Stats.Median
	if ipis := g.Aggregate(results.WakeIPIsPerReq); ipis.Stats.N > 0 {
		r.IPIs = ipis.Stats.Median
	} else {
		r.IPIsWhy = "not counted"
		for _, p := range g.Valid() {
			if m := p.Server.Mechanisms; m != nil && m.WakeIPIsUnavailable != "" {
				r.IPIsWhy = m.WakeIPIsUnavailable
			}
		}
	}
}

// mechMissing says why group g has no counts: its points were not
// counted (the kernel's reason), are invalid, or were not measured.
func mechMissing(g *results.Group, agg results.Aggregate) string {
	for _, p := range g.Measured() {
		if p.Server.Mechanisms == nil && p.Server.MechanismsUnavailable != "" {
			return "not counted: " + p.Server.MechanismsUnavailable
		}
	}
	if agg.Excluded > 0 {
		return fmt.Sprintf("no valid point (%s)", strings.Join(agg.ExcludedReasons, "; "))
	}
	if len(agg.SkipReasons) > 0 {
		return fmt.Sprintf("no measured point (%s)", strings.Join(agg.SkipReasons, "; "))
	}
	return "no measured point"
}

// TopKinds names the kinds of system call that make up most of r's, the
// largest first: at most 4, each at least 0.05 per request.
func (r *MechRow) TopKinds() string {
	kinds := results.SyscallKindNames()
	slices.SortStableFunc(kinds, func(x, y string) int { return cmp.Compare(r.Kinds[y], r.Kinds[x]) })
	var parts []string
	for _, k := range kinds {
		if len(parts) == 4 || r.Kinds[k] < 0.05 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", k, r.Kinds[k]))
	}
	return strings.Join(parts, ", ")
}

// mechKinds are the mechanisms figure's segments: the kinds of system
// call, those that are rare in every model merged, so that the legend
// has at most 6 entries. Every kind of results.SyscallKindNames is in
// exactly one.
var mechKinds = []struct {
	label string
	kinds []string
	color color.RGBA
}{
	// Paul Tol's light scheme: colour-blind safe, and none of the models'
	// colours (the models are the bars, named on the axis).
	{"epoll_wait", []string{"epoll_wait"}, color.RGBA{R: 0x77, G: 0xAA, B: 0xDD, A: 0xFF}},
	{"epoll_ctl", []string{"epoll_ctl"}, color.RGBA{R: 0x99, G: 0xDD, B: 0xFF, A: 0xFF}},
	{"read + write", []string{"read", "write"}, color.RGBA{R: 0x44, G: 0xBB, B: 0x99, A: 0xFF}},
	{"futex", []string{"futex"}, color.RGBA{R: 0xEE, G: 0x88, B: 0x66, A: 0xFF}},
	{"io_uring_enter", []string{"io_uring_enter"}, color.RGBA{R: 0xEE, G: 0xDD, B: 0x88, A: 0xFF}},
	{"accept, other", []string{"accept", results.SyscallOther}, color.RGBA{R: 0xDD, G: 0xDD, B: 0xDD, A: 0xFF}},
}

// mechanismsFigure draws the system calls per request by kind: a panel
// per workload, a stacked bar per configuration, laid out as the bar
// figures are (wrapGrid, at TexMaxWidth, the legend in an empty cell),
// the panels on one value axis unless the workloads' totals differ by
// more than barSharedSpread.
func mechanismsFigure(a *Analysis) *Figure {
	rows := a.MechRows()
	if !slices.ContainsFunc(rows, func(r MechRow) bool { return r.OK }) {
		return nil
	}
	mf := &mechFigure{a: a, ws: a.SuiteWorkloads()}
	for _, w := range mf.ws {
		var wrows []MechRow
		for _, r := range rows {
			if r.Workload == w.Name {
				wrows = append(wrows, r)
			}
		}
		mf.rows = append(mf.rows, wrows)
	}
	mf.arrange()
	f := &Figure{
		Name:   "mechanisms",
		Title:  "System calls per request by kind (mechanisms point, equal load)",
		Width:  TexMaxWidth,
		Height: mf.height(),
		Header: []string{"workload", "config", "segment", "kinds", "per_request", "n", "note"},
	}
	for _, r := range rows {
		for _, mk := range mechKinds {
			v, n, note := "", "0", r.Why
			if r.OK {
				v, n, note = results.FormatFloat(sumKinds(&r, mk.kinds)), fmt.Sprint(r.N), ""
			}
			f.addRow(r.Workload, r.Name, mk.label, strings.Join(mk.kinds, " "), v, n, note)
		}
		if !r.OK {
			f.note("%s under %s: %s", r.Name, r.Workload, r.Why)
		}
	}
	f.Caption = mechanismsCaption(mf.ws, rows) + mf.axesText()
	f.lay = mf.layout
	return f
}

// mechFigure is what the mechanisms figure draws: per workload, a
// stacked bar per configuration.
type mechFigure struct {
	a    *Analysis
	ws   []Workload
	rows [][]MechRow // per workload, its configurations' rows
	grid [][]int     // workloads' indexes; -1 an empty cell
	// shared says that every panel has one value axis; sameNames that
	// every panel draws the same configurations, whose names only the
	// first column then writes.
	shared, sameNames bool
}

// arrange lays the panels out, a workload each, and decides whether they
// share their value axis and the names.
func (mf *mechFigure) arrange() {
	mf.grid = wrapGrid(len(mf.ws))
	lo, hi := math.Inf(1), 0.0
	for wi := range mf.ws {
		if m := mf.extent(wi); m > 0 {
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
	}
	mf.shared = hi <= barSharedSpread*lo
	mf.sameNames = true
	for _, w := range mf.ws[1:] {
		mf.sameNames = mf.sameNames && slices.Equal(w.Names, mf.ws[0].Names)
	}
}

// extent is the largest total of workload wi's bars.
func (mf *mechFigure) extent(wi int) float64 {
	m := 0.0
	for _, r := range mf.rows[wi] {
		if r.OK {
			m = math.Max(m, sumKinds(&r, results.SyscallKindNames()))
		}
	}
	return m
}

// height is the figure's height, as a bar figure's (wrappedHeight): a
// bar each configuration of a workload.
func (mf *mechFigure) height() vg.Length {
	n := 0
	for _, rs := range mf.rows {
		n = max(n, len(rs))
	}
	last := mf.grid[len(mf.grid)-1]
	return wrappedHeight(len(mf.grid), n, last[len(last)-1] < 0)
}

// axesText says in the caption whether the panels share their value
// axis.
func (mf *mechFigure) axesText() string {
	switch {
	case len(mf.ws) < 2:
		return ""
	case mf.shared:
		return " Every panel shares its value axis."
	}
	return fmt.Sprintf(" Each panel has its own value axis: the workloads' totals differ by more than %d×.", barSharedSpread)
}

// layout returns the grid of panels and the legend of the segments
// (Figure.lay).
func (mf *mechFigure) layout(tx func(string) string) layout {
	top := 0.0
	for wi := range mf.ws {
		top = math.Max(top, mf.extent(wi))
	}
	rows := gridPanels(mf.grid, isPanel, func(wi, c int, axis bool) *plot.Plot {
		xmax := top
		if !mf.shared {
			xmax = mf.extent(wi)
		}
		title := mf.a.workloadTitle(mf.ws[wi])
		if len(mf.ws) == 1 {
			title = "" // the figure's title says it
		}
		return mechPanel(tx, title, mf.rows[wi], xmax, c == 0 || !mf.sameNames, axis)
	})
	l := newLegend()
	for _, mk := range mechKinds {
		l.Add(tx(mk.label), &bars{Color: mk.color, Line: draw.LineStyle{Color: color.Black, Width: vg.Points(0.4)}})
	}
	return layout{panels: rows, legend: &l}
}

// sumKinds returns r's system calls per request of kinds.
func sumKinds(r *MechRow, kinds []string) float64 {
	v := 0.0
	for _, k := range kinds {
		v += r.Kinds[k]
	}
	return v
}

// mechPanel is one workload's panel: a stacked bar per configuration,
// the first on top, its total beside it; a configuration without counts
// gets the reason instead. Names writes the configurations' names on the
// left, axis the axis label under it.
func mechPanel(tx func(string) string, title string, rows []MechRow, xmax float64, names, axis bool) *plot.Plot {
	xlabel := ""
	if axis {
		xlabel = "system calls / request"
	}
	p := newPlot(tx(title), tx(xlabel), "")
	p.X.Min, p.X.Max = 0, math.Max(xmax, 0.1)*1.3 // room for the totals
	p.X.Tick.Marker = linearTicks{Format: func(v float64) string { return tx(formatNumber(v)) }}
	n := len(rows)
	labels := make([]string, n)
	base := make([]float64, n)
	cats := make([]float64, n)
	for i, r := range rows {
		cats[i] = float64(n - 1 - i)
		if names {
			labels[n-1-i] = tx(r.Name)
		}
	}
	for _, mk := range mechKinds {
		vals := make([]float64, n)
		for i := range rows {
			if rows[i].OK {
				vals[i] = sumKinds(&rows[i], mk.kinds)
			}
		}
		p.Add(&bars{Cats: cats, Values: vals, Bases: slices.Clone(base), Width: 0.7, Horizontal: true,
			Color: mk.color, Line: draw.LineStyle{Color: color.Black, Width: vg.Points(0.4)}})
		for i := range base {
			base[i] += vals[i]
		}
	}
	var xys plotter.XYs
	var texts []string
	for i, r := range rows {
		xys = append(xys, plotter.XY{X: base[i], Y: cats[i]})
		if r.OK {
			texts = append(texts, tx(fmt.Sprintf("%.2f", base[i])))
		} else {
			texts = append(texts, tx(mechShortWhy(r.Why)))
		}
	}
	if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts}); err == nil {
		sty := textStyle(fontSmall)
		sty.YAlign = draw.YCenter
		lb.TextStyle = make([]text.Style, len(texts))
		for i := range lb.TextStyle {
			lb.TextStyle[i] = sty
		}
		lb.Offset = vg.Point{X: vg.Points(4)}
		p.Add(unpadded{lb})
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Width = 0
	return p
}

// mechShortWhy is a bar's short note for a configuration without counts.
func mechShortWhy(why string) string {
	switch {
	case strings.HasPrefix(why, "not counted"):
		return "not counted"
	case strings.HasPrefix(why, "no valid point"):
		return "no valid point"
	case strings.HasPrefix(why, "unavailable"):
		return "unavailable"
	}
	return "no point"
}

// mechanismsCaption says what the figure shows and, per workload, the
// configurations with the fewest and the most system calls per request.
func mechanismsCaption(ws []Workload, rows []MechRow) string {
	var parts []string
	for _, w := range ws {
		var lo, hi *MechRow
		for i := range rows {
			r := &rows[i]
			if r.Workload != w.Name || !r.OK {
				continue
			}
			if lo == nil || r.Total.Median < lo.Total.Median {
				lo = r
			}
			if hi == nil || r.Total.Median > hi.Total.Median {
				hi = r
			}
		}
		if lo == nil {
			continue
		}
		s := fmt.Sprintf("%s: fewest %s (%.2f)", w.Name, lo.Name, lo.Total.Median)
		if hi != lo {
			s += fmt.Sprintf(", most %s (%.2f)", hi.Name, hi.Total.Median)
		}
		parts = append(parts, s)
	}
	return "System calls the server's threads entered per request, by kind, in each configuration's mechanisms point at the workload's equal load " +
		"(the medians of its valid repetitions; the Mechanisms table has the futex wake calls and the cross-CPU wake-ups). Per workload: " +
		strings.Join(parts, "; ") + "."
}
