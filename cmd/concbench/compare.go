package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"concbench/internal/cli"
	"concbench/programs/compare"
)

const compareUsage = `usage: concbench compare [flags] RUN_A RUN_B

Compares two run folders — before and after a change, two machines, two
settings — configuration by configuration: for every configuration and
load point both runs measured, and every metric asked for, B's median as a
factor of A's with a 95% distribution-free interval (Hodges–Lehmann
estimate, Moses interval: the order statistics of the ratios over all
pairs of repetitions) and the two-sided Mann–Whitney p-value, from the
valid repetitions only. It prints a table, then one verdict per row, e.g.

  leaderfollowers/lifo capacity: B is 1.21× [1.15, 1.27] A (p = 0.002)
  netpoll open 0.50 p99 latency: no significant difference (B/A 1.03× [0.97, 1.10], p = 0.39)

Each row is tested on its own (no correction for the number of rows: with
many rows, expect some of them to differ by chance; the CI gate, concbench
gate, controls its error rate across rows). Open-loop points are compared
at the same fraction of each run's own capacity: if the capacities differ,
so do the offered rates, and the table shows both. Runs from different
machines or commits are compared as asked, with a note saying so.

Flags:
`

func runCompare(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	metrics := fs.String("metrics", strings.Join(compare.DefaultMetrics, ","), "comma-separated metrics to compare: "+compare.MetricNames())
	jsonPath := fs.String("json", "", "also write the rows as JSON to this file (- for standard output instead of the table)")
	if err := cli.Parse(fs, args, stdout, compareUsage); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("compare: want two run folders, RUN_A and RUN_B (got %d arguments)", fs.NArg())
	}
	return compare.Run(compare.Config{A: fs.Arg(0), B: fs.Arg(1), Metrics: strings.Split(*metrics, ","), JSON: *jsonPath}, stdout)
}
