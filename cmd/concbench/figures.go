package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"concbench/internal/cli"
	"concbench/plots"
	"concbench/report"
	"concbench/results"
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
	dir := fs.String("run", "", "the run folder (holding run.json and points/) (required)")
	formats := fs.String("formats", strings.Join(plots.Formats, ","), "figure formats, comma-separated: svg, pdf, png, tex (LaTeX/pgf, to \\input)")
	load := fs.Float64("spectrum-load", plots.DefaultLoad, "open-loop load, as a fraction of capacity, for the spectrum, per-request cost and per-thread figures (the run's closest measured fraction is used)")
	if err := cli.Parse(fs, args, stdout, figuresUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("figures: unexpected argument %q (flags only; the run folder is --run)", fs.Arg(0))
	}
	if *dir == "" {
		return fmt.Errorf("figures: --run is required (run 'concbench help figures' for the flags)")
	}
	if !(*load > 0 && *load <= 1) {
		return fmt.Errorf("figures: --spectrum-load %v: want a fraction of capacity in (0, 1]", *load)
	}
	var fmts []string
	for _, f := range strings.Split(*formats, ",") {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" && !slices.Contains(fmts, f) {
			fmts = append(fmts, f)
		}
	}
	if len(fmts) == 0 {
		return fmt.Errorf("figures: --formats is empty (want some of %s)", strings.Join(plots.Formats, ","))
	}

	r, pts, err := results.ReadRun(*dir)
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	files, err := report.Render(*dir, r, pts, report.Options{Formats: fmts, Load: *load})
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}

	state := "complete"
	if r.Partial() {
		state = "PARTIAL (not finished: rendered the points written so far)"
		if r.Interrupted {
			state = "PARTIAL (interrupted: rendered the points it finished)"
		}
	}
	fmt.Fprintf(stdout, "run %s: %s, %d points\n", r.ID, state, len(pts))
	for _, u := range r.Unreadable {
		fmt.Fprintf(stdout, "warning: left out an unreadable point file: %s\n", u)
	}
	var figs []string
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == report.FiguresDir && filepath.Ext(f) == ".csv" {
			figs = append(figs, strings.TrimSuffix(filepath.Base(f), ".csv"))
		}
	}
	fmt.Fprintf(stdout, "report:  %s\n         %s\n", filepath.Join(*dir, report.ReportHTML), filepath.Join(*dir, report.ReportMD))
	fmt.Fprintf(stdout, "         %s\n", screenshot(*dir))
	fmt.Fprintf(stdout, "figures: %s/ (%s; %s, each with its data as .csv)\n", filepath.Join(*dir, report.FiguresDir),
		strings.Join(figs, ", "), strings.Join(fmts, ", "))
	fmt.Fprintf(stdout, "data:    %s (every point)\n         %s (go tool benchstat -col /config %[2]s)\n",
		filepath.Join(*dir, report.PointsCSV), filepath.Join(*dir, report.BenchFile))
	return nil
}
