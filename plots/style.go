package plots

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	plotpalette "gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"concbench/models/registry"
	"concbench/results"
)

// palette is the Okabe–Ito colour-blind-safe palette (black last). Each
// model has one colour of it, or past its end a generated one
// (modelColor, slotColor: its slot in the model table), the same in every
// run and every figure.
var palette = []color.RGBA{
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	{R: 0xB8, G: 0xA4, B: 0x00, A: 0xFF}, // yellow, darkened to be visible on white
	// Beyond Okabe–Ito's seven: Paul Tol's muted scheme's darker colours,
	// for the models of Leader/Followers as servers practise it.
	{R: 0x33, G: 0x22, B: 0x88, A: 0xFF}, // indigo
	{R: 0x88, G: 0x22, B: 0x55, A: 0xFF}, // wine
	{R: 0x11, G: 0x77, B: 0x33, A: 0xFF}, // green
	{R: 0x99, G: 0x99, B: 0x33, A: 0xFF}, // olive
	{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
}

// modelColor returns the colour of a model, the same in every run: its
// slot in the model table (registry.Model.Color), slotColor of it; a
// model not in the table (nginx, asio: real servers) is drawn in black,
// the palette's last colour.
func modelColor(model string) color.RGBA {
	if m, ok := registry.Lookup(model); ok && m.Color >= 0 {
		return slotColor(m.Color)
	}
	return palette[len(palette)-1]
}

// slotColor is the colour of palette slot i: the palette's own colours
// but black, then, for a table that has outgrown them, colours generated
// around the hue circle at the golden angle in three values (gonum's palette.HSVA), so that
// a new model's slot is never black and never a colour another slot has
// (TestSlotColorsDistinct).
func slotColor(i int) color.RGBA {
	fixed := len(palette) - 1
	if i < fixed {
		return palette[i]
	}
	j := i - fixed
	h := math.Mod(float64(j)*0.618033988749895+0.1, 1)
	v := [...]float64{0.7, 0.5, 0.9}[j%3]
	return color.RGBAModel.Convert(plotpalette.HSVA{H: h, S: 0.7, V: v, A: 1}).(color.RGBA)
}

// glyphs are the markers of a model's first, second, … variant (promotion
// order, pooled, workload), in step with dashes.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// dashes are the line patterns of a model's first, second, … variant.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(4), vg.Points(2)},
	{vg.Points(1), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)},
	{vg.Points(2), vg.Points(1)},
}

// theoryDash is the dash pattern of the M/M/c ideal's lines.
var theoryDash = []vg.Length{vg.Points(5), vg.Points(3)}

// seriesStyle is how one configuration looks in every figure.
type seriesStyle struct {
	Color color.RGBA
	Glyph draw.GlyphDrawer
	Dash  []vg.Length
	// Variant is the configuration's rank among its model's (0 first):
	// bars, which have no marker, show it by a lighter tint (barFill).
	Variant int
}

// line returns the configuration's line style.
func (s seriesStyle) line() draw.LineStyle {
	return draw.LineStyle{Color: s.Color, Width: vg.Points(1.2), Dashes: s.Dash}
}

// glyph returns the configuration's marker style.
func (s seriesStyle) glyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.Color, Radius: vg.Points(2.5), Shape: s.Glyph}
}

// variantTints are how far a model's first, second, … variant's bars are
// lightened toward white.
var variantTints = []float64{0, 0.45, 0.7, 0.25, 0.85}

// barFill returns the colour of the configuration's bars: its model's
// colour, lightened by its variant, opaque.
func (s seriesStyle) barFill() color.Color {
	t := variantTints[s.Variant%len(variantTints)]
	mix := func(c uint8) uint8 { return uint8(float64(c) + t*(255-float64(c)) + 0.5) }
	return color.RGBA{R: mix(s.Color.R), G: mix(s.Color.G), B: mix(s.Color.B), A: 0xFF}
}

// barLine returns the outline of the configuration's bars: its model's
// colour in its variant's dash.
func (s seriesStyle) barLine() draw.LineStyle {
	return draw.LineStyle{Color: s.Color, Width: vg.Points(0.8), Dashes: s.Dash}
}

// styleOf returns the style of the i-th series of a figure whose series
// are not configurations (the chain figure, generic line figures).
func styleOf(i int) seriesStyle {
	n := len(palette)
	return seriesStyle{Color: palette[i%n], Glyph: glyphs[i%n], Dash: dashes[(i/n)%len(dashes)]}
}

// variantStyle returns the style of a model's variant-th configuration
// (0-based, in the run's order): the model's colour, and the variant's
// marker and dash.
func variantStyle(model string, variant int) seriesStyle {
	return seriesStyle{Color: modelColor(model), Glyph: glyphs[variant%len(glyphs)], Dash: dashes[variant%len(dashes)], Variant: variant}
}

// styler hands out configuration styles: the colour by model, the marker
// and dash by the configuration's rank among its model's configurations.
type styler struct {
	m        map[string]seriesStyle
	bases    map[string]seriesStyle // by configuration name within its workload
	variants map[string]int         // per model, the configurations seen so far
	base     func(string) string
}

func newStyler(base func(string) string) *styler {
	return &styler{m: map[string]seriesStyle{}, bases: map[string]seriesStyle{}, variants: map[string]int{}, base: base}
}

// add gives the configuration name of model a style, if it has none yet:
// the style of its name within its workload, so that one configuration
// looks the same under every workload of a suite run (the workload is
// told by the panel, not by a dash).
func (s *styler) add(name, model string) {
	if _, ok := s.m[name]; ok {
		return
	}
	b := s.base(name)
	st, ok := s.bases[b]
	if !ok {
		st = variantStyle(model, s.variants[model])
		s.variants[model]++
		s.bases[b] = st
	}
	s.m[name] = st
}

// styles assigns every configuration of the run a style: its model's
// colour (modelColor), and a marker and dash by its rank among its
// model's configurations in report order (the run's configurations, then
// the unavailable ones, then any other configuration found in the
// points), counted by their names within their workload (base: a suite
// run's "leaderfollowers/lifo/cpu" and "…/tiny" are one configuration,
// "leaderfollowers/lifo", under two workloads). So a model has the same
// colour in every run and every figure, and a configuration looks the
// same in every figure of the run and under every workload.
func styles(r *results.Run, groups []*results.Group, base func(string) string) map[string]seriesStyle {
	s := newStyler(base)
	for _, c := range r.Configs {
		s.add(c.Name, c.Model)
	}
	for _, u := range r.Unavailable {
		s.add(u.Config.Name, u.Config.Model)
	}
	for _, g := range groups {
		s.add(g.Config.Name, g.Config.Model)
	}
	return s.m
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
	`×`, `$\times$`, `–`, `--`, `·`, `$\cdot$`,
)

// identity leaves text as it is (every format but tex).
func identity(s string) string { return s }
