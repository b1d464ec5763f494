package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/soak"
)

const soakUsage = `usage: concbench soak [flags]

Runs each configuration (--models; default: one per model, as the
comparison has them, and the front end in front of a netpoll back end)
on a fresh server, sized by the rule and pinned to --server-cpus, under
a long mixed workload, and checks that nothing is lost: --requests
requests, closed loop over --conns connections, --outstanding in flight
on each in pipelined batches of --depth, with CPU work (--cpu), bodies
of every size (--size) and the ledger's balances, deposits, guarded
withdrawals (--withdraw-wait), transfers and totals (--ops) on a ledger
of --accounts accounts of --initial-balance.

Every response is verified: its id and order, its checksum, an OpWork
body byte for byte, a ledger answer a balance, and a total within what
the deposits and withdrawals acknowledged around it allow. About every
--kill-every responses the generator kills one of its connections (a
reset) and opens it again; a connection chosen to die first waits until
it has no deposit, withdrawal or transfer in flight, so that every
money operation has a known outcome, and the requests it abandons are
counted, never as lost or failed. At the end the ledger's total (read
before and after the run) must have moved by exactly the acknowledged
deposits minus the acknowledged withdrawals.

Prints a progress line every --progress, then a table, one row per
configuration:
  requests    requests sent
  ok          answered correctly: ok, or the ledger's normal refusal
              (insufficient funds, a guarded withdrawal's timeout)
  errors      answered with another status (503, 500, …), or failed
              otherwise (connect, a response to no request)
  mismatches  answered with another id, out of order, a bad checksum, a
              wrong body or balance, a total out of its bounds
  duplicates  a second answer to a request answered already
  lost        sent and never answered (a timeout, a reset, a response
              that does not decode)
  abandoned   cut off by a kill
  reconnects  connections opened again (the kills', and any other)
  money       expected (the total before plus the acknowledged flow)
              and found (the total after)
A configuration passes with no errors, mismatches, duplicates or lost
requests, every money operation's outcome known, the money found equal
to the money expected, and a clean server stop. The exit status is 1 if
any fails; a model this machine cannot run (the Proactor without
io_uring) is reported unavailable, with its reason, and fails nothing.

  concbench soak                          (make soak: 10^7 requests per configuration)
  concbench soak --requests 100000 --models frontend/bound/m=2

Flags:
`

func runSoak(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c, err := parseSoakFlags(args, stdout)
	if err != nil {
		return err
	}
	return soak.Run(ctx, c, stdout, stderr)
}

// parseSoakFlags reads the command line into a soak's settings.
func parseSoakFlags(args []string, stdout io.Writer) (soak.Config, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	c, def := soak.Default(), soak.Default()
	var models string
	fs.StringVar(&c.ServerBinary, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&models, "models", "", "comma-separated configurations, by name (leaderfollowers/lifo, "+soak.Chain+") or by model; default: one per model and "+soak.Chain)
	fs.Int64Var(&c.Requests, "requests", def.Requests, "requests per configuration")
	fs.StringVar(&c.Protocol, "protocol", def.Protocol, "wire protocol: http or binary")
	fs.IntVar(&c.Conns, "conns", def.Conns, "connections")
	fs.IntVar(&c.Depth, "depth", def.Depth, "pipelining depth: requests written together per batch")
	fs.IntVar(&c.Outstanding, "outstanding", def.Outstanding, "requests in flight per connection")
	fs.StringVar(&c.CPU, "cpu", def.CPU, "CPU work per request (distribution of durations)")
	fs.StringVar(&c.Block, "block", def.Block, "blocking work per request (distribution of durations)")
	fs.StringVar(&c.Size, "size", def.Size, "OpWork response bytes (distribution): bodies over 4 KiB are streamed")
	fs.StringVar(&c.Ops, "ops", def.Ops, "operation mix: op=weight,… over work, balance, deposit, withdraw, transfer, total")
	fs.IntVar(&c.Accounts, "accounts", def.Accounts, "ledger accounts (the server's --accounts)")
	fs.Int64Var(&c.InitialBalance, "initial-balance", def.InitialBalance, "each account's initial balance (the server's --initial-balance): small, so that withdrawals wait")
	fs.Int64Var(&c.Amount, "amount", def.Amount, "what each deposit, withdrawal and transfer moves")
	fs.DurationVar(&c.WithdrawWait, "withdraw-wait", def.WithdrawWait, "how long a withdrawal waits for funds (the guarded withdrawal's timeout)")
	fs.IntVar(&c.KillEvery, "kill-every", def.KillEvery, "kill a connection about every this many responses (0: never)")
	fs.DurationVar(&c.Timeout, "timeout", def.Timeout, "a request unanswered this long after its send is lost")
	fs.DurationVar(&c.Progress, "progress", def.Progress, "how often a progress line is printed (0: never)")
	fs.Uint64Var(&c.Seed, "seed", def.Seed, "seed of the request mix and the kills")
	fs.StringVar(&c.ServerCPUs, "server-cpus", "", "CPUs the server is pinned to and sized for (default: the first half of this process's)")
	fs.StringVar(&c.LoadCPUs, "load-cpus", "", "CPUs the load generator is pinned to (default: the rest)")
	if err := cli.Parse(fs, args, stdout, soakUsage); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("soak: unexpected argument %q (flags only)", fs.Arg(0))
	}
	var err error
	c.Configs, err = soak.Configs(models)
	return c, err
}
