package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bars is a bar plotter whose positions and widths are in data units, so
// that grouped bars fit their category whatever the canvas size (gonum's
// BarChart takes its width and offset in points).
type bars struct {
	// Cats are the bars' category positions; Values their lengths from
	// Bases (nil: from 0), so that bars on the ends of others stack.
	Cats, Values, Bases []float64
	// Width is each bar's width and Offset its shift from its category,
	// in category units.
	Width, Offset float64
	// Horizontal draws bars along the x axis, categories on y.
	Horizontal bool
	Color      color.Color
	Line       draw.LineStyle
}

var (
	_ plot.Plotter     = (*bars)(nil)
	_ plot.DataRanger  = (*bars)(nil)
	_ plot.Thumbnailer = (*bars)(nil)
)

// Plot draws the bars.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.Values {
		if v == 0 && b.Bases != nil {
			continue // an empty segment of a stack: no outline either
		}
		lo, hi := b.Cats[i]+b.Offset-b.Width/2, b.Cats[i]+b.Offset+b.Width/2
		v0 := b.base(i)
		v += v0
		var pts []vg.Point
		if b.Horizontal {
			pts = []vg.Point{{X: trX(v0), Y: trY(lo)}, {X: trX(v), Y: trY(lo)}, {X: trX(v), Y: trY(hi)}, {X: trX(v0), Y: trY(hi)}}
		} else {
			pts = []vg.Point{{X: trX(lo), Y: trY(v0)}, {X: trX(lo), Y: trY(v)}, {X: trX(hi), Y: trY(v)}, {X: trX(hi), Y: trY(v0)}}
		}
		c.FillPolygon(b.Color, c.ClipPolygonXY(pts))
		outline := append(pts, pts[0])
		c.StrokeLines(b.Line, c.ClipLinesXY(outline)...)
	}
}

// base returns where bar i starts.
func (b *bars) base(i int) float64 {
	if b.Bases == nil {
		return 0
	}
	return b.Bases[i]
}

// DataRange returns the bars' extent, including 0.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	cmin, cmax, vmin, vmax := 0.0, 0.0, 0.0, 0.0
	for i, v := range b.Values {
		v += b.base(i)
		lo, hi := b.Cats[i]+b.Offset-b.Width/2, b.Cats[i]+b.Offset+b.Width/2
		if i == 0 || lo < cmin {
			cmin = lo
		}
		if i == 0 || hi > cmax {
			cmax = hi
		}
		vmin, vmax = min(vmin, v), max(vmax, v)
	}
	if b.Horizontal {
		return vmin, vmax, cmin, cmax
	}
	return cmin, cmax, vmin, vmax
}

// Thumbnail draws a filled square for the legend.
func (b *bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y},
	}
	c.FillPolygon(b.Color, c.ClipPolygonY(pts))
	c.StrokeLines(b.Line, c.ClipLinesY(append(pts, pts[0]))...)
}
