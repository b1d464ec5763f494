package plots

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"concbench/results"
)

// ChainFigure is the validation figure's name: figures/chain.<format>.
const ChainFigure = "chain"

// chainSeries are the figure's lines: what each plots, and how it looks.
var chainSeries = []struct {
	label string
	value func(e *results.ChainExperiment, p99 bool) float64
	style seriesStyle
	line  bool // a line without markers (a prediction)
}{
	{label: "measured", value: func(e *results.ChainExperiment, p99 bool) float64 {
		return pick(e.Measured.MeanNs, e.Measured.P99Ns, p99)
	},
		style: styleOf(0)},
	{label: "on the effective service time (judged)", value: func(e *results.ChainExperiment, p99 bool) float64 {
		return pick(e.Predicted.MeanNs, e.Predicted.P99Ns, p99)
	},
		style: seriesStyle{Color: palette[1], Glyph: glyphs[1], Dash: theoryDash}, line: true},
	{label: "plain: measured service + floor", value: func(e *results.ChainExperiment, p99 bool) float64 {
		return pick(e.Plain.MeanNs, e.Plain.P99Ns, p99)
	},
		style: seriesStyle{Color: palette[2], Glyph: glyphs[2], Dash: dashes[2]}, line: true},
	{label: "textbook (asked work, no floor)", value: func(e *results.ChainExperiment, p99 bool) float64 {
		return pick(e.Textbook.MeanNs, e.Textbook.P99Ns, p99)
	},
		style: seriesStyle{Color: palette[7], Glyph: glyphs[7], Dash: dashes[1]}, line: true},
}

func pick(mean, p99 float64, wantP99 bool) float64 {
	if wantP99 {
		return p99
	}
	return mean
}

// ValidationFigure returns the measured response time against the
// predictions over the utilization: one column per work distribution,
// the mean on top, p99 below.
func ValidationFigure(v *results.Validation) *Figure {
	f := &Figure{Name: ChainFigure, Title: "Measurement chain: measured vs predicted response time",
		Header: []string{"experiment", "work", "rho", "series", "statistic", "latency_us"},
		Width:  7 * vg.Inch, Height: 5 * vg.Inch}
	var works []string
	queue := map[string]string{} // work → its queue's name, e.g. M/M/4
	for _, e := range v.Experiments {
		if !slices.Contains(works, e.Work) {
			works = append(works, e.Work)
			queue[e.Work], _, _ = strings.Cut(e.Name, " ρ=")
		}
	}
	for _, e := range v.Experiments {
		for _, s := range chainSeries {
			for _, p99 := range []bool{false, true} {
				if y := s.value(&e, p99); y > 0 {
					f.addRow(e.Name, e.Work, strconv.FormatFloat(e.Rho, 'f', 3, 64), s.label, pick2("mean", "p99", p99), strconv.FormatFloat(y/1e3, 'f', 2, 64))
				}
			}
		}
	}
	f.Caption = v.Verdict + "."
	f.build = func(tx func(string) string) ([][]*plot.Plot, *plot.Legend) {
		if len(works) == 0 {
			return nil, nil // nothing was measured (the caption says why)
		}
		legend := newLegend()
		panels := make([][]*plot.Plot, 2)
		for row, p99 := range []bool{false, true} {
			for _, w := range works {
				title := map[string]string{"exp": "exponential work", "fixed": "constant work"}[w] + " (" + queue[w] + ")"
				p := newPlot(tx(title), tx("utilization ρ (measured)"), tx(pick2("mean", "p99", p99)+" response time (µs)"))
				if row == 1 {
					p.Title.Text = ""
				}
				for _, s := range chainSeries {
					var xys plotter.XYs
					for _, e := range v.Experiments {
						if y := s.value(&e, p99); e.Work == w && y > 0 && e.Rho > 0 {
							xys = append(xys, plotter.XY{X: e.Rho, Y: y / 1e3})
						}
					}
					if len(xys) == 0 {
						continue
					}
					ln, sc, err := plotter.NewLinePoints(xys)
					if err != nil {
						continue
					}
					ln.LineStyle = s.style.line()
					sc.GlyphStyle = s.style.glyph()
					if s.line {
						sc.GlyphStyle.Radius = vg.Points(1.5)
					}
					p.Add(ln, sc)
					if row == 0 && w == works[0] {
						legend.Add(tx(s.label), ln, sc)
					}
				}
				// ρ from 0 to 1 (beyond, if a run was unstable), and room
				// above the highest point, so that no point sits on a frame.
				p.X.Min, p.Y.Min = 0, 0
				p.X.Max = math.Max(1, p.X.Max*1.05)
				p.Y.Max *= 1.1
				panels[row] = append(panels[row], p)
			}
		}
		return panels, &legend
	}
	return f
}

func pick2(a, b string, second bool) string {
	if second {
		return b
	}
	return a
}
