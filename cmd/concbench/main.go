// Command concbench runs the concurrency-model benchmark suite.
//
// Usage:
//
//	concbench serve --model M [flags]   run one model as a server, with a control channel
//	concbench load --addr A [flags]     drive a server with open- or closed-loop load
//	concbench agent --listen A --token T  run a share of a coordinator's load (load --agents A,…)
//	concbench bench [--profile P]       run an experiment, then render its figures and report
//	concbench figures --run DIR         render a run folder's figures and report
//	concbench gate --base REV           the CI performance-regression gate (exit 0 pass, 1 regression, 2 undecided)
//	concbench validate [flags]          check the measurement chain against queueing theory (exit 0 validated, 3 not validated)
//	concbench theory [--servers c]      M/G/c against c × M/G/1: p50/p99 by simulation and closed form, and any crossover
//	concbench compare RUN_A RUN_B       compare two runs: B/A per configuration and metric, with intervals
//	concbench gaterate [--runs N]       the gate's error rates over repeated gate runs (--runs 0: recount)
//	concbench aarate [--runs N]         the who-wins table's false-decision rate over A/A runs (--runs 0: recount)
//	concbench agree RUN RUN [RUN…]      check that independent runs of one experiment agree, cell by cell
//	concbench priority [label=flags …]  a high-priority stream's p99 under a growing low-priority flood
//	concbench hostile label=flags …     what hostile clients (amplification, slow headers) cost a server
//	concbench soak [--requests N]       millions of verified requests per model, connections killed, money conserved
//	concbench stages [--configs C,…]    where each server's time goes per request, beside nginx: CPU, switches, stages
//	concbench version                   the commit, Go version and build settings of this binary
//	concbench help [command]            describe a command
//
// Run "concbench help serve" for the server's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"concbench/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "concbench:", err)
		}
		os.Exit(cli.ExitCode(err))
	}
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands lists the subcommands; help and its aliases are handled by run.
var commands = []command{
	{name: "serve", summary: "run one concurrency model as a server, with a control channel on stdin/stdout", run: runServe},
	{name: "bench", summary: "run an experiment: every model, capacity and load points, repetitions, server costs, then figures and report (see help bench)", run: runBench},
	{name: "figures", summary: "render a run folder: figures (svg/pdf/png/tex + CSV each), points.csv, bench.txt (benchstat), report.md and report.html", run: runFigures},
	{name: "gate", summary: "the CI performance-regression gate: the current tree against a base commit (same job) or the committed baseline; exit 0 pass, 1 regression, 2 undecided", run: runGate},
	{name: "load", summary: "drive a server with open- or closed-loop load and measure it (latency corrected for coordinated omission)", run: runLoad},
	{name: "agent", summary: "a load-generator agent: runs a share of a coordinator's load (load --agents) and returns its histograms and verdict", run: runAgent},
	{name: "validate", summary: "check the measurement chain against queueing theory (M/M/1, M/D/1; --threads c: M/M/c) on the effective service time from measured inputs, the plain M/G/1 beside it, and decompose each response time; exit 0 validated, 3 not validated", run: runValidate},
	{name: "theory", summary: "queueing theory for many servers: c servers sharing one queue (M/G/c) against c partitioned ones (c × M/G/1), p50 and p99, simulated beside the closed forms, and any crossover", run: runTheory},
	{name: "compare", summary: "compare two run folders configuration by configuration: B/A per metric with a 95% interval and p-value, and a verdict line each", run: runCompare},
	{name: "priority", summary: "a high-priority stream's p99 under a growing low-priority flood, per server configuration (with and without priority): a table and a figure", run: runPriority},
	{name: "soak", summary: "per configuration, millions of verified requests of a mixed workload, connections killed at random, the ledger's money checked to the unit: nothing lost, nothing duplicated (make soak)", run: runSoak},
	{name: "stages", summary: "where each server's time goes per request, beside real nginx on the same CPU: CPU and context switches by thread, perf's samples by stage (kernel TCP, system calls, io_uring, scheduler, the runtime, the server's packages)", run: runStages},
	{name: "hostile", summary: "what hostile clients cost each server configuration: memory amplification by clients that never read, slow headers", run: runHostile},
	{name: "gaterate", summary: "the gate's error rates: run the gate N times, with or without an injected regression, and count its verdicts (Clopper–Pearson intervals)", run: runGaterate},
	{name: "aarate", summary: "the who-wins table's false-decision rate: run an experiment with an A/A twin N times and count, per column, the cells that separated the twin from its original (Clopper–Pearson intervals)", run: runAarate},
	{name: "agree", summary: "check that independent runs of one experiment agree: every claim of a decided who-wins cell against the same cell of every other run, and the contradictions", run: runAgree},
	{name: "version", summary: "print the commit this binary was built from, the Go version and the build settings (also: --version)", run: runVersion},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: concbench <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help     describe a command: concbench help <command>")
}

// run is the whole command, testable: it returns instead of exiting.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errors.New("no command given")
	}
	name, rest := args[0], args[1:]
	if name == "--version" || name == "-version" {
		name = "version"
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(rest) == 0 {
			usage(stdout)
			return nil
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, rest, stdin, stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", name)
}
