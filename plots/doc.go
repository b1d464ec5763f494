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
// The report opens with the "who wins where" table (winners.go): a row
// per workload of the run's experiment, a column per metric — capacity
// at the workload's latency objective, and p99, CPU and context switches
// per request at the workload's equal absolute load. Every cell is
// decided by results.DecideCells (stats.Decide): a single winner, every
// other configuration shown to be behind the best by more than the
// column's margin; a leading group, every member shown to be within the
// margin of the best and every other one behind by more than it; or
// undecided, with the claims that hold (Holm's within the cell) and the
// repetitions a decision would need. The tests are on the logarithms of
// the values, paired by repetition, with the cell's pooled residual
// spread; the table and docs/report.md say how, and docs/findings.md what
// they decided. Under the table, the A/A control (results.Control) says
// whether any cell separated the run's twin from its original. A run
// without open-loop points but with rate points at one connection count
// (the default suite) uses each configuration's equal-load point as the
// chosen load of the figures and the summary below.
//
// After the Answers, a run with mechanisms points (results.KindMechanisms:
// the harness's short window after each equal-load point that counts
// system calls with kernel tracepoints) gets the Mechanisms table
// (mechanisms.go), the who-wins table's companion that says why: per
// workload and configuration, the median of its valid mechanisms points'
// system calls per request, the largest kinds, futex wake calls and
// cross-CPU wake-ups (wake-up IPIs) per request, and, at the row of each
// decided cell's leader, how its mechanisms differ from those of the
// first configuration behind it — the total and the two kinds that
// differ most, the futex wakes, the IPIs — with the cells' [n]. A
// configuration without counts shows why (not counted: the kernel's
// reason; no valid point: the verdict's main check); a run none of whose
// points was counted says "Not counted: <reason>" once, never a table of
// zeros.
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
//     the Claims section, which tests the seed's claims (claims.go).
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
// Honesty rules the figures and the report follow:
//   - A percentile p of a window with n responses is drawn only if
//     n·(1−p) ≥ MinTailResponses (10) in every valid repetition; otherwise
//     it is left out, with a note, plotted=false and the reason in the
//     CSV, and the caption counts the points left out.
//   - Intervals are the 95% confidence interval of the median (x/perf
//     benchmath). With fewer than 6 repetitions no such interval exists;
//     the figures then draw the min–max range and say so (the CSV's band
//     column is "ci" or "range"), never passing one off as the other.
//   - Log axes never panic: values ≤ 0 are left out (a band's lower edge
//     is clamped to the axis) and every such case is a note in the report
//     and a cell in the figure's CSV.
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
//   - The report's Validity section is one table, configurations × loads,
//     each cell "valid/total" with the most frequent main check among the
//     points that are not valid ("failed" and "unavailable" count as not
//     valid), a line explaining each code it shows, and every point's
//     reasons folded away in a <details> element. When the run is mostly
//     invalid (Banner: more than half of the measured points invalid, or
//     a configuration with no valid point at some load) the report opens
//     with a banner saying how much is valid, the main reason and what to
//     do; concbench bench prints the same banner.
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
// The report reads top-down: the answer, then why, then how it was
// measured. After the banner (if any) come the Answers — per summary
// metric, the best configuration by median and every other one's value as
// a factor of it with a 95% distribution-free interval
// (stats.RatioCI), "no significant difference" said as plainly as a
// win — then the Summary table (every median with its interval; p99 at
// the equal load in a suite run), the Promotion orders, the Claims, the
// Figures, and last the Experiment, Provenance and Validity sections
// with the run's warnings.
//
// The Claims section (claims.go) tests the seed's claims — Leader/Followers
// needs no context switch, less CPU and no allocation per request, while
// Half-Sync/Half-Reactive pays each for its hand-off — as a table: a row
// per claim, workload and pair of an LF and an HS/HR configuration of
// that workload, never of two workloads. Only LF's default promotion
// order (lifo) is paired (the Promotion orders section compares the
// orders), each with the HS/HR configuration of the same kind
// (claimKey: the same thread count in a thread sweep). A row gives LF ÷
// HS/HR with its 95% interval (stats.RatioCI), the exact one-sided
// Mann–Whitney U test's p in the direction the data lean
// (stats.MannWhitneyGreater), Holm-adjusted over both directions of
// every row (ClaimsAlpha), and the decision: shown, refuted or
// undecided. With the suite's 5 repetitions no row can be decided (the
// smallest p, 1/252, is above 0.05/30): the table says so, and how many
// repetitions would allow it (stats.MannWhitneyMinP).
//
// A run folder that holds a validation of the measurement chain
// (validation.json, written by concbench bench --validate or concbench
// validate with WriteValidation) gets a Measurement chain section after the
// Figures; without one the section says the chain was not validated in
// that run. WriteValidation also writes validation.md and the figure
// chain.* (ValidationFigure: measured vs predicted over ρ).
//
// Output is deterministic for a given run: no timestamps in SVG, fixed
// fonts (Liberation Sans, compiled in), stable orders. The PDF embeds its
// fonts (≈200 KB per figure); the SVG does not, so viewers substitute a
// sans-serif font. The TeX output is a pgfpicture (gonum's vgtex) to
// \input into a document that loads pgf; its strings are LaTeX-escaped.
package plots
