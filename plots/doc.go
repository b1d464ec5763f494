// Package plots draws a run's figures from its stored results only
// (results.ReadRun): nothing is measured here, and no report is written
// (package report writes report.md and report.html and places the
// figures in them). Analyze groups a run's points and chooses the load
// the figures are drawn at; Figures draws every figure the run has data
// for and says why each other one is not drawn. A Figure renders itself
// in each of Formats (svg, pdf, png, tex) and writes exactly the data it
// plots as CSV (Figure.WriteCSV). ValidationFigure draws a validation of
// the measurement chain; LineFigure a figure of plain series.
//
// The text helpers the captions use (FormatStat, FormatNs, TrimFloat,
// JoinAnd, Plural, Capitalize) are exported for the report, so that a
// caption and the report's tables write a value the same way.
//
// The figures, in report order:
//
//  1. latency: corrected p50 (top row) and p99 (bottom row) latency
//     against offered load, log y shared along a row, one column of
//     panels per model family (families: Leader/Followers; the hand-off
//     models HS/HR, Active Object and the front end; the rest), at most
//     5 configurations per panel (a larger family is split), the median
//     across the valid repetitions with its interval as an error bar.
//     Rows by percentile rather than a figure per percentile: the reader
//     compares p50 with p99 of the same family down a column and
//     families along a row, on one page. Within a panel the error bars
//     are offset sideways (dodgeSpan of the largest rate, the CSV keeps
//     the true rates) so that they do not cover each other; shaded bands
//     were dropped because ten of them covered each other. p99.9 is not
//     drawn here: at low load a window's p99.9 rests on a few responses;
//     the spectrum draws it from the merged histograms. Dashed beside
//     each configuration, its M/M/c ideal from measured inputs: c the
//     server count the harness recorded (Point.Theory.C: the server's
//     CPUs, at most its threads), the service time c ÷ the
//     configuration's measured capacity (median of its valid capacity
//     repetitions) — the saturated server's cost per request, everything
//     it spends included — plus the measured loopback floor (mean of the
//     run's validation.json ChainFloor; Options.Floor). Not the CPU per
//     request at the lowest load: at 10% load a request costs several
//     times its cost at capacity (wake-ups and context switches of an idle
//     server; compare a configuration's cpu_ns_per_request at its 0.10
//     point with its capacity point in points.csv), which would charge
//     idleness to the service and hide it from the gap. So the gap between a measured percentile and
//     its ideal is queueing and dispatch the model adds beyond a server
//     of the same throughput. The nominal CPU work (Point.Theory, the
//     harness's ideal) is not drawn. Workloads with blocking work get no
//     ideal (M/M/c does not apply) and the caption says so. The caption
//     states the configuration with the lowest p99 at each load (and
//     where it is within the runner-up's interval), the ideal's inputs
//     with their values, and the range of p99 ÷ ideal at the chosen load;
//  2. spectrum: the percentile spectrum (x = 1/(1-p), labelled 50%, 90%,
//     99%, …) at the chosen load, from histograms merged across the valid
//     repetitions (percentiles are never averaged), a panel per model
//     family as in the latency figure, each curve drawn only up to the
//     percentile with MinTailResponses responses above it. Its caption
//     names the lowest and highest configuration at the highest tail
//     percentile every curve supports (p99.9, else p99, else p90) and
//     whether the lowest is clear of the runner-up across repetitions —
//     per workload in a run of several, where the grid has a row per
//     workload, each panel titled with its workload and equal load. It is
//     drawn at TexMaxWidth in every format: the suite's 5 × 3 grid is
//     455 × 620 pt, a page. A legend under each column of panels names
//     the configurations that column draws (by their names within the
//     workload, at most maxPanelSeries and the invalid repetitions'
//     cross), never one legend of every configuration; the axes are shared,
//     so their values are written along the bottom row and the left
//     column only;
//  3. capacity: closed-loop saturation rate per configuration, the
//     caption naming the highest and lowest and whether the highest is
//     clear of the runner-up's interval (runnerUpText), per workload;
//  4. ctxsw, 5. cpu, 6. allocs: per-request server costs at the chosen
//     load. Their captions name the lowest configuration of each workload
//     and whether it is clear of the runner-up's interval, and point to
//     the report's Claims section, which tests the seed's claims
//     (results.Claims).
//     The bar figures (3–6, and the front end's) are small multiples in a
//     run of several workloads: a panel per workload holding that
//     workload's configurations only (barPlot.arrange), wrapped into rows of
//     barColumns, or a row per workload and a column per metric where a
//     figure has several metrics; each panel titled with its workload and
//     equal load. Panels of one metric share a value axis when the
//     workloads' largest values are within barSharedSpread (3×) of each
//     other, else each has its own, and the caption says which. They are
//     drawn at TexMaxWidth in every format, the names of the
//     configurations along the left column only when every panel draws
//     the same ones, the legend in the grid's empty cell if it has one;
//  7. mechanisms, only for a run with mechanisms points: system calls
//     per request by kind, a stacked horizontal bar per configuration, a
//     panel per workload on one scale, laid out as the bar figures are,
//     the kinds merged into at most six segments (mechKinds: accept,
//     rare in a window, with other); drawn when at least one point was
//     counted, its caption naming each workload's fewest and most;
//  8. threads: each Leader/Followers thread's share of the handle-set
//     events, busiest first, per promotion order, a panel per workload in
//     a run of several.
//  9. connections, only for a run with absolute-rate points
//     (results.KindRate, the connections profile): p50, p99 and p99.9
//     latency, CPU and context switches per request, RSS, OS threads and open
//     descriptors of the server against connections, log axes, one panel
//     per metric, one series per configuration across the workloads
//     "<config>/conns=<n>". Its caption states each configuration's
//     per-request CPU at the largest count ÷ at the smallest count ≥ 100
//     (stats.RatioCI), names a configuration that stops (its own cap:
//     unavailable points, with the reason), and sets each idle-connection
//     control (Workload.Idle, drawn as a large ring) against its model's
//     point with all connections active.
//  10. frontend, only for a run with a front-end configuration (the chain
//     profile): per configuration at the chosen load, the responses handed
//     to another thread and those read by their own thread, per request,
//     beside the front end's context switches and CPU per request.
//  11. threadsweep, only for a run with configurations named
//     "<model>/threads=<n>" (the threads profile): per workload, capacity
//     and p99 at the workload's equal absolute load against the thread
//     count (log x), one series per pool model, the configurations
//     without a count as dashed reference lines; its caption names each
//     model's best count and the largest count ÷ the smallest with a 95%
//     interval, and says whether more threads helped or cost. A run of
//     such configurations with no model at two or more counts lists it as
//     not drawn.
//
// The chosen load (Options.Load) is the run's measured open-loop fraction
// closest to DefaultLoad (0.5) unless set.
//
// Honesty rules the figures follow (and the report, package report):
//   - A percentile p of a window with n responses is drawn only if
//     n·(1−p) ≥ MinTailResponses (10) in every valid repetition; otherwise
//     it is left out, with a note, plotted=false and the reason in the
//     CSV, and the caption counts the points left out.
//   - Intervals are the 95% confidence interval of the median (x/perf
//     benchmath). With fewer than 6 repetitions no such interval exists;
//     the figures then draw the min–max range and say so (the CSV's band
//     column is "ci" or "range"), never passing one off as the other.
//   - Log axes never panic: values ≤ 0 are left out (a band's lower edge
//     is clamped to the axis) and every such case is a note in the figure
//     and a cell in its CSV.
//   - Invalid never feeds an aggregate. A repetition whose load-generator
//     verdict is invalid (results.Point.Invalid) is in no median, band,
//     bar, merged spectrum, claim test or summary cell (results.Aggregate
//     excludes it), nor in bench.txt; it stays visible: drawn as a grey ×
//     at its own value, counted in each figure's CSV (invalid_reps; the
//     crosses' values are in the CSV too), in the figure's caption ("N invalid repetitions
//     excluded", only when N > 0) and in the summary table ("(k invalid
//     excluded)"; "no valid repetition" where none is left), and listed
//     in points.csv. Failed and unavailable points are in no statistic
//     either.
//   - A model has one Okabe–Ito colour, the same in every run and every
//     figure (modelColor: the palette slot of its row in the model table,
//     registry.Model.Color); a model's
//     variants (promotion orders, pooled) differ by marker and dash, in
//     their order in the run, and one configuration looks the same under
//     every workload: a workload is told by its panel. A legend sits
//     outside the data areas: under each column of panels (the
//     spectrum), in the grid's empty cell, or in a column of its own
//     (under the panels when the figure is too narrow for one, as a TeX
//     figure is). A panel's title is centred over its data area, not over
//     its axis labels, so that the titles of a row line up; a figure's
//     title is wrapped to the figure's width.
//
// Output is deterministic for a given run: no timestamps in SVG, fixed
// fonts (Liberation Sans, compiled in), stable orders. The PDF embeds its
// fonts (≈200 KB per figure); the SVG does not, so viewers substitute a
// sans-serif font. The TeX output is a pgfpicture (gonum's vgtex) to
// \input into a document that loads pgf; its strings are LaTeX-escaped.
package plots
