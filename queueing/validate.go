package queueing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/plots"
	"concbench/report"
	"concbench/results"
)

// ValidateConfig is a validation's settings ("concbench validate"'s
// flags): the harness's options, and where the results go.
type ValidateConfig struct {
	harness.ValidateOptions
	// Out is the folder under which validate-<UTC time> is made.
	Out string
	// Formats are the figures' formats (plots.Formats).
	Formats []string
	// RelaxLoadChecks turns off the load generator's checks on its own
	// health (loadgen.RelaxedLimits), and the result says so.
	RelaxLoadChecks bool
}

// Formats are the figure formats a validation can write (plots.Formats).
var Formats = plots.Formats

// DefaultValidate returns the defaults of every setting.
func DefaultValidate() ValidateConfig {
	return ValidateConfig{
		ValidateOptions: harness.ValidateOptions{Model: "leaderfollowers", Threads: 1, Work: []string{"exp", "fixed"},
			WorkNs: harness.DefaultValidateWorkNs, Rhos: []float64{0.3, 0.5, 0.7}, Warmup: time.Second, FloorRate: 300,
			FloorDuration: 4 * time.Second, Conns: 16, Tolerance: 0.10, MaxJudgedRho: 0.7, Seed: 1},
		Out: "out", Formats: []string{"svg", "png"},
	}
}

// Validate checks the measurement chain against queueing theory as c
// asks (harness.Validate), prints the table and the decomposition to
// stdout, and writes validation.json, validation.md and the figures
// into c.Out/validate-<UTC time>/; its progress goes to stderr. A
// chain that is not validated returns an error with exit status 3.
func Validate(ctx context.Context, c ValidateConfig, stdout, stderr io.Writer) error {
	if c.Threads < 1 {
		return fmt.Errorf("validate: --threads %d out of range (accepted: 1..%d)", c.Threads, harness.MaxValidateThreads)
	}
	if !(c.Tolerance > 0 && c.Tolerance < 1) || !(c.MaxJudgedRho > 0 && c.MaxJudgedRho < 1) {
		return fmt.Errorf("validate: --tolerance %g or --max-rho %g out of range (accepted: each in (0, 1))", c.Tolerance, c.MaxJudgedRho)
	}
	opt := c.ValidateOptions
	if c.RelaxLoadChecks {
		opt.Limits = loadgen.RelaxedLimits
	}
	if opt.Progress == nil {
		opt.Progress = stderr
	}
	v, err := harness.Validate(ctx, opt)
	if err != nil {
		return err
	}
	if opt.Limits.Relaxed() {
		v.Notes = append(v.Notes, "the load generator's checks on its own health were turned off (--relax-load-checks)")
	}
	dir := filepath.Join(c.Out, "validate-"+time.Now().UTC().Format("20060102T150405Z"))
	if _, err := report.WriteValidation(dir, v, c.Formats); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	printValidation(stdout, v)
	fmt.Fprintf(stdout, "\nresults: %s (validation.json, validation.md, figures/chain.*)\n", dir)
	if !v.Validated {
		return cli.Exit(3, errors.New("validate: "+v.Verdict))
	}
	return nil
}

// printValidation prints the table and the decomposition as plain text.
func printValidation(w io.Writer, v *results.Validation) {
	us := func(ns float64) string { return fmt.Sprintf("%.1f", ns/1e3) }
	fmt.Fprintf(w, "floor: %s µs mean (inbound %s + return %s), p99 %s µs, %d requests at %g/s\n\n",
		us(v.Floor.MeanNs), us(v.Floor.InboundNs), us(v.Floor.ReturnNs), us(v.Floor.P99Ns), v.Floor.Requests, v.Floor.RatePerS)
	if c := v.ClosedService; c.Requests > 0 {
		fmt.Fprintf(w, "service time under closed load (exp work, one request in flight per connection): %s µs mean, SCV %.2f, p99 %s µs (open load: column S below)\n\n",
			us(c.MeanNs), c.SCV, us(c.P99Ns))
	}
	fmt.Fprintln(w, "predicted: the queue on the effective service time S_eff (measured service + the server's gap between services, an idle server's set-up, the measured return), judged;")
	fmt.Fprintln(w, "plain: the measured service time alone + the floor, beside it")
	fmt.Fprintf(w, "%-14s %11s %10s | %-22s | %-22s | %-19s | %-15s | %s\n", "experiment", "ρ/on S_eff", "S µs/SCV", "measured mean/p50/p99", "predicted mean/p50/p99", "ratio mean/p50/p99", "plain mean ratio", "verdict")
	for _, e := range v.Experiments {
		fmt.Fprintf(w, "%-14s %5.3f/%.3f %5s/%.2f | %6s %6s %8s | %6s %6s %8s | %5.3f %5.3f %5.3f | %6s %8.3f | %s\n", e.Name, e.Rho, e.RhoEffective, us(e.Service.MeanNs), e.Service.SCV,
			us(e.Measured.MeanNs), us(e.Measured.P50Ns), us(e.Measured.P99Ns), us(e.Predicted.MeanNs), us(e.Predicted.P50Ns), us(e.Predicted.P99Ns),
			e.Ratio, e.RatioP50, e.RatioP99, us(e.Plain.MeanNs), e.PlainRatio, verdictText(e))
	}
	fmt.Fprintln(w, "\ndecomposition of the mean response time (µs), and the gap measured − plain by part:")
	for _, e := range v.Experiments {
		g := e.Gap
		fmt.Fprintf(w, "%-14s %s\n%-14s gap: lag %s + queue %s + dispatch %s + return %s = %s µs to %s\n",
			e.Name, e.Decomposition, "", us(g.GenLag), us(g.Queue), us(g.Dispatch), us(g.Return), us(g.Total), e.Plain.Model)
	}
	for _, e := range v.Experiments {
		for _, n := range e.Notes {
			fmt.Fprintf(w, "note: %s: %s\n", e.Name, n)
		}
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "\n%s\n", v.Verdict)
}

func verdictText(e results.ChainExperiment) string {
	if len(e.Reasons) == 0 {
		return e.Verdict
	}
	return e.Verdict + ": " + strings.Join(e.Reasons, "; ")
}
