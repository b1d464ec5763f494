package plots

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
	"gonum.org/v1/plot/vg/vgtex"
)

// Formats are the output formats Figure.Render supports, in the order
// report.RenderRun writes them.
var Formats = []string{"svg", "pdf", "png", "tex"}

// Figure is one figure: its panels and legend, built from stored results
// only, and the exact data it plots as a table (written as a CSV beside
// the figure).
type Figure struct {
	// Name is the figure's file name without extension, e.g. "latency".
	Name string
	// Title is drawn above the panels.
	Title string
	// Caption is one line saying what the figure shows, computed from the
	// numbers (the report prints it under the figure).
	Caption string
	// Notes are caveats about the plotted data: values a log axis cannot
	// show, intervals that are ranges rather than confidence intervals,
	// configurations without data. The report lists them with the figure.
	Notes []string
	// Header and Rows are the plotted data.
	Header []string
	Rows   [][]string
	// Width and Height are the figure's size.
	Width, Height vg.Length

	// build returns the panels (rows of plots) and the legend, with every
	// string passed through tx (LaTeX escaping for tex output).
	build func(tx func(string) string) (panels [][]*plot.Plot, legend *plot.Legend)
	// lay, if set, is used instead of build: panels with legends of their
	// own (layout).
	lay func(tx func(string) string) layout
}

// canvas returns an empty canvas of the figure's size in format.
func (f *Figure) canvas(format string) (vg.CanvasWriterTo, error) {
	switch format {
	case "svg":
		// Note: fonts are not embedded in SVG (it would add ~500 KB per
		// figure); viewers substitute a sans-serif font. The PDF embeds
		// them, and the TeX output takes the document's fonts.
		return vgsvg.New(f.Width, f.Height), nil
	case "pdf":
		return vgpdf.New(f.Width, f.Height), nil // fonts embedded (the default)
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(150))}, nil
	case "tex":
		// A pgfpicture to \input into a LaTeX document that loads pgf: its
		// text is typeset in the document's fonts, at the sizes the figure
		// asks for. It is laid out at most TexMaxWidth wide, so that it fits
		// a thesis's text width at its natural size: scaling a wider
		// picture down (\resizebox) would shrink its labels to 4–5 pt.
		if f.Width <= TexMaxWidth {
			return vgtex.New(f.Width, f.Height), nil
		}
		// Narrower than designed: the legend moves under the panels
		// (draw), so the picture gets taller by about a legend's height.
		return vgtex.New(TexMaxWidth, f.Height*texTaller), nil
	}
	return nil, fmt.Errorf("plots: unknown format %q (want one of %v)", format, Formats)
}

// minPanelWidth is the narrowest a panel may become for the legend to
// take a column beside the panels; otherwise the legend goes under them.
// Below it a panel's axis labels leave its data area too small to read
// (at 455 pt, three latency panels beside the legend had none at all).
const minPanelWidth = vg.Length(150)

// texTaller is how much taller a TeX figure narrowed to TexMaxWidth is
// laid out, for the legend under its panels.
const texTaller = 1.4

// TexMaxWidth is the widest a TeX figure is laid out: within the text
// width of a thesis or article page (420–470 pt), so that it is included
// at its natural size and its labels keep theirs.
const TexMaxWidth = 455 * vg.Length(1)

// Render draws the figure in format (svg, pdf, png or tex) to w.
func (f *Figure) Render(w io.Writer, format string) (err error) {
	c, err := f.canvas(format)
	if err != nil {
		return err
	}
	tx := identity
	if format == "tex" {
		tx = texEscaper.Replace
	}
	// Note: gonum/plot panics on data it cannot draw (a non-positive value
	// on a log axis, NaN). The figures never hand it such values; this
	// turns a panic that slipped through into an error for this figure
	// instead of killing the end of a long run.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plots: drawing %s.%s: %v", f.Name, format, r)
		}
	}()
	f.draw(draw.New(c), tx)
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing %s.%s: %w", f.Name, format, err)
	}
	return nil
}

// layout is what a figure draws: its panels, and the legends that say
// what they show.
type layout struct {
	// panels are the rows of panels, every row as long as the first; a
	// nil panel is an empty cell.
	panels [][]*plot.Plot
	// legend is the figure's legend: in the last empty cell of the
	// bottom row if there is one, else in a column of its own on the
	// right, or a band under the panels when the figure is too narrow
	// for that. nil: none.
	legend *plot.Legend
	// columns, if set, are a legend per column of panels (the
	// configurations that column draws), each under its column: a
	// reader finds a curve's name under the panel that draws it, not in
	// one long list beside the figure. A nil entry is a column without.
	columns []*plot.Legend
}

// layout returns what the figure draws (Figure.lay, else build's panels
// and legend).
func (f *Figure) layout(tx func(string) string) layout {
	if f.lay != nil {
		return f.lay(tx)
	}
	panels, legend := f.build(tx)
	return layout{panels: panels, legend: legend}
}

