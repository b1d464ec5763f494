package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"concbench/internal/cli"
	"concbench/programs/serve"
)

const serveUsage = `usage: concbench serve --model M [flags]

Runs one concurrency model as a TCP server until SIGINT, SIGTERM, or "quit"
on standard input.

The first line on standard output is the bound address (host:port). After
it, standard input is a control channel: each line is a command, answered
by one line of JSON on standard output:

  snapshot        counters now: rusage over all threads, Go heap allocations,
                  RSS, the model's stats (models.Snapshot)
  snapshot tasks  the same plus per-thread sums from /proc/self/task
                  (context switches, run-queue wait); costs ~50 µs a thread
  info            what runs, with which settings (models.Info)
  trace           with --trace: the requests served since the last reset,
                  {"records":[[id,start_ns,end_ns,tid],…],"dropped":n,…}
                  (CLOCK_MONOTONIC ns of each request's service, from
                  the server's own clock, and the thread that served
                  it; see concbench validate)
  trace reset     with --trace: empty the trace (call it between loads)
  quit            close the server and exit

SIGUSR1 also prints a snapshot. End of input stops the control channel but
not the server.

Models (--model):
`

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var c serve.Config
	fs.StringVar(&c.Model, "model", "", "the model to run (required; see below)")
	fs.StringVar(&c.Protocol, "protocol", "http", "wire protocol: "+strings.Join(serve.Protocols, " or "))
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:0", "listen address; port 0 picks a free port")
	fs.IntVar(&c.Threads, "threads", 0, fmt.Sprintf("OS threads of the model (meaning per model); 0 for the model's default, max %d", serve.MaxThreads))
	fs.IntVar(&c.Backlog, "backlog", 0, "listen backlog; 0 for the default (4096, capped by net.core.somaxconn)")
	fs.IntVar(&c.GOMAXPROCS, "gomaxprocs", 0, "set GOMAXPROCS; 0 for the CPUs in the affinity mask, or, for a model of a --threads pool of locked threads, a P per thread and a spare if that is more")
	fs.StringVar(&c.CPUs, "cpus", "", "pin the server to these CPUs (cpulist, e.g. 0 or 0-1); empty: no pinning")
	fs.IntVar(&c.MaxPending, "max-pending-output", 0, fmt.Sprintf("response bytes a connection may have unread before the server stops reading it; 0 for %d", serve.DefaultMaxPendingOutput))
	fs.IntVar(&c.MaxPayload, "max-payload", 0, fmt.Sprintf("largest request payload and response size in bytes; 0 for %d", serve.DefaultMaxPayload))
	fs.IntVar(&c.MaxHeader, "max-header", 0, fmt.Sprintf("largest HTTP header section in bytes; 0 for %d", serve.DefaultMaxHeader))
	fs.IntVar(&c.MaxConns, "max-conns", 0, "connections the server holds open at once; past it a new client is refused (status unavailable, HTTP 503, with the reason) and counted as refused; 0 for no cap")
	fs.DurationVar(&c.HeaderTimeout, "header-timeout", serve.DefaultHeaderTimeout, "close a connection whose request stays incomplete this long (a slow or stalled client), counted as header_timeout; 0 disables")
	fs.DurationVar(&c.MaxWork, "max-work", 0, fmt.Sprintf("largest CPU, blocking or timeout value a request may ask for; 0 for %v", serve.DefaultMaxWork))
	fs.IntVar(&c.Accounts, "accounts", 0, fmt.Sprintf("ledger accounts; 0 for %d", serve.DefaultAccounts))
	fs.Int64Var(&c.InitialBalance, "initial-balance", 0, fmt.Sprintf("initial balance of each account; 0 for %d", serve.DefaultInitialBalance))
	fs.Float64Var(&c.NsPerIter, "ns-per-iter", 0, "CPU-work calibration to use instead of measuring one (ns per iteration); 0 measures")
	fs.IntVar(&c.Trace, "trace", 0, fmt.Sprintf("record each request's service start and end (CLOCK_MONOTONIC) for up to N requests, read with the control command trace; 0 (default) off, max %d; not the Active Object model", serve.MaxTrace))

	c.Models = serve.RegisterModels(fs)
	if err := cli.Parse(fs, args, stdout, serveUsage+serve.ModelList()+"\nFlags:\n"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q (flags only)", fs.Arg(0))
	}
	c.Given = cli.Set(fs)
	return serve.Run(ctx, c, stdin, stdout, stderr)
}
