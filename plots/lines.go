package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Series is one configuration's line in a LineFigure: Y against X at the
// valid points, and the invalid points' values apart (drawn as the grey
// crosses every figure uses for them, in no line).
type Series struct {
	Label string
	// X and Y are the valid points, in increasing X.
	X, Y []float64
	// InvalidX and InvalidY are the invalid points.
	InvalidX, InvalidY []float64
}

// LineFigure returns a one-panel figure of series against a linear x axis
// and a logarithmic y axis, in the report's style: one colour and marker
// per series, in order (the i-th series looks like the i-th configuration
// of a run), the legend outside the data area. Its table is every point,
// valid or not. Non-positive y values cannot be drawn on the log axis and
// are left out with a note. It is for the commands that measure outside a
// run (concbench priority), whose figures are not built from a stored run.
func LineFigure(name, title, xlabel, ylabel string, series []Series) *Figure {
	f := &Figure{
		Name: name, Title: title,
		Width: 7 * vg.Inch, Height: 4 * vg.Inch,
		Header: []string{"series", "x", "y", "valid"},
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	keep := func(ys []float64) {
		for _, y := range ys {
			if y > 0 {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
	}
	for _, s := range series {
		keep(s.Y)
		keep(s.InvalidY)
		for i := range s.X {
			f.addRow(s.Label, strconv.FormatFloat(s.X[i], 'g', -1, 64), strconv.FormatFloat(s.Y[i], 'g', -1, 64), "true")
		}
		for i := range s.InvalidX {
			f.addRow(s.Label, strconv.FormatFloat(s.InvalidX[i], 'g', -1, 64), strconv.FormatFloat(s.InvalidY[i], 'g', -1, 64), "false")
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		p := newPlot("", tx(xlabel), tx(ylabel))
		setLogY(p, lo/1.3, hi*1.3, formatNumber)
		leg := newLegend()
		anyInvalid := false
		for i, s := range series {
			st := styleOf(i)
			var pts plotter.XYs
			for j := range s.X {
				if s.Y[j] > 0 {
					pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
				} else {
					f.note("%s: y %g at x %g is not positive and cannot be drawn on the log axis", s.Label, s.Y[j], s.X[j])
				}
			}
			if len(pts) > 0 {
				l, sc, err := plotter.NewLinePoints(pts)
				if err == nil {
					l.LineStyle, sc.GlyphStyle = st.line(), st.glyph()
					p.Add(l, sc)
					leg.Add(tx(s.Label), l, sc)
				}
			}
			var bad plotter.XYs
			for j := range s.InvalidX {
				if s.InvalidY[j] > 0 {
					bad = append(bad, plotter.XY{X: s.InvalidX[j], Y: s.InvalidY[j]})
				}
			}
			if len(bad) > 0 {
				if sc, err := plotter.NewScatter(bad); err == nil {
					sc.GlyphStyle = excludedGlyph()
					p.Add(sc)
					if !anyInvalid {
						leg.Add(tx(excludedLegend), sc)
						anyInvalid = true
					}
				}
			}
		}
		p.Add(plotter.NewGrid())
		return [][]*plot.Plot{{p}}, &leg
	}
	return f
}
