package report

import (
	"concbench/plots"
	"concbench/results"
)

// analysis is the analysed run the report's sections are computed from:
// the figures' analysis (plots.Analysis), to which the sections add
// their words and tables as methods.
type analysis struct{ *plots.Analysis }

// analyze analyses the run as the figures see it, at opts.Load with
// opts.Floor.
func analyze(r *results.Run, pts []results.Point, opts Options) *analysis {
	return &analysis{plots.Analyze(r, pts, plots.Options{Load: opts.Load, Floor: opts.Floor})}
}
