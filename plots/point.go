package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"concbench/results"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bandPoint is the per-point block that every figure of medians and
// bands shares (latency, the bar figures, connections, the sweeps): one
// group's metric aggregated over its valid repetitions, the band around
// the median, the invalid repetitions' own values, and what its CSV row
// says. A figure adds its own reasons not to draw the point (plotted,
// note) and writes the row with Figure.addPointRow.
type bandPoint struct {
	agg    results.Aggregate
	lo, hi float64
	band   string // results.BandCI, BandRange or BandNone
	// invalid are the group's invalid repetitions' own finite values, in
	// the group's order: drawn as crosses, in no median, band or test.
	invalid []repValue
	// plotted says whether the figure draws the median: set when the
	// point has a valid value, cleared by a figure for reasons of its
	// own (a log axis, too few responses).
	plotted bool
	// note says why the point is not drawn, or what else to know about
	// it; the row adds the excluded repetitions to it (rowNote).
	note string
}

// repValue is one invalid repetition's own value of a metric, and the
// offered rate it was measured at (0 when none was recorded).
type repValue struct {
	rep     int
	rate, v float64
}

// aggregatePoint returns the point of metric m over g's valid
// repetitions; a nil g is a point without a value.
func aggregatePoint(g *results.Group, m results.Metric) bandPoint {
	var p bandPoint
	if g != nil {
		p.agg = g.Aggregate(m)
		for _, q := range g.Invalid() {
			if v, ok := m.Value(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				p.invalid = append(p.invalid, repValue{rep: q.Repetition, rate: q.OfferedRatePerS, v: v})
			}
		}
	}
	p.lo, p.hi, p.band = p.agg.Stats.Band()
	p.plotted = p.agg.Stats.N > 0
	return p
}

// median returns the point's median over its valid repetitions.
func (p *bandPoint) median() float64 { return p.agg.Stats.Median }

// valid reports whether the point has a value from a valid repetition.
func (p *bandPoint) valid() bool { return p.agg.Stats.N > 0 }

// missingNote says why a point without a valid value has none: every
// repetition that carried it was invalid, or none carried it.
func (p *bandPoint) missingNote() string {
	if p.agg.Excluded > 0 {
		return "no valid repetition"
	}
	return "no measured value"
}

// drawnRange reports whether the point is drawn with a min–max range
// rather than a confidence interval (the figure then says so in a note).
func (p *bandPoint) drawnRange() bool {
	return p.plotted && p.band == results.BandRange
}

// invalidByRep returns the invalid repetitions' values by repetition.
func (p *bandPoint) invalidByRep() map[int]float64 {
	vals := make(map[int]float64, len(p.invalid))
	for _, iv := range p.invalid {
		vals[iv.rep] = iv.v
	}
	return vals
}

// rowNote is the note of the point's CSV row: its own note, then the
// invalid repetitions it excluded and why.
func (p *bandPoint) rowNote() string {
	if p.agg.Excluded == 0 {
		return p.note
	}
	return joinNote(p.note, fmt.Sprintf("%d invalid repetition(s) excluded (%s)", p.agg.Excluded, strings.Join(p.agg.ExcludedReasons, ", ")))
}

// cell returns the point's cell of the CSV column col, and whether col is
// one the point fills; a column name may end in its unit ("median_ns").
func (p *bandPoint) cell(col string) (string, bool) {
	switch col {
	case "n":
		return strconv.Itoa(p.agg.Stats.N), true
	case "median", "median_ns":
		return results.FormatFloat(p.median()), true
	case "band_lo", "band_lo_ns":
		return results.FormatFloat(p.lo), true
	case "band_hi", "band_hi_ns":
		return results.FormatFloat(p.hi), true
	case "band":
		return p.band, true
	case "invalid_reps":
		return strconv.Itoa(p.agg.Excluded), true
	case "invalid_values", "invalid_values_ns":
		return excludedValues(p.invalidByRep()), true
	case "skipped_reps":
		return strconv.Itoa(p.agg.Skipped), true
	case "plotted":
		return strconv.FormatBool(p.plotted), true
	case "note":
		return p.rowNote(), true
	}
	return "", false
}

// addPointRow appends p's CSV row to f: the columns of f's header that
// the point fills (bandPoint.cell) from p, the others from own, in order.
// own must hold exactly the other columns.
func (f *Figure) addPointRow(p *bandPoint, own ...string) {
	row := make([]string, 0, len(f.Header))
	for _, col := range f.Header {
		if c, ok := p.cell(col); ok {
			row = append(row, c)
			continue
		}
		if len(own) == 0 {
			panic(fmt.Sprintf("plots: %s: no cell for column %q", f.Name, col))
		}
		row, own = append(row, own[0]), own[1:]
	}
	if len(own) > 0 {
		panic(fmt.Sprintf("plots: %s: %d cells left over for %d columns", f.Name, len(own), len(f.Header)))
	}
	f.addRow(row...)
}

// noteRanges adds the note that some of the figure's error bars are
// min–max ranges, when any is (bandPoint.drawnRange).
func (f *Figure) noteRanges(anyRange bool) {
	if anyRange {
		f.note("Some error bars are min–max ranges, not confidence intervals (see the CSV's band column).")
	}
}

// joinNote joins two notes of a CSV row with "; ", or returns b when a
// is empty.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// excludedGlyph marks an invalid repetition at its own value: it is drawn
// so that it stays visible, but it is in no line, band, bar or median.
func excludedGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: color.Gray{Y: 0x40}, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
}

// excludedLegend is the legend entry of excludedGlyph.
const excludedLegend = "invalid rep (excluded)"

// excludedCaption is the sentence a figure's caption ends with when it
// excluded n invalid repetitions; "" when n is 0.
func excludedCaption(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %s excluded (grey ×, each at its own value, in no median, band or test).",
		Plural(n, "invalid repetition", "invalid repetitions"))
}

// excludedValues formats the values of a row's invalid repetitions for a
// figure's CSV: "2:1311231 4:1400000" (repetition:value).
func excludedValues(vals map[int]float64) string {
	var parts []string
	for _, rep := range slices.Sorted(maps.Keys(vals)) {
		parts = append(parts, fmt.Sprintf("%d:%s", rep, results.FormatFloat(vals[rep])))
	}
	return strings.Join(parts, " ")
}
