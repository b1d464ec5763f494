package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/stages"
)

const stagesUsage = `usage: concbench stages [flags]

Where each server's time goes, per request, beside real nginx on the same
CPU. Each configuration (--configs; default the lean profile's: nginx
with one worker, acceptmutex/exclusive with one, the Proactor and
Leader/Followers with one thread, in user space and by EPOLLONESHOT)
is started pinned to --server-cpus under a CPU quota of --quota CPUs
for all its processes (default half a CPU, so that the server's CPU,
not the generator's, sets the rate),
and driven from --load-cpus by a closed loop of --conns connections of
HTTP requests with no work. Over each window of --duration after
--warmup it reads every server thread's CPU time and context switches
and samples the threads with perf record -F --freq.

Prints a line per measurement, then a table (markdown), one column per
configuration, medians [range] over the --rounds rounds (the
configurations in turn, the order reversed every other round; a round
whose load was invalid is left out, and said):
  requests/s                  the rate the closed loop achieved; under
                              it, and under CPU per request, each
                              column × the first, paired by round
                              (the ratios' median [range])
  CPU µs/req                  every thread; the server's threads (its
                              busiest: as many as it has workers) and
                              the others (the Go runtime's; nginx's master)
  context switches/req        times put on a CPU, the same split
  kernel: ...                 the kernel's stages: TCP/IP and the rest,
                              system-call entry and epoll, io_uring, file
                              references, the scheduler, futexes
  user: ...                   the Go runtime's, libc's, and the server's
                              own: a Go package of the module each (wire
                              is HTTP parsing and responding) or a binary
Each stage: µs per request (its share of the samples × CPU per request)
and its share. Needs perf (Debian: linux-perf) and root for the quota
and the samples; without perf the CPU and switch rows are still there
and the output says why the stages are not. With --before, each model
also runs from an earlier build of concbench, in a column "NAME (before)"
beside it, the two in the same rounds: a change's effect, stage by stage.

  concbench stages
  concbench stages --before /tmp/concbench-OLD    (before and after a change, in one run)
  concbench stages --configs nginx/exclusive,proactor --rounds 5 --quota 0

Flags:
`

func runStages(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c, err := parseStagesFlags(args, stdout)
	if err != nil {
		return err
	}
	return stages.Run(ctx, c, stdout, stderr)
}

// parseStagesFlags reads the command line into a stages run's settings.
func parseStagesFlags(args []string, stdout io.Writer) (stages.Config, error) {
	fs := flag.NewFlagSet("stages", flag.ContinueOnError)
	c, def := stages.Default(), stages.Default()
	var configs string
	fs.StringVar(&c.ServerBinary, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&configs, "configs", "", "comma-separated configurations, by name (nginx/exclusive, proactor) or by model; default: the lean profile's")
	fs.StringVar(&c.ServerCPUs, "server-cpus", "", "CPUs the servers are pinned to (default: the first CPU of this process's first half)")
	fs.StringVar(&c.LoadCPUs, "load-cpus", "", "CPUs the load generator is pinned to (default: the second half)")
	fs.Float64Var(&c.Quota, "quota", def.Quota, "the servers' CPU quota, in CPUs, for all their processes together (0: none)")
	fs.IntVar(&c.Conns, "conns", def.Conns, "connections, one request in flight each")
	fs.DurationVar(&c.Warmup, "warmup", def.Warmup, "warm-up before each window")
	fs.DurationVar(&c.Duration, "duration", def.Duration, "each measurement window")
	fs.IntVar(&c.Rounds, "rounds", def.Rounds, "measurements per configuration, the configurations in turn")
	fs.IntVar(&c.Freq, "freq", def.Freq, "perf record's samples per second and thread")
	fs.StringVar(&c.Perf, "perf", "", "the perf executable (default: perf from PATH)")
	fs.StringVar(&c.Before, "before", "", "another concbench executable (an earlier commit's build): each model also measured with it, in a column beside (its own GOMAXPROCS)")
	fs.StringVar(&c.Dir, "dir", "", "where nginx's files and perf's data go, kept (perf-ROUND-CONFIG.data; default: a temporary folder, removed)")
	if err := cli.Parse(fs, args, stdout, stagesUsage); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("stages: unexpected argument %q (flags only)", fs.Arg(0))
	}
	var err error
	c.Configs, err = stages.Configs(configs)
	return c, err
}
