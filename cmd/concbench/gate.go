package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/programs/gate"
)

var gateUsage = expand(`usage: concbench gate --base REV [flags]      a base revision against the current tree
       concbench gate --reference [flags]     the revision named in results/baseline/reference against it (CI)
       concbench gate --run DIR               judge a gate run folder again (nothing is measured)

The CI performance-regression gate. It builds the base revision in a
temporary git worktree and the current tree, and measures both in one job
on this machine with the harness's "gate" profile
({gate.configs}; capacity, and
open-loop points at {gate.fractions} of the BASE's capacity for both
sides: equal load), interleaved and counterbalanced (base head, head
base, …), from one load generator in this process. Nothing measured
on another machine is compared.

  --base REV       the base: a commit, a branch, HEAD (your uncommitted
                   changes against the last commit), or a merge base.
  --reference      the base is the revision named in results/baseline/reference
                   (what make gate-ci and .ci/run use; see gate/doc.go).

Every configuration × load × metric is a row: allocations and bytes per
request strictly (a fixed bound on the change of the medians), context
switches per request within a tolerance that scales with the base's value,
throughput, server CPU per request and latency percentiles by a
Mann–Whitney U test that must be significant after Holm's correction over
all of the run's U tests (a family-wise error rate of 5%) AND show a
minimum effect; and the points the server failed (died, failed
verification, fell behind the equal load) — any more of them on the head
side is a regression. Only changes in the bad direction fail;
improvements are reported. Points whose load-generator verdict on itself
is invalid are left out of every sample (and listed); a row with fewer
than --min-samples valid samples on a side is undecided.

The report (Markdown, benchstat's manner, for a pull-request comment) goes
to standard output and, with the JSON verdict, into the run folder
(gate.md, gate.json) and to --md and --json. Progress goes to standard
error.

--agents host:port,… (with --agent-token, and --server-addr where the
agents reach the servers) generates both sides' load through "concbench
agent"s, as bench --agents does (see "help bench"); the report says so.

Exit status: 0 pass, 1 regression, 2 the gate could not decide (a build
failed, a run folder cannot be read, too few valid samples, a model
unavailable on one side, the run was interrupted, bad flags) — never a
silent pass. .ci/run measures once more when the gate cannot decide, and
then passes with a warning (see gate/doc.go).

Flags:
`, gateValues())

// gateValues are the gate profile's configurations and loads, as the
// usage quotes them.
func gateValues() map[string]string {
	p, _ := harness.Profile("gate")
	var names, loads []string
	for _, c := range p.Configs {
		names = append(names, c.Name)
	}
	for _, f := range p.Fractions {
		loads = append(loads, strconv.FormatFloat(100*f, 'g', -1, 64)+"%")
	}
	and := func(s []string) string {
		if len(s) < 2 {
			return strings.Join(s, "")
		}
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return map[string]string{"gate.configs": and(names), "gate.fractions": and(loads)}
}

func runGate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	c := gate.Defaults()
	fs.StringVar(&c.Base, "base", "", "the base git revision (e.g. HEAD, origin/main, a merge base), built in a temporary worktree and measured in the same job")
	fs.BoolVar(&c.Reference, "reference", false, "the base is the revision named in "+gate.ReferenceFile+" (make gate-ci)")
	fs.StringVar(&c.Run, "run", "", "judge this existing gate run folder instead of measuring (with --baseline: against the baseline)")
	fs.StringVar(&c.BaseBinary, "base-binary", "", "a concbench built from the base, instead of --base (e.g. built elsewhere)")
	fs.StringVar(&c.HeadBinary, "head-binary", "", "a concbench built from the current tree, instead of building it (by default the gate builds it, with the same flags as the base)")
	fs.StringVar(&c.HeadTags, "head-tags", "", "build tags for the current tree's build: concbench_regress_<alloc|cpu|handoff|stall> injects a regression into leaderfollowers (the gate's self-tests; one at a time)")
	fs.StringVar(&c.MD, "md", "", "also write the Markdown report to this file")
	fs.StringVar(&c.JSON, "json", "", "also write the JSON verdict to this file")
	fs.StringVar(&c.Out, "out", c.Out, "the folder under which the run folder gate-<UTC time> is made")
	fs.StringVar(&c.Models, "models", "", "comma-separated configurations, by name or model (default: the gate profile's)")
	fs.IntVar(&c.Reps, "reps", c.Reps, "repetitions per side (the profile's)")
	fs.IntVar(&c.Conns, "conns", c.Conns, "connections (the profile's)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "measured window of every point (the profile's)")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "warm-up before every window (the profile's)")
	fs.Int64Var(&c.CapacityRequests, "capacity-requests", 0, "measure each capacity point over this many requests instead of --duration (0: --duration); the allocation rows need "+strconv.Itoa(gate.AllocRequests))
	fs.IntVar(&c.MinSamples, "min-samples", c.MinSamples, "valid samples per side a gated row needs (fewer: undecided)")
	agentFlags(fs, &c.Agents)
	fs.BoolVar(&c.RelaxLoadChecks, "relax-load-checks", false, "turn off the load generator's checks on its own health (only for tests on a machine busy with other work; the report says so)")
	if err := cli.Parse(fs, args, stdout, gateUsage); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cli.Exit(2, err)
	}
	if fs.NArg() > 0 {
		return cli.Exit(2, fmt.Errorf("gate: unexpected argument %q (flags only)", fs.Arg(0)))
	}
	c.Given = cli.Set(fs)
	return gate.Run(ctx, c, stdout, stderr)
}
