package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// logTicks is a Ticker for log axes that always labels at least two
// ticks: powers of ten when the range spans several decades, 1-2-5 steps
// when it is narrower, every integer multiple when narrower still, and
// the range's ends as a last resort. (gonum's LogTicks labels only powers
// of ten, so a range inside one decade gets one label or none.) Format
// turns a value into its label.
type logTicks struct {
	Format func(float64) string
}

var _ plot.Ticker = logTicks{}

// Ticks returns the ticks in [min, max], which must be positive (the
// figures clamp their ranges; a non-positive range gives no ticks rather
// than a panic).
func (t logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > 0) || math.IsInf(max, 0) || min > max {
		return nil
	}
	format := t.Format
	if format == nil {
		format = formatNumber
	}
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	inRange := func(v float64) bool { return v >= min*(1-1e-9) && v <= max*(1+1e-9) }
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var ticks []plot.Tick
		labels := 0
		for e := lo; e <= hi; e++ {
			for m := 1; m <= 9; m++ {
				v := float64(m) * math.Pow(10, float64(e))
				if !inRange(v) {
					continue
				}
				tk := plot.Tick{Value: v}
				for _, l := range labelled {
					if m == l {
						tk.Label = format(v)
						labels++
					}
				}
				ticks = append(ticks, tk)
			}
		}
		if labels >= 2 {
			return ticks
		}
	}
	// The range lies between two neighbouring integer multiples: label
	// its ends.
	return []plot.Tick{{Value: min, Label: format(min)}, {Value: max, Label: format(max)}}
}

// linearTicks is gonum's default ticker with labels formatted by Format.
type linearTicks struct {
	Format func(float64) string
}

var _ plot.Ticker = linearTicks{}

// Ticks returns gonum's default ticks relabelled.
func (t linearTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.Format(ticks[i].Value)
		}
	}
	return ticks
}

// logRange returns a log axis range covering the positive finite values
// of vs with a margin, and the number of values left out because they are
// not positive (a log axis cannot show them; the figures say so). With no
// positive value it returns 1..10.
func logRange(vs []float64) (min, max float64, dropped int) {
	min, max = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if v <= 0 {
			dropped++
			continue
		}
		min, max = math.Min(min, v), math.Max(max, v)
	}
	if math.IsInf(min, 1) {
		return 1, 10, dropped
	}
	return min / 1.3, max * 1.3, dropped
}

// setLogY makes p's y axis logarithmic over [min, max] with logTicks.
func setLogY(p *plot.Plot, min, max float64, format func(float64) string) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{Format: format}
	p.Y.Min, p.Y.Max = min, max
}

// formatNumber formats a tick value compactly: 0.5, 20, 1500, 2.5k, 3M.
func formatNumber(v float64) string { return formatScaled(v, numberUnits) }

// tickUnit is a unit a value is written in from a magnitude on: from min,
// divided by div, with its suffix.
type tickUnit struct {
	min, div float64
	suffix   string
}

// numberUnits and nsUnits are formatNumber's and FormatNs's units,
// largest first; the last's minimum, 0, takes every other number.
var (
	numberUnits = []tickUnit{{1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}, {0, 1, ""}}
	nsUnits     = []tickUnit{{1e9, 1e9, "s"}, {1e6, 1e6, "ms"}, {1e3, 1e3, "µs"}, {0, 1, "ns"}}
)

// formatScaled writes v (TrimFloat) in the first of units whose minimum
// its magnitude reaches; NaN, which reaches none, in the last.
func formatScaled(v float64, units []tickUnit) string {
	u := units[len(units)-1]
	if i := slices.IndexFunc(units, func(u tickUnit) bool { return math.Abs(v) >= u.min }); i >= 0 {
		u = units[i]
	}
	return TrimFloat(v/u.div) + u.suffix
}

// TrimFloat formats v with at most 3 significant digits, no exponent, no
// trailing zeros.
func TrimFloat(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

// FormatNs formats a nanosecond value as a duration label: "800ns",
// "20µs", "1.5ms", "2s".
func FormatNs(ns float64) string { return formatScaled(ns, nsUnits) }

// spectrumTicks labels a 1/(1-p) axis with the percentiles, without
// their "%" (the axis's label carries it, so that 99.9 and 99.99 fit
// a decade apart in a narrow panel): 2 is 50, 10 is 90, 100 is 99, …
type spectrumTicks struct{}

var _ plot.Ticker = spectrumTicks{}

// Ticks returns a labelled tick at each power of ten (and at 2, the
// median) in [min, max], with unlabelled ticks between.
func (spectrumTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > 0) || min > max {
		return nil
	}
	var ticks []plot.Tick
	for e := 0; e <= 9; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(e))
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 && e > 0 || m == 2 && e == 0 {
				tk.Label = strings.TrimSuffix(percentileLabel(1-1/v), "%")
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// percentileLabel formats a quantile as a percentile: 0.999 → "99.9%".
func percentileLabel(q float64) string {
	return fmt.Sprintf("%s%%", strconv.FormatFloat(math.Round(q*1e6)/1e4, 'f', -1, 64))
}
