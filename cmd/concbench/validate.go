package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/queueing"
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
	c, def := queueing.DefaultValidate(), queueing.DefaultValidate()
	var work, rhos, formats string
	var workNs time.Duration
	var relax bool
	fs.StringVar(&c.Out, "out", def.Out, "the folder under which validate-<UTC time> is made")
	fs.StringVar(&work, "work", strings.Join(def.Work, ","), "CPU-work distributions, comma-separated: exp (M/M/1), fixed (M/D/1)")
	fs.DurationVar(&workNs, "work-mean", time.Duration(def.WorkNs), "mean CPU work per request (1µs..100ms)")
	fs.StringVar(&rhos, "rho", cli.JoinFloats(def.Rhos), "target utilizations, comma-separated, each in (0, 1)")
	fs.DurationVar(&c.Duration, "duration", def.Duration, fmt.Sprintf("measured window of each experiment (0: %v divided by --threads, the same number of requests)", harness.DefaultValidateDuration))
	fs.IntVar(&c.Threads, "threads", def.Threads, fmt.Sprintf("the server's threads, c (1..%d): c > 1 is judged as c servers and needs c + 1 CPUs", harness.MaxValidateThreads))
	fs.StringVar(&c.Model, "model", def.Model, "the server's model: leaderfollowers (c threads share one queue: M/G/c) or partitioned (a queue each: c × M/G/1)")
	fs.DurationVar(&c.Warmup, "warmup", def.Warmup, "unmeasured warm-up before each window (≥ 100ms)")
	fs.Float64Var(&c.FloorRate, "floor-rate", def.FloorRate, "the floor run's rate (zero work), requests/s")
	fs.DurationVar(&c.FloorDuration, "floor-duration", def.FloorDuration, "the floor run's measured window")
	fs.IntVar(&c.Conns, "conns", def.Conns, "connections of the load generator")
	fs.Float64Var(&c.Tolerance, "tolerance", def.Tolerance, "largest accepted |measured/predicted − 1| of the mean")
	fs.Float64Var(&c.MaxJudgedRho, "max-rho", def.MaxJudgedRho, "largest target utilization the verdict judges")
	fs.StringVar(&c.ServerCPUs, "server-cpus", "", "the server's CPUs (cpulist), one per thread; default the first --threads CPUs of this process")
	fs.StringVar(&c.LoadCPUs, "load-cpus", "", "the load generator's CPU; default the next one")
	fs.StringVar(&formats, "formats", strings.Join(def.Formats, ","), "figure formats, comma-separated: "+strings.Join(queueing.Formats, ", "))
	fs.Uint64Var(&c.Seed, "seed", def.Seed, "seed of the schedules and the simulations")
	fs.BoolVar(&relax, "relax-load-checks", false, "turn off the load generator's checks on its own health (tests on a busy machine only)")
	fs.BoolVar(&c.KeepKernelThreads, "keep-kernel-threads", false, "leave the kernel threads that stall a CPU for milliseconds at a fixed period (DAMON's kdamond) as they are; by default they get SCHED_IDLE while validate runs (as root) and are restored after")
	if err := cli.Parse(fs, args, stdout, validateUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("validate: unexpected argument %q (flags only)", fs.Arg(0))
	}
	var err error
	if c.Rhos, err = cli.ParseFloats(rhos); err != nil {
		return fmt.Errorf("validate: --rho: %w", err)
	}
	c.Work, c.WorkNs, c.Formats = strings.Split(work, ","), float64(workNs), strings.Split(formats, ",")
	c.RelaxLoadChecks = relax
	return queueing.Validate(ctx, c, stdout, stderr)
}
