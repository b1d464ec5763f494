package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"concbench/internal/cli"
	"concbench/queueing"
)

const theoryUsage = `usage: concbench theory [flags]

Queueing theory for many servers, no measurement: c servers sharing one
first-come-first-served queue — M/G/c, the shared handle set of
Leader/Followers — against c servers with a queue each — a partitioned
server, each connection bound to one worker, c × M/G/1 — at the same
utilization, for service-time distributions of the same mean (--dist). The
partitioned queues are split two ways: at random (each queue gets a
Poisson stream at λ/c) and round-robin (each gets every c-th arrival:
Erlang-c interarrival times, c × E_c/G/1), which is what a load
generator dealing its requests round-robin to connections bound to the
workers makes of a Poisson stream.

For each distribution and utilization it prints p50 and p99 of each
queue, simulated (seeded; --requests each after as many of warm-up),
with the closed form in parentheses where one exists: M/M/c (Erlang C)
for exponential service, c × M/M/1 and c × E_c/M/1 likewise, c × M/D/1
(Erlang) for a constant one, and none for M/G/c (there is none); then
the ratios partitioned ÷ shared, and whether they cross 1 as the
utilization grows (a crossover: a ratio below 0.98 at some ρ and above
1.02 at another, ±2% being the simulation's precision). --overhead adds
a fixed per-request cost to the shared queue's service alone (its
coordination: a promotion, a lock), which can make the partitioned
queues win at low load.

Flags:
`

func runTheory(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("theory", flag.ContinueOnError)
	c, def := queueing.DefaultTheory(), queueing.DefaultTheory()
	var rhos, dists string
	fs.IntVar(&c.Servers, "servers", def.Servers, "c, the servers (1..256)")
	fs.StringVar(&rhos, "rho", cli.JoinFloats(def.Rhos), "utilizations λE[S]/c, comma-separated, each in (0, 1)")
	fs.StringVar(&dists, "dist", strings.Join(def.Dists, ","), "service-time distributions, comma-separated: const, exp, lognormal:SIGMA, bimodal:P:RATIO (short with probability P, else RATIO × short)")
	fs.DurationVar(&c.Mean, "mean", def.Mean, "the mean service time of every distribution")
	fs.DurationVar(&c.Overhead, "overhead", def.Overhead, "a fixed per-request cost the shared queue pays on top of the service, the partitioned ones not")
	fs.IntVar(&c.Requests, "requests", def.Requests, "requests simulated per queue and cell, after as many of warm-up (1000..10000000)")
	fs.Uint64Var(&c.Seed, "seed", def.Seed, "seed of the simulations")
	if err := cli.Parse(fs, args, stdout, theoryUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("theory: unexpected argument %q (flags only)", fs.Arg(0))
	}
	var err error
	if c.Rhos, err = cli.ParseFloats(rhos); err != nil {
		return fmt.Errorf("theory: --rho: %w", err)
	}
	c.Dists = strings.Split(dists, ",")
	return queueing.Theory(c, stdout)
}
