package main

import (
	"context"
	"flag"
	"io"

	"concbench/internal/cli"
	"concbench/programs/aarate"
)

const aarateUsage = `usage: concbench aarate [--runs N] [--out DIR] [--profile aa] [bench flags after --]
       concbench aarate --runs 0 [--out DIR]

Measures how often the who-wins table is wrong: it runs an experiment
with an A/A twin (a configuration measured a second time under another
name: its truth is its original's) until DIR holds --runs runs, decides
every run's table with this binary's rules, and reports, per column of
the table, how often a cell separated the twin from its original — by a
decision, or by a claim that holds (Holm's within the cell) — with the
exact (Clopper–Pearson) 95% confidence interval of that false-decision
rate. Beside the table's columns it judges the candidate column "p99 of
100 ms intervals, median" the same way, so that a tail estimate enters the
table only if its control shows it honest.

The default experiment (--profile aa) is small and covers every column:
leaderfollowers/lifo (twinned), netpoll and proactor under the suite's cpu
and tiny workloads, with their latency objectives, the equal load and the
suite's time budget rule scaled to 3 minutes; a run takes about 4 minutes
on 2 vCPUs. Each run's seed is 1 + its number, so that runs are
independent. Flags after -- go to bench (e.g. -- --models ... --twin ...).

The runs already in DIR count, so an interrupted campaign continues where
it stopped, and --runs 0 measures nothing: it re-judges and recounts the
runs there with this binary's rules (any run folder under DIR/runs whose
experiment names a twin, from this binary or another). Each run judged
leaves a record, DIR/records/<run>.json: every cell's values by round,
the twin's included, small enough to commit; where a run's folder is
gone, its record is judged instead (with this binary's decision rule, on
the values as the binary that wrote the record read them). The summary
(Markdown) goes to standard output and to DIR/summary.md.

  concbench aarate --runs 10 --out out/aarate
  concbench aarate --runs 0 --out results/aarate/after   (the committed records)

Flags:
`

func runAarate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("aarate", flag.ContinueOnError)
	c := aarate.Default()
	// --runs counts the runs the campaign's folder is to hold, not
	// repetitions of a point (bench's --reps): it keeps its name.
	fs.IntVar(&c.Runs, "runs", c.Runs, "runs to have in --out (those already there count; 0: measure nothing, recount)")
	fs.StringVar(&c.Out, "out", c.Out, "the campaign's folder")
	fs.StringVar(&c.Profile, "profile", c.Profile, "the profile each run starts from (its twin: --twin after --)")
	if err := cli.Parse(fs, args, stdout, aarateUsage); err != nil {
		return err
	}
	c.BenchArgs = fs.Args()
	c.Bench = func(ctx context.Context, args []string, progress io.Writer) error {
		return runBench(ctx, args, nil, io.Discard, progress)
	}
	return aarate.Run(ctx, c, stdout, stderr)
}
