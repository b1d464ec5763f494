// Package plots draws the figures and writes the report of a run, from
// its stored results only (results.ReadRun): nothing is measured here.
//
// RenderRun writes, into a run folder:
//
//	figures/<name>.{svg,pdf,png,tex}  each figure (Options.Formats)
//	figures/<name>.csv                exactly the data the figure plots
//	points.csv                        every point, one row each (results.WriteCSV)
//	bench.txt                         Go benchmark format for benchstat (results.WriteBench)
//	report.md, report.html            the report; the HTML embeds its figures
//
// The figures, in report order:
//
//  1. latency: corrected p50, p99 and p99.9 latency against offered load,
//     per configuration, log y, the median across repetitions with a
//     shaded band, and the M/M/c ideal (Point.Theory) dashed beside it;
//  2. spectrum: the percentile spectrum (x = 1/(1-p), labelled 50%, 90%,
//     99%, …) at the chosen load, from histograms merged across
//     repetitions (percentiles are never averaged);
//  3. capacity: closed-loop saturation rate per configuration;
//  4. ctxsw, 5. cpu, 6. allocs: per-request server costs at the chosen
//     load. Their captions test the seed's claims — Leader/Followers needs
//     no hand-off, allocation or context switch per request, while
//     Half-Sync/Half-Reactive pays each — with benchstat's Mann–Whitney U
//     test on every pair of an LF and an HS/HR configuration, and say
//     "shown", "refuted", "not shown" or "cannot be tested", from the
//     numbers;
//  7. threads: each Leader/Followers thread's share of the handle-set
//     events, busiest first, per promotion order.
//
// The chosen load (Options.Load) is the run's measured open-loop fraction
// closest to DefaultLoad (0.5) unless set.
//
// Honesty rules the figures follow:
//   - Intervals are the 95% confidence interval of the median (x/perf
//     benchmath). With fewer than 6 repetitions no such interval exists;
//     the figures then draw the min–max range and say so (the CSV's band
//     column is "ci" or "range"), never passing one off as the other.
//   - Log axes never panic: values ≤ 0 are left out (a band's lower edge
//     is clamped to the axis) and every such case is a note in the report
//     and a cell in the figure's CSV.
//   - Failed and unavailable points are in no statistic and are listed in
//     the report; points with an invalid verdict are kept, marked with a
//     red ring in the figures and * in the summary table, and listed with
//     their reasons.
//   - Every configuration has the same colour and marker in every figure
//     (the run's configuration order decides); the legend sits outside
//     the data area, in a column of its own.
//
// Output is deterministic for a given run: no timestamps in SVG, fixed
// fonts (Liberation Sans, compiled in), stable orders. The PDF embeds its
// fonts (≈200 KB per figure); the SVG does not, so viewers substitute a
// sans-serif font. The TeX output is a pgfpicture (gonum's vgtex) to
// \input into a document that loads pgf; its strings are LaTeX-escaped.
package plots
