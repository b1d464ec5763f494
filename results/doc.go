// Package results is the result record of concbench and everything done
// with it after the measurement: storage, grouping, statistics across
// repetitions, and the CSV and Go benchmark-format exports.
//
// # The record
//
// A run (Run) is one execution of an experiment: configurations ×
// load points × repetitions. Each measured point (Point) is one
// configuration at one load in one repetition: the load generator's
// result (latency histograms corrected for coordinated omission and
// uncorrected, achieved rate, send lag, the validity verdict with its
// reasons), the server's cost over the measured window (context switches,
// CPU, allocations per request, RSS, run-queue wait, perf counters, the
// model's own counters and per-thread events), the M/M/c ideal of the
// configuration at that load (Theory, from MMc), and its provenance
// (commit, Go version, kernel, CPU, affinity, GOMAXPROCS). A point's
// Status says whether it was measured (ok), failed (the server died or
// the point could not run; Failure holds why, with the server's stderr
// tail) or is unavailable on the machine (e.g. no io_uring). A measured
// point may still be invalid: Load.Valid is the load generator's verdict
// and Load.Reasons why it is not to be trusted.
//
// # A run folder
//
//	run.json                the Run: experiment, configurations, unavailable models, provenance, state
//	points/<name>.json      one Point per file, named by PointFileName
//	points.csv, bench.txt   the exports (WriteCSV, WriteBench), written by the figures command
//	figures/, report.*      written by package plots
//
// Every file is written atomically (a temporary file in the same folder,
// synced, then renamed), so a reader never sees half a file and an
// interrupted run loses at most the point being measured. A resumed run
// skips the points whose files exist (HasPoint). ReadRun reads run.json
// and every point, sorted in report order; Run.Partial says whether the
// run was interrupted or has not finished, in which case the points are
// the ones written so far.
//
// # Statistics
//
// GroupPoints gathers the repetitions of one (configuration, kind,
// fraction) into a Group, in the run's configuration order, then in load
// order (CompareLoad: capacity first, then ascending fraction; ReadRun
// sorts points the same way). A Metric extracts one number from a point
// (Metrics lists them: capacity, latency percentiles corrected and
// uncorrected, achieved rate, send lag, context switches, CPU,
// allocations, bytes, run-queue wait, RSS); Group.Aggregate summarizes it
// across the repetitions:
//
//   - the median, with a 95% confidence interval from order statistics,
//     exactly what benchstat reports (x/perf benchmath, AssumeNothing):
//     distribution-free, so valid for the skewed distributions latencies
//     have. With fewer than 6 values no 95% interval exists; Lo/Hi are
//     then infinite and a warning says so — Stats.Band then gives the
//     min–max range, labelled as such, for figures;
//   - spread: min, max, mean, sample standard deviation, interquartile
//     range and median absolute deviation (montanaflynn/stats);
//   - the libraries' warnings, kept with the numbers (Stats.Warnings).
//
// Failed and unavailable points are skipped, and counted (Aggregate.Skipped
// and SkipReasons); so are measured points that lack the metric (a counter
// the kernel did not expose is absent, never 0). Points with an invalid
// verdict are kept and counted (Aggregate.Invalid) so that every use can
// flag them. Compare tests two samples with the Mann–Whitney U test
// (benchstat's), for statements such as "LF switches less than HS/HR".
//
// Latency percentiles across repetitions come from merged histograms
// (Group.MergeLatency), never from averaged percentiles; values the merge
// cannot hold are counted (Merged.Dropped), never hidden.
//
// # Exports
//
// WriteCSV writes every point, one row each, under a full header with the
// unit in every column name; a value a point does not carry is an empty
// cell. WriteBench writes the Go benchmark format (x/perf benchfmt) that
// benchstat reads: one line per measured repetition, named with
// key=value parts (BenchName, e.g.
// BenchmarkServe/model=leaderfollowers/variant=lifo/kind=open/load=0.50),
// units benchstat understands (p99-ns, ctxsw/op, allocs/op, B/op,
// cpu-ns/op, req/s) with their better direction, and configuration lines
// (goos, goarch, cpu, commit, go, kernel, valid). Compare models with
//
//	go tool benchstat -filter valid:true -col /model bench.txt
package results
