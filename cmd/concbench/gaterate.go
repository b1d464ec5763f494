package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/gaterate"
)

const gaterateUsage = `usage: concbench gaterate [--runs N] [--head-tags T] [--base REV] [--out DIR]
       concbench gaterate --judge [--head-tags T] [--out DIR]

Measures the CI gate's error rates: it runs the gate ("concbench gate
--base REV", in this process) until DIR holds --runs runs, with or without
an injected regression in the head's build, and reports how often the
gate failed (exit 1), passed (0) or could not decide (2), with the exact
(Clopper–Pearson) 95% confidence interval of the failure rate, and, per
configuration × load × metric, the changes of the medians it saw and how
often each row was a regression.

With no --head-tags the runs are no-change runs (the head is the base's code):
the failure rate is the gate's false-positive rate. With --head-tags
concbench_regress_<kind> it is the gate's power against that regression
(gate --head-tags). The runs already in DIR count, so an interrupted
campaign continues where it stopped, and --runs 0 measures nothing: it
recounts the runs there (what rewrites results/gaterate/<kind>/summary.md
from the committed runs, with --head-tags for a regression's folder). --judge
re-judges the stored runs with this binary's rules (gate --run) instead of
measuring, so that thresholds set on some runs can be checked on others.

Each run leaves DIR/run-NNN.json and .md (the gate's verdict), .log (its
progress) and its run folder under DIR/runs/; a run takes about 5 minutes
on 2 vCPUs. The summary (Markdown) goes to standard output and to
DIR/summary.md.

  concbench gaterate --runs 20 --out out/gaterate/nochange
  concbench gaterate --runs 10 --head-tags concbench_regress_cpu --out out/gaterate/cpu
  concbench gaterate --runs 0 --head-tags concbench_regress_cpu --out results/gaterate/cpu

Flags:
`

func runGaterate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gaterate", flag.ContinueOnError)
	var c gaterate.Config
	// --runs counts whole gate runs (each of --reps repetitions per
	// side), a different number from the gate's --reps.
	fs.IntVar(&c.Runs, "runs", 20, "gate runs to have in --out (those already there count; 0: measure nothing, recount)")
	fs.StringVar(&c.HeadTags, "head-tags", "", "build tags of the head, an injected regression: concbench_regress_<kind> (gate --head-tags); empty: no-change runs")
	cli.Renamed(fs, "tags", "head-tags", stderr)
	fs.StringVar(&c.Base, "base", "HEAD", "the gate's --base revision")
	fs.StringVar(&c.Out, "out", "out/gaterate", "the campaign's folder")
	fs.BoolVar(&c.Judge, "judge", false, "re-judge the runs in --out with this binary's rules instead of measuring")
	if err := cli.Parse(fs, args, stdout, gaterateUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gaterate: unexpected argument %q (flags only)", fs.Arg(0))
	}
	c.Given = cli.Set(fs)
	return gaterate.Run(ctx, c, stdout, stderr)
}
