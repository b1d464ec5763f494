package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/plots"
	"concbench/report"
	"concbench/results"
)

const validateUsage = `usage: concbench validate [flags]

Checks the whole measurement chain — load generator, loopback, kernel,
server — against queueing theory, with measured inputs. One server thread
(Leader/Followers, 1 thread, pinned to --server-cpus) serves Poisson
arrivals from the load generator (one busy-polling worker on --load-cpus);
CPU work is exponential (M/M/1) or constant (M/D/1) with mean --work-mean,
at each target utilization of --rho. With --threads c the server has c
threads on c CPUs, judged as c servers: sharing one queue (M/G/c) for
Leader/Followers, a queue each (c × M/G/1) for --model partitioned; it
needs c + 1 CPUs and is refused on fewer. Both sides trace every request: the
server its service start and end around Service.Do (serve --trace), the
generator the intended send, the actual send and the kernel's receive
timestamp, on the host's CLOCK_MONOTONIC; the two are joined by request
id.

First the floor is measured: zero work at a low rate, every request to an
idle server (the loopback round trip and the server's handling outside
the service); then the service time under closed load (exponential work,
one request in flight per connection), to compare with the open-load
experiments' own. Each response time is decomposed exactly into
generator lag, queue, dispatch (loopback, wake-up, read), service and
return. Each experiment's prediction is the queue on the effective
service time, at the achieved rate: every request occupies its server
for the measured service plus the server's own gap between two services
(a busy server's dispatch), one that finds its server idle first pays
the idle server's set-up (its dispatch), and the response returns in the
measured return time (M/G/1: the mean exact, the percentiles simulated;
M/G/c and c × M/G/1: simulated). An experiment is validated when its mean
response time is within --tolerance of that prediction (judged at
ρ ≤ --max-rho). Beside it, the plain model — the measured service time
alone plus the floor (M/G/1: Pollaczek–Khinchine) — and the gap to it,
attributed to the parts.

Prints the table and the decomposition, and writes validation.json,
validation.md and figures/chain.* into <out>/validate-<UTC time>/.
Exit status: 0 validated, 3 not validated (the table says why), 1 the
validation could not run. About 2 minutes with the defaults.

Flags:
`

func runValidate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var (
		out, work, rhos, serverCPUs, loadCPUs, formats string
		workNs, duration, warmup, floorDuration        time.Duration
		model                                          string
		floorRate, tolerance, maxRho                   float64
		conns, threads                                 int
		seed                                           uint64
		relax                                          bool
	)
	fs.StringVar(&out, "out", "out", "the folder under which validate-<UTC time> is made")
	fs.StringVar(&work, "work", "exp,fixed", "CPU-work distributions, comma-separated: exp (M/M/1), fixed (M/D/1)")
	fs.DurationVar(&workNs, "work-mean", time.Duration(harness.DefaultValidateWorkNs), "mean CPU work per request (1µs..100ms)")
	fs.StringVar(&rhos, "rho", "0.3,0.5,0.7", "target utilizations, comma-separated, each in (0, 1)")
	fs.DurationVar(&duration, "duration", 0, fmt.Sprintf("measured window of each experiment (0: %v divided by --threads, the same number of requests)", harness.DefaultValidateDuration))
	fs.IntVar(&threads, "threads", 1, fmt.Sprintf("the server's threads, c (1..%d): c > 1 is judged as c servers and needs c + 1 CPUs", harness.MaxValidateThreads))
	fs.StringVar(&model, "model", "leaderfollowers", "the server's model: leaderfollowers (c threads share one queue: M/G/c) or partitioned (a queue each: c × M/G/1)")
	fs.DurationVar(&warmup, "warmup", time.Second, "unmeasured warm-up before each window (≥ 100ms)")
	fs.Float64Var(&floorRate, "floor-rate", 300, "the floor run's rate (zero work), requests/s")
	fs.DurationVar(&floorDuration, "floor-duration", 4*time.Second, "the floor run's measured window")
	fs.IntVar(&conns, "conns", 16, "connections of the load generator")
	fs.Float64Var(&tolerance, "tolerance", 0.10, "largest accepted |measured/predicted − 1| of the mean")
	fs.Float64Var(&maxRho, "max-rho", 0.7, "largest target utilization the verdict judges")
	fs.StringVar(&serverCPUs, "server-cpus", "", "the server's CPUs (cpulist), one per thread; default the first --threads CPUs of this process")
	fs.StringVar(&loadCPUs, "load-cpus", "", "the load generator's CPU; default the next one")
	fs.StringVar(&formats, "formats", "svg,png", "figure formats, comma-separated: "+strings.Join(plots.Formats, ", "))
	fs.Uint64Var(&seed, "seed", 1, "seed of the schedules and the simulations")
	fs.BoolVar(&relax, "relax-load-checks", false, "turn off the load generator's checks on its own health (tests on a busy machine only)")
	keep := fs.Bool("keep-kernel-threads", false, "leave the kernel threads that stall a CPU for milliseconds at a fixed period (DAMON's kdamond) as they are; by default they get SCHED_IDLE while validate runs (as root) and are restored after")
	if err := cli.Parse(fs, args, stdout, validateUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("validate: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if threads < 1 {
		return fmt.Errorf("validate: --threads %d out of range (accepted: 1..%d)", threads, harness.MaxValidateThreads)
	}
	if !(tolerance > 0 && tolerance < 1) || !(maxRho > 0 && maxRho < 1) {
		return fmt.Errorf("validate: --tolerance %g or --max-rho %g out of range (accepted: each in (0, 1))", tolerance, maxRho)
	}
	rs, err := parseFloats(rhos)
	if err != nil {
		return fmt.Errorf("validate: --rho: %w", err)
	}
	opt := harness.ValidateOptions{
		Model: model, Threads: threads, ServerCPUs: serverCPUs, LoadCPUs: loadCPUs, Work: strings.Split(work, ","), WorkNs: float64(workNs), Rhos: rs,
		Warmup: warmup, Duration: duration, FloorRate: floorRate, FloorDuration: floorDuration, Conns: conns,
		Tolerance: tolerance, MaxJudgedRho: maxRho, Seed: seed, Progress: stderr, KeepKernelThreads: *keep,
	}
	if relax {
		opt.Limits = relaxedLimits
	}
	v, err := harness.Validate(ctx, opt)
	if err != nil {
		return err
	}
	if relax {
		v.Notes = append(v.Notes, "the load generator's checks on its own health were turned off (--relax-load-checks)")
	}
	dir := filepath.Join(out, "validate-"+time.Now().UTC().Format("20060102T150405Z"))
	if _, err := report.WriteValidation(dir, v, strings.Split(formats, ",")); err != nil {
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
