package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"concbench/harness"
)

// runThesis runs the thesis profile's parts (harness.ThesisParts) one
// after another into one folder, each with the flags applied: it
// measures the load generator's ceilings and the run's overheads once,
// prints the estimated duration, then runs every part (its own run
// folder, report and figures) with those ceilings.
func runThesis(ctx context.Context, f *Config, opt harness.Options, stdout, stderr io.Writer) error {
	var parts []harness.Experiment
	for _, p := range harness.ThesisParts() {
		e, err := apply(p, f)
		if err != nil {
			return err
		}
		if e, err = e.Resolve(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		parts = append(parts, e)
	}
	opt.Progress = stderr
	fmt.Fprintf(stderr, "concbench bench: thesis: measuring the load generator's ceiling and the per-point overhead\n")
	ceilings, timing, err := harness.MeasureCeilings(ctx, parts[0], opt)
	if err != nil {
		return fmt.Errorf("bench: thesis: %w", err)
	}
	opt.Ceilings = ceilings
	total := time.Duration(0)
	for _, p := range parts {
		n, d := p.Estimate(timing)
		total += d
		fmt.Fprintf(stderr, "concbench bench: thesis: %s: %d configurations, %d workloads, %d repetitions, up to %d points: about %s\n",
			p.Profile, len(p.Configs), len(p.Workloads), p.Repetitions, n, d.Round(time.Minute))
	}
	fmt.Fprintf(stderr, "concbench bench: thesis: about %s in all (estimated from the windows, %s per point and %s per server start, measured now); Ctrl-C stops after the current point, and each part resumes with --resume\n",
		total.Round(time.Minute), timing.PointOverhead.Round(time.Millisecond), timing.ServerStart.Round(time.Millisecond))
	root := filepath.Join(f.Out, "thesis-"+time.Now().UTC().Format("20060102T150405Z"))
	for _, p := range parts {
		dir := filepath.Join(root, strings.TrimPrefix(p.Profile, "thesis/"))
		fmt.Fprintf(stderr, "concbench bench: thesis: %s → %s\n", p.Profile, dir)
		sum, err := harness.Run(ctx, p, dir, opt)
		if err != nil {
			if sum != nil {
				fmt.Fprintf(stdout, "run: %s\n", sum.Dir)
			}
			return fmt.Errorf("bench: thesis: %s: %w", p.Profile, err)
		}
		if err := finish(stdout, sum, !f.NoFigures); err != nil {
			return err
		}
		if sum.Interrupted {
			return fmt.Errorf("bench: thesis: interrupted in %s; continue it with: concbench bench --resume %s (then the later parts with --profile thesis … again)", p.Profile, sum.Dir)
		}
	}
	fmt.Fprintf(stdout, "thesis: %s\n", root)
	return nil
}
