package plots

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/results"
)

// palette is the Okabe–Ito colour-blind-safe palette (black last), one
// colour per configuration in report order, reused cyclically with a
// different dash pattern once exhausted.
var palette = []color.RGBA{
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	{R: 0xB8, G: 0xA4, B: 0x00, A: 0xFF}, // yellow, darkened to be visible on white
	{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
}

// glyphs are the markers, one per configuration, in step with palette.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// dashes are the line patterns of the first, second, … round of the
// palette.
var dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(2)}}

// theoryDash is the dash pattern of the M/M/c ideal's lines.
var theoryDash = []vg.Length{vg.Points(5), vg.Points(3)}

// seriesStyle is how one configuration looks in every figure.
type seriesStyle struct {
	Color color.RGBA
	Glyph draw.GlyphDrawer
	Dash  []vg.Length
}

// line returns the configuration's line style.
func (s seriesStyle) line() draw.LineStyle {
	return draw.LineStyle{Color: s.Color, Width: vg.Points(1.2), Dashes: s.Dash}
}

// glyph returns the configuration's marker style.
func (s seriesStyle) glyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.Color, Radius: vg.Points(2.5), Shape: s.Glyph}
}

// fill returns the configuration's colour made translucent, for bands.
func (s seriesStyle) fill(alpha uint8) color.Color {
	return color.NRGBA{R: s.Color.R, G: s.Color.G, B: s.Color.B, A: alpha}
}

// styleOf returns the style of the i-th configuration in report order.
func styleOf(i int) seriesStyle {
	n := len(palette)
	return seriesStyle{Color: palette[i%n], Glyph: glyphs[i%n], Dash: dashes[(i/n)%len(dashes)]}
}

// styles assigns every configuration of the run a style by its position
// in report order: the run's configurations, then the unavailable ones,
// then any other configuration found in the points. The assignment
// depends only on the run, so a configuration looks the same in every
// figure of the run.
func styles(r *results.Run, groups []*results.Group) map[string]seriesStyle {
	m := map[string]seriesStyle{}
	add := func(name string) {
		if _, ok := m[name]; !ok {
			m[name] = styleOf(len(m))
		}
	}
	for _, c := range r.Configs {
		add(c.Name)
	}
	for _, u := range r.Unavailable {
		add(u.Config.Name)
	}
	for _, g := range groups {
		add(g.Config.Name)
	}
	return m
}

// Fonts: every text in a figure is Liberation Sans (embedded in the
// binary by gonum), so output does not depend on the fonts installed.
var (
	fontBody  = font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(9)}
	fontTitle = font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(10)}
	fontSmall = font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(8)}
)

// newPlot returns a plot with the package's fonts.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontTitle
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = fontBody
		a.Tick.Label.Font = fontSmall
	}
	p.Legend.TextStyle.Font = fontBody
	return p
}

// newLegend returns an empty legend, drawn by Figure outside the data
// area, icons left of the text.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = fontBody
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(22)
	l.Padding = vg.Points(3)
	return l
}

// textStyle returns a plain text style in font f.
func textStyle(f font.Font) text.Style {
	return text.Style{Color: color.Black, Font: f, Handler: plot.DefaultTextHandler}
}

// texEscaper escapes the characters LaTeX treats specially, for vgtex
// output, whose strings are LaTeX source.
var texEscaper = strings.NewReplacer(
	`\`, `\textbackslash{}`, `%`, `\%`, `_`, `\_`, `&`, `\&`, `#`, `\#`, `$`, `\$`,
	`{`, `\{`, `}`, `\}`, `^`, `\^{}`, `~`, `\~{}`, `µ`, `$\mu$`, `−`, `$-$`, `≥`, `$\geq$`, `≤`, `$\leq$`,
	`×`, `$\times$`, `–`, `--`,
)

// identity leaves text as it is (every format but tex).
func identity(s string) string { return s }