// draw lays the figure out on dc: the title on top (wrapped to the
// figure's width), the panels aligned in a grid, each panel's title
// centred over its data area, the legends outside every data area.
func (f *Figure) draw(dc draw.Canvas, tx func(string) string) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(6)
	area := draw.Crop(dc, pad, -pad, pad, -pad)

	if f.Title != "" {
		sty := textStyle(fontTitle)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		title := wrapText(sty, tx(f.Title), area.Size().X)
		area.FillText(sty, vg.Point{X: area.Center().X, Y: area.Max.Y}, title)
		area = draw.Crop(area, 0, 0, 0, -(sty.Height(title) + pad))
	}

	lay := f.layout(tx)
	panels := lay.panels
	cols := 1
	if len(panels) > 0 {
		cols = max(len(panels[0]), 1)
	}
	// The figure's legend in an empty cell if the bottom row has one
	// (drawn after the panels are aligned), else beside or under them.
	spare := -1
	if n := len(panels); n > 0 && lay.legend != nil {
		for i := len(panels[n-1]) - 1; i >= 0 && spare < 0; i-- {
			if panels[n-1][i] == nil {
				spare = i
			}
		}
	}
	if lay.legend != nil && spare < 0 {
		area = placeLegend(area, lay.legend, cols)
	}
	if len(panels) == 0 {
		return
	}
	// The columns' legends: a band under the panels, as tall as the
	// tallest.
	var band vg.Length
	for _, l := range lay.columns {
		if l != nil {
			band = max(band, l.Rectangle(area).Size().Y+pad)
		}
	}
	legendBand := draw.Crop(area, 0, 0, 0, -(area.Size().Y - band))
	area = draw.Crop(area, 0, 0, band, 0)

	tiles := draw.Tiles{Rows: len(panels), Cols: cols, PadX: vg.Points(14), PadY: vg.Points(10)}
	canvases := plot.Align(panels, tiles, area)
	for j, row := range panels {
		for i, p := range row {
			if p != nil {
				drawPanel(p, canvases[j][i])
			}
		}
	}
	if spare >= 0 {
		c := canvases[len(panels)-1][spare]
		lay.legend.Left, lay.legend.Top = true, true
		lay.legend.Draw(draw.Crop(c, pad, 0, 0, -pad))
	}
	for i, l := range lay.columns {
		if l == nil || i >= cols {
			continue
		}
		// Under the column, from the left edge of its panels' canvas
		// (axis labels included: a legend is wider than a data area).
		x := canvases[len(panels)-1][i].Min.X
		l.Left, l.Top = true, true
		l.Draw(draw.Canvas{Canvas: legendBand.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: legendBand.Min.Y}, Max: vg.Point{X: legendBand.Max.X, Y: legendBand.Max.Y - pad/2}}})
	}
}

// placeLegend draws legend in a column of its own on the right of area
// if the cols columns of panels keep minPanelWidth beside it, else in a
// band of its own under them (a TeX figure at a page's text width), and
// returns the area left to the panels.
func placeLegend(area draw.Canvas, legend *plot.Legend, cols int) draw.Canvas {
	size := legend.Rectangle(area).Size()
	if size.X <= 0 {
		return area
	}
	pad := vg.Points(6)
	if w := size.X + 2*pad; (area.Size().X-w)/vg.Length(cols) >= minPanelWidth {
		legend.Draw(draw.Crop(area, area.Size().X-w+pad, 0, 0, -pad))
		return draw.Crop(area, 0, -w, 0, 0)
	}
	h := size.Y + 2*pad
	legend.Left, legend.Top = true, true
	legend.Draw(draw.Crop(area, pad, 0, 0, -(area.Size().Y - h)))
	return draw.Crop(area, 0, 0, h, 0)
}

// drawPanel draws p on c with its title centred over its data area, not
// over the whole panel as gonum centres it: a panel with tick labels
// and an axis label on its left would otherwise carry its title off
// the centre of what it titles, unlike its neighbours. The title keeps
// the room gonum gives it, so that plot.Align's spacing holds.
func drawPanel(p *plot.Plot, c draw.Canvas) {
	title := p.Title.Text
	if title == "" {
		p.Draw(c)
		return
	}
	sty := p.Title.TextStyle
	inner := draw.Crop(c, 0, 0, 0, -(sty.Rectangle(title).Size().Y + p.Title.Padding))
	p.Title.Text = ""
	p.Draw(inner)
	data := p.DataCanvas(inner)
	p.Title.Text = title
	// Centred over the data area, moved only as far as needed to stay
	// within the panel, and set on the data area's top: plot.Align can
	// leave one panel's canvas taller than its neighbours', and a title
	// on the canvas's top would then stand above theirs.
	w := sty.Width(title)
	x := max(data.Center().X, c.Min.X+w/2)
	x = min(x, c.Max.X-w/2)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	c.FillText(sty, vg.Point{X: x, Y: data.Max.Y + p.Title.Padding}, title)
}

// wrapText breaks s into lines at spaces so that each line is at most
// width wide in sty, where a word allows: a figure's title fits its
// figure rather than running off both edges.
func wrapText(sty text.Style, s string, width vg.Length) string {
	words := strings.Fields(s)
	if len(words) == 0 || sty.Width(s) <= width {
		return s
	}
	var lines []string
	line := words[0]
	for _, w := range words[1:] {
		if sty.Width(line+" "+w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		line += " " + w
	}
	return strings.Join(append(lines, line), "\n")
}

// WriteCSV writes the plotted data: the header, then one row per plotted
// element.
func (f *Figure) WriteCSV(w io.Writer) error {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(f.Header); err != nil {
		return err
	}
	if err := cw.WriteAll(f.Rows); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// addRow appends a CSV row to f; it must match the header.
func (f *Figure) addRow(cells ...string) {
	if len(cells) != len(f.Header) {
		panic(fmt.Sprintf("plots: %s: row of %d cells for %d columns", f.Name, len(cells), len(f.Header)))
	}
	f.Rows = append(f.Rows, cells)
}

// note adds a caveat once.
func (f *Figure) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(f.Notes, s) {
		f.Notes = append(f.Notes, s)
	}
}
