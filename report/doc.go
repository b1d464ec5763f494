// Package report turns an analysed run into words and tables: it writes
// a run folder's report.md and report.html, and a validation's
// validation.md. The figures are package plots' (plots.Figures), the
// statistics and decisions package results' and stats'; report states
// them. Nothing is measured here.
//
// RenderRun writes, into a run folder:
//
//	figures/<name>.{svg,pdf,png,tex}  each figure (Options.Formats)
//	figures/<name>.csv                exactly the data the figure plots
//	points.csv                        every point, one row each (results.WriteCSV)
//	bench.txt                         Go benchmark format for benchstat (results.WriteBench)
//	report.md, report.html            the report; the HTML embeds its figures
//
// Screenshot renders report.html to report.png with a headless Chromium.
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
// HS/HR with its 95% interval and the one-sided p in the direction the
// data lean: t on the logarithms, paired by repetition where the pair
// shares enough rounds (results.CompareClaim, stats.Decide, as the
// who-wins table decides), Holm-adjusted over both directions of every
// row (results.HolmClaims at ClaimsAlpha), and the decision: shown,
// refuted or undecided.
//
// A run folder that holds a validation of the measurement chain
// (validation.json, written by concbench bench --validate or concbench
// validate with WriteValidation) gets a Measurement chain section after the
// Figures; without one the section says the chain was not validated in
// that run. WriteValidation also writes validation.md and the figure
// chain.* (plots.ValidationFigure: measured vs predicted over ρ).
//
// Validity is one table, configurations × loads, each cell
// "valid/total" with the most frequent main check among the points that
// are not valid ("failed" and "unavailable" count as not valid), a line
// explaining each code it shows, and every point's reasons folded away
// in a <details> element. When the run is mostly invalid (Banner: more
// than half of the measured points invalid, or a configuration with no
// valid point at some load) the report opens with a banner saying how
// much is valid, the main reason and what to do; concbench bench prints
// the same banner. Invalid repetitions feed no statistic of the report,
// as of the figures (package plots' honesty rules).
package report
