package plots

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
	"gonum.org/v1/plot/vg/vgtex"
)

// Formats are the output formats Figure.Render supports, in the order
// RenderRun writes them.
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

// draw lays the figure out on dc: the title on top, the panels aligned in
// a grid, the legend in a column of its own on the right, outside every
// data area.
func (f *Figure) draw(dc draw.Canvas, tx func(string) string) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(6)
	area := draw.Crop(dc, pad, -pad, pad, -pad)

	if f.Title != "" {
		sty := textStyle(fontTitle)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		area.FillText(sty, vg.Point{X: area.Center().X, Y: area.Max.Y}, tx(f.Title))
		area = draw.Crop(area, 0, 0, 0, -(sty.Height(tx(f.Title)) + pad))
	}

	panels, legend := f.build(tx)
	if legend != nil && legend.Rectangle(area).Size().X > 0 {
		size := legend.Rectangle(area).Size()
		w := size.X + 2*pad
		cols := 1
		if len(panels) > 0 {
			cols = max(len(panels[0]), 1)
		}
		if (area.Size().X-w)/vg.Length(cols) >= minPanelWidth {
			// A column of its own on the right.
			legendArea := draw.Crop(area, area.Size().X-w+pad, 0, 0, -pad)
			area = draw.Crop(area, 0, -w, 0, 0)
			legend.Draw(legendArea)
		} else {
			// Too narrow for a column (a TeX figure at a page's text
			// width): a band of its own under the panels.
			h := size.Y + 2*pad
			legendArea := draw.Crop(area, pad, 0, 0, -(area.Size().Y - h))
			area = draw.Crop(area, 0, 0, h, 0)
			legend.Left, legend.Top = true, true
			legend.Draw(legendArea)
		}
	}
	if len(panels) == 0 {
		return
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadX: vg.Points(14), PadY: vg.Points(10)}
	canvases := plot.Align(panels, tiles, area)
	for j, row := range panels {
		for i, p := range row {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
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
