package main

import (
	"context"
	"flag"
	"io"

	"concbench/internal/cli"
	"concbench/programs/agree"
)

const agreeUsage = `usage: concbench agree [--out DIR] RUN RUN [RUN...]

Checks that independent runs of one experiment agree: decides every run's
who-wins table with this binary's rules and checks every claim of every
decided cell against the same cell of every other run. A claim is
contradicted where the other run's interval for the two configurations'
ratio (their paired comparison, 90 %) lies wholly outside it — a winner
ahead by more than the margin in one run, a rival ahead of it, or within
the margin, in another — which tells "decided in one run, undecided in
the next" (low power) from "decided in one run, excluded by the next" (a
wrong answer). It reports, per run, the cells decided by kind and the A/A
control, then the claims checked and every contradiction.

A RUN is a run folder, or a record (RUN.json) that an earlier
agree --out or aarate wrote: every cell's values by round, enough to
judge the run again after its folder is gone. With --out, each run folder
leaves its record in DIR/records/ and the summary (Markdown, also on
standard output) goes to DIR/summary.md.

  concbench agree --out results/agree out/bench-A out/bench-B out/bench-C
  concbench agree results/agree/records/*.json

Flags:
`

func runAgree(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("agree", flag.ContinueOnError)
	out := fs.String("out", "", "a folder for the runs' records and the summary (none: standard output only)")
	if err := cli.Parse(fs, args, stdout, agreeUsage); err != nil {
		return err
	}
	return agree.Run(ctx, agree.Config{Runs: fs.Args(), Out: *out}, stdout)
}
