package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"concbench/internal/cli"
	"concbench/programs/priority"
	"concbench/programs/serverconf"
)

const priorityUsage = `usage: concbench priority [flags] [label='serve flags' ...]

Measures whether priority protects high-priority requests: a stream of
high-priority requests at a fixed rate (--high-rate, --high-conns,
priority --high-prio), on connections of its own, under a growing flood of
low-priority ones (priority 0, --low-conns), for each server
configuration. Per point it starts a fresh server pinned to --server-cpus
and runs two load generators at once, in this process, on --load-cpus,
both sleep-polling so that they share the CPU: the high stream, its generator
at nice --high-nice so that the flood's generator on the same CPU does
not delay its sends, and the flood at a fraction (--low) of --capacity.
Each connection carries one priority from its first (priming) request on,
as Leader/Followers lanes, which map connections, need. The floods go up
to and beyond saturation; the question is what the high stream's p99
does meanwhile.

Without configurations it measures Leader/Followers without priority,
with lanes (SCHED_FIFO where permitted, as the server reports) and with
lanes on nice values, and Half-Sync/Half-Reactive with and without its
priority queue. Others are given as label='serve flags', e.g.

  concbench priority 'lf=--model leaderfollowers --threads 4 --gomaxprocs 5' \
      'lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5'

--capacity 0 (the default) measures the capacity first: closed loop, the
flood's connections, against the first configuration; the floods are
--low fractions of it, the same absolute rates for every configuration.

It prints a row per point (the high stream's latency and verdict, the
flood's achieved rate and verdict, the server's requests per lane), each
configuration's variant as the server reported it (how its lanes got
priority: SCHED_FIFO or nice, and the RT throttling budget), then the
high stream's median p99 per configuration and flood over the runs whose
high stream is valid; and it writes the figure — high-priority p99
against low-priority load, invalid points as grey crosses — as
priority.png and priority.svg with its data as priority.csv under --out,
beside every point's load results (JSON). A negative --high-nice needs
root or CAP_SYS_NICE: a point whose nice value was refused fails, saying
so (--high-nice 0 runs both generators alike).

Flags:
`

func runPriority(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c, err := parsePriorityFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	return priority.Run(ctx, c, stdout, stderr)
}

// parsePriorityFlags reads and checks the command line.
func parsePriorityFlags(args []string, stdout, stderr io.Writer) (priority.Config, error) {
	fs := flag.NewFlagSet("priority", flag.ContinueOnError)
	c, def := priority.Default(), priority.Default()
	var lows string
	fs.StringVar(&c.ServerBinary, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&c.ServerCPUs, "server-cpus", def.ServerCPUs, "CPUs the server is pinned to")
	fs.StringVar(&c.LoadCPUs, "load-cpus", def.LoadCPUs, "CPUs both load generators are pinned to")
	fs.StringVar(&c.CPU, "cpu", def.CPU, "CPU work per request, both streams (load --cpu)")
	fs.Float64Var(&c.HighRate, "high-rate", def.HighRate, "the high-priority stream's rate, requests/s (the same at every point)")
	fs.IntVar(&c.HighConns, "high-conns", def.HighConns, "the high-priority stream's connections")
	fs.IntVar(&c.HighPrio, "high-prio", def.HighPrio, "the high-priority stream's priority, 1..255 (the flood's is 0)")
	fs.IntVar(&c.LowConns, "low-conns", def.LowConns, "the flood's connections")
	fs.IntVar(&c.HighNice, "high-nice", def.HighNice, "nice value of the high stream's generator (its worker threads'; negative needs root or CAP_SYS_NICE; 0: as the flood's)")
	fs.StringVar(&lows, "low", "0.3,0.7,1.0,1.3", "the flood's rates as fractions of --capacity, comma-separated")
	fs.Float64Var(&c.Capacity, "capacity", def.Capacity, "the capacity the fractions refer to, requests/s; 0: measure it (closed loop, first configuration)")
	fs.DurationVar(&c.Warmup, "warmup", def.Warmup, "load --warmup")
	fs.DurationVar(&c.Duration, "duration", def.Duration, "load --duration (the measured window)")
	fs.IntVar(&c.Reps, "reps", def.Reps, "repetitions of every point")
	fs.StringVar(&c.Out, "out", def.Out, "folder for the results and the figure")
	cli.Renamed(fs, "binary", "server-binary", stderr)
	cli.Renamed(fs, "runs", "reps", stderr)
	if err := cli.Parse(fs, args, stdout, priorityUsage); err != nil {
		return c, err
	}
	c.Lows = nil
	for part := range strings.SplitSeq(lows, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) {
			return c, fmt.Errorf("priority: --low: %q is not a positive fraction", part)
		}
		c.Lows = append(c.Lows, v)
	}
	cfgArgs := fs.Args()
	if len(cfgArgs) == 0 {
		cfgArgs = priority.DefaultConfigs
	}
	var err error
	if c.Configs, err = serverconf.Parse(cfgArgs); err != nil {
		return c, fmt.Errorf("priority: %w", err)
	}
	return c.Check()
}
