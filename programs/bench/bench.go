package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"concbench/harness"
	"concbench/loadgen"
	"concbench/programs/figures"
	"concbench/programs/loadopt"
	"concbench/report"
	"concbench/results"
)

// Run runs the experiment cfg asks for, or resumes cfg.Resume, or (with
// Print) prints it; progress goes to stderr, the run's summary and
// folder to stdout.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	f, set := &cfg, cfg.Given
	opt, err := f.Agents.Options("bench", stderr)
	if err != nil {
		return err
	}
	var sum *harness.Summary
	if f.Resume != "" {
		for name := range set {
			// --no-figures, --validate and --out change what is done with the run, not
			// the experiment; --out is meaningless here (the folder is
			// --resume's) and stays refused. The agents' flags say how
			// the load is generated, as on the first invocation.
			if name != "resume" && name != "no-figures" && name != "validate" && !loadopt.FlagNames[name] {
				return fmt.Errorf("bench: --resume takes the experiment from %s/run.json; --%s cannot change it", f.Resume, name)
			}
		}
		fmt.Fprintf(stderr, "concbench bench: resuming %s\n", f.Resume)
		sum, err = harness.Resume(ctx, f.Resume, opt)
	} else {
		exp, xerr := experiment(f)
		if xerr != nil {
			return xerr
		}
		thesis := f.Profile == "thesis" && !set["experiment"]
		if f.Print {
			return printExperiments(stdout, exp, thesis, f)
		}
		if thesis {
			return runThesis(ctx, f, opt, stdout, stderr)
		}
		dir := harness.NewRunDir(f.Out, time.Now())
		fmt.Fprintf(stderr, "concbench bench: profile %s, %d configurations, %d workload(s), %d repetitions → %s\n",
			exp.Profile, len(exp.Configs), len(exp.Workloads), exp.Repetitions, dir)
		sum, err = harness.Run(ctx, exp, dir, opt)
	}
	if err != nil {
		if sum == nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(stdout, "run: %s\n", sum.Dir)
		return fmt.Errorf("bench: %w (the points measured so far are in %s)", err, sum.Dir)
	}
	chain := ""
	if !sum.Interrupted && f.Validate > 0 {
		chain = validateChain(ctx, sum.Dir, f, stderr)
	}
	if err := finish(stdout, sum, !f.NoFigures); err != nil {
		return err
	}
	if chain != "" {
		fmt.Fprintf(stdout, "measurement chain: %s (%s)\n", chain, filepath.Join(sum.Dir, report.ValidationMD))
	}
	fmt.Fprintf(stdout, "render again: concbench figures --run %s   (or: make figures RUN=%s)\n", sum.Dir, sum.Dir)
	if sum.Interrupted {
		return fmt.Errorf("bench: interrupted; continue with: concbench bench --resume %s", sum.Dir)
	}
	return nil
}

// validateChain runs a short validation of the measurement chain (one
// M/M/1 experiment at ρ 0.5 with a window of f.Validate) and writes it into
// the run folder, where the report's Measurement chain section reads it.
// A validation that cannot run is recorded as not validated, with why: it
// never fails the bench. It returns the verdict.
func validateChain(ctx context.Context, dir string, f *Config, stderr io.Writer) string {
	if v, _ := report.ReadValidation(dir); v != nil {
		return v.Verdict // a resumed run that has one
	}
	fmt.Fprintf(stderr, "concbench bench: the measurement chain: one M/M/1 experiment at ρ 0.5, %v (--validate 0 skips it)\n", f.Validate)
	opt := harness.ValidateOptions{Binary: f.ServerBinary, Work: []string{"exp"}, Rhos: []float64{0.5}, Duration: f.Validate,
		FloorDuration: 2 * time.Second, ServerCPUs: f.ServerCPUs, LoadCPUs: f.LoadCPUs, Progress: stderr, KeepKernelThreads: f.Agents.KeepKernelThreads}
	if f.RelaxLoadChecks {
		opt.Limits = loadgen.RelaxedLimits
	}
	v, err := harness.Validate(ctx, opt)
	if err != nil {
		v = &results.Validation{Verdict: "not validated: the validation could not run: " + err.Error()}
	}
	if f.RelaxLoadChecks {
		v.Notes = append(v.Notes, "the load generator's checks on its own health were turned off (--relax-load-checks)")
	}
	if _, err := report.WriteValidation(dir, v, []string{"svg"}); err != nil {
		fmt.Fprintf(stderr, "concbench bench: the measurement chain: %v\n", err)
	}
	return v.Verdict
}

// finish reads the run in sum.Dir back and writes to stdout, in this
// order: the warning of a mostly invalid run (report.Banner), if it is
// one, and the run's summary and folder. When render is set it then
// renders the figures and the report into the folder and says where they
// are.
func finish(stdout io.Writer, sum *harness.Summary, render bool) error {
	run, pts, err := results.ReadRun(sum.Dir)
	if err != nil {
		return fmt.Errorf("bench: reading the run back from %s: %w (the points are kept; render with: concbench figures --run %s)", sum.Dir, err, sum.Dir)
	}
	if banner := report.Banner(run, pts); banner != "" {
		fmt.Fprintf(stdout, "%s\n\n", banner)
	}
	fmt.Fprintf(stdout, "%s\nrun: %s\n", sum, sum.Dir)
	if !render {
		return nil
	}
	// Render whatever was measured, an interrupted run included.
	if _, err := report.Render(sum.Dir, run, pts, report.Options{}); err != nil {
		return fmt.Errorf("bench: rendering the figures of %s: %w (the points are kept; retry with: concbench figures --run %s)", sum.Dir, err, sum.Dir)
	}
	fmt.Fprintf(stdout, "report: %s\n        %s\nfigures: %s\n", filepath.Join(sum.Dir, report.ReportHTML), figures.Screenshot(sum.Dir), filepath.Join(sum.Dir, report.FiguresDir))
	return nil
}
