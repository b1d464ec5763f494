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
// model's own counters and per-thread events, and from these the thread
// balance: connections and requests per serving thread as max ÷ mean and
// the busiest thread's share, Balance), the M/M/c ideal of the
// configuration at that load (Theory, from MMc), and its provenance
// (commit, Go version, kernel, CPU, affinity, GOMAXPROCS). A point's
// Status says whether it was measured (ok), failed (the server died or
// the point could not run; Failure holds why, with the server's stderr
// tail) or is unavailable on the machine (e.g. no io_uring). A measured
// point may still be invalid (Point.Invalid): Load.Valid is the load
// generator's verdict, Load.Reasons why it is not to be trusted,
// Load.Checks the failed checks as short codes (the first is the main
// one, Point.MainCheck) and Load.OverCapacity whether the server did not
// keep up with the offered load.
//
// A mechanisms point (KindMechanisms) is a short window after an
// equal-load point, on the same server at the same rate, whose
// ServerCost.Mechanisms are the kernel's counts of the server's system
// calls by kind (SyscallKinds), its futex wake calls and the wake-up
// IPIs its CPUs received (Mechanisms), or whose MechanismsUnavailable
// says why the kernel refused them. Counting slows every system call,
// so its latency and other costs are perturbed: its metrics are the
// mechanism metrics (MechanismMetrics, Metric.Mechanism), per request.
//
// # A run folder
//
//	run.json                the Run: experiment, configurations, unavailable models, provenance, state
//	points/<name>.json      one Point per file, named by PointFileName
//	points.csv, bench.txt   the exports (WriteCSV, WriteBench), written by the figures command
//	figures/, report.*      written by package report (the figures drawn by package plots)
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
// fraction) — for an absolute-rate point (KindRate), of one
// (configuration, kind, offered rate); for a latency-objective search's
// probe (KindProbe), of one probe index; for its result (KindSLO), of the
// configuration — into a Group, in the run's
// configuration order, then in load order (CompareLoad: capacity first,
// then the other kinds by name, then ascending fraction or rate; ReadRun
// sorts points the same way). A Metric extracts one number from a point
// (Metrics lists them: capacity, SLO capacity (a KindSLO point's
// SLOResult, which has no load-generator result: it is valid unless a
// probe's generator-invalid verdict spoiled it), latency percentiles corrected and
// uncorrected, achieved rate, send lag, context switches, CPU,
// allocations, bytes, run-queue wait, RSS, the thread balance's
// columns, and a mechanisms point's system calls, futex wakes and
// wake-up IPIs per request); Group.Aggregate summarizes it across the
// valid repetitions:
//
//   - the median, with a 95% confidence interval from order statistics,
//     exactly what benchstat reports (stats.MedianCI: x/perf benchmath,
//     AssumeNothing): distribution-free, so valid for the skewed
//     distributions latencies have. With fewer than 6 values no 95% interval exists; Lo/Hi are
//     then infinite and a warning says so — Stats.Band then gives the
//     min–max range, labelled as such, for figures;
//   - spread: min, max, mean, sample standard deviation, interquartile
//     range and median absolute deviation (montanaflynn/stats);
//   - the libraries' warnings, kept with the numbers (Stats.Warnings).
//
// Invalid never feeds an aggregate. A statistic uses only the repetitions
// that may be trusted: measured points whose verdict is valid
// (Point.Valid), and, for the server's own costs, measured points that
// carry no load-generator verdict at all. A measured point whose verdict
// is invalid is left out of every statistic, whatever values it carries,
// and counted beside it (Aggregate.Excluded, with ExcludedReasons naming
// each one's repetition and main check), so that every use can say how
// many were excluded. Failed and unavailable points are skipped, and
// counted (Aggregate.Skipped and SkipReasons); so are valid points that
// lack the metric (a counter the kernel did not expose is absent, never
// 0). The only summary over every measured point is Group.OfferedRate:
// the offered rate is the experiment's input, not a measurement the
// verdict judges. The tests between samples are package stats's (the
// Mann–Whitney U test, ratio intervals, Welch's t-test); the figures and
// the gate give them Aggregate's values, so valid repetitions only.
//
// Latency percentiles across repetitions come from merged histograms
// (Group.MergeLatency), never from averaged percentiles; the merge takes
// the valid repetitions only (Merged.Excluded counts the others), and
// values it cannot hold are counted (Merged.Dropped), never hidden.
//
// The report's decisions live here with the who-wins table's
// (DecideCells): the seed's claims about Leader/Followers against
// Half-Sync/Half-Reactive (Claims, CompareClaim, HolmClaims) and the
// promotion orders against fifo (CompareOrders, BusiestVerdict); package
// report words them.
//
// # Exports
//
// WriteCSV writes every point, invalid ones included, one row each, under
// a full header with the unit in every column name (valid,
// invalid_reasons, failed_checks and over_capacity carry the verdict); a
// value a point does not carry is an empty cell. WriteBench writes the Go
// benchmark format (x/perf benchfmt) that benchstat reads: one line per
// valid repetition (invalid ones are left out, as from every statistic),
// named with key=value parts (BenchName, e.g.
// BenchmarkServe/config=leaderfollowers-lifo/kind=open/load=0.50),
// units benchstat understands (p99-ns, ctxsw/op, allocs/op, B/op,
// cpu-ns/op, req/s) with their better direction, and configuration lines
// (goos, goarch, cpu, commit, go, kernel). Compare configurations, one
// column each, their rows (kind and load) aligned, with
//
//	go tool benchstat -col /config bench.txt
//
// # Queueing theory and the measurement chain
//
// MMc is the M/M/c ideal stored with every open point (Erlang C: the
// probability of waiting, the mean and the percentiles of the response
// time, exact). For concbench validate: PollaczekKhinchine (the M/G/1
// mean), SetupMean (M/G/1 with a set-up time for the first request of a
// busy period), MD1 (Erlang's exact M/D/1 percentiles) and SimulateQueue
// (the Kiefer–Wolfowitz / Lindley recursion with service, set-up, gap and
// floor resampled from measured samples, or drawn from a Sampler:
// percentiles of M/G/1 and M/G/c, which have no closed form; c servers
// sharing one queue, or partitioned, each with its own, fed by a random or
// a stated split). Join and Decompose join the generator's and the
// server's per-request traces by id and split each response time into
// generator lag, queue, dispatch, service and return (Parts), per thread
// of the server; SplitOf is the split a partitioned server made;
// AnalyzeChain judges one experiment on the effective service time, the
// plain M/G/c beside it, and Validation is the whole record
// (validation.json).
//
// For concbench theory: ServiceDist (constant, exponential, lognormal,
// bimodal service of one mean) and RoundRobinMM1 (c × E_c/M/1:
// exponential servers dealt every c-th arrival, a GI/M/1 queue); the
// comparison itself (M/G/c against c × M/G/1) is queueing.CompareQueues.
package results
