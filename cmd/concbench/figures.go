package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/figures"
)

const figuresUsage = `usage: concbench figures --run DIR [--formats svg,pdf,png,tex] [--spectrum-load 0.5]

Renders a run folder from its stored results only (nothing is measured):
the figures under DIR/figures/ (each in every --formats format, with a CSV
of exactly the data it plots beside it), the exports DIR/points.csv (every
point, one row each) and DIR/bench.txt (Go benchmark format: go tool
benchstat -col /config DIR/bench.txt), and the report DIR/report.md and the self-contained
DIR/report.html (figures embedded). Re-running it replaces them.

An interrupted or still-running sweep renders too: the report says the run
is partial and covers the points written so far.

Figures: latency vs offered load (p50, p99, p99.9, with the M/M/c ideal),
percentile spectrum, capacity, context switches, CPU and allocations per
request, and the Leader/Followers per-thread share of events. The
spectrum, per-request cost and per-thread figures are drawn at the run's
measured load fraction closest to --spectrum-load.

Flags:
`

func runFigures(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	c := figures.Defaults()
	fs.StringVar(&c.Run, "run", "", "the run folder (holding run.json and points/) (required)")
	fs.StringVar(&c.Formats, "formats", c.Formats, "figure formats, comma-separated: svg, pdf, png, tex (LaTeX/pgf, to \\input)")
	fs.Float64Var(&c.Load, "spectrum-load", c.Load, "open-loop load, as a fraction of capacity, for the spectrum, per-request cost and per-thread figures (the run's closest measured fraction is used)")
	if err := cli.Parse(fs, args, stdout, figuresUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("figures: unexpected argument %q (flags only; the run folder is --run)", fs.Arg(0))
	}
	return figures.Run(c, stdout)
}
