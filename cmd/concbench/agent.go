package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"concbench/internal/cli"
	"concbench/programs/agent"
	"concbench/programs/loadopt"
)

const agentUsage = `usage: concbench agent --listen HOST:PORT --token T [--allow ADDR/CIDR,…] [--cpus LIST]

Runs a load-generator agent: it waits for a coordinator ("concbench load
--agents …") that presents the same token, receives its share of the run
(connections, rate, the common start time), runs it against the server and
returns what it measured: its HDR histograms and its verdict. It refuses a
coordinator with another token, and any target outside --allow (default:
loopback only). One run at a time; it serves coordinators until stopped.
Start it on each load host with ssh or your orchestrator; it is one binary
with flags. The control connection is not encrypted: use it on a network
you trust, or tunnel the port (ssh -L). See package loadgen/agent for the
protocol.

Examples:
  concbench agent --listen 0.0.0.0:7070 --token "$TOKEN" --allow 10.0.0.1 --cpus 1
  ssh h1 concbench agent --listen :7070 --token "$TOKEN" --allow 10.0.0.0/24

Flags:
`

func runAgent(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var c agent.Config
	fs.StringVar(&c.Listen, "listen", "", "the control address to listen on, host:port (required; port 0: any, printed)")
	fs.StringVar(&c.Token, "token", "", "the shared token a coordinator must present (required; default: $CONCBENCH_AGENT_TOKEN, which keeps it out of ps)")
	fs.StringVar(&c.Allow, "allow", "", "the addresses and CIDR prefixes a target may have, comma-separated (default: loopback only, 127.0.0.0/8 and ::1)")
	fs.StringVar(&c.CPUs, "cpus", "", "pin the agent to these CPUs (cpulist, e.g. 1 or 2-3; default: no pinning)")
	if err := cli.Parse(fs, args, stdout, agentUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("agent: unexpected argument %q (flags only)", fs.Arg(0))
	}
	return agent.Run(ctx, c, stdout, stderr)
}

// agentFlags registers the flags by which bench and gate generate their
// load through agents (loadopt.FlagNames must name them all).
func agentFlags(fs *flag.FlagSet, a *loadopt.Agents) {
	fs.StringVar(&a.Agents, "agents", "", "run each point's load through these agents (host:port,…; each a \"concbench agent\") instead of this process")
	fs.StringVar(&a.Token, "agent-token", "", "the token the agents were started with (default: $CONCBENCH_AGENT_TOKEN)")
	fs.DurationVar(&a.Lead, "agent-lead", loadopt.DefaultLead, "with --agents: how far ahead of each point's run message its common start lies")
	fs.StringVar(&a.ServerAddr, "server-addr", "", "the address the server listens on, IP:port (default: loopback, 127.0.0.1:0); with agents on other hosts one they reach")
	fs.BoolVar(&a.KeepKernelThreads, "keep-kernel-threads", false, "leave the kernel threads that stall a CPU for milliseconds at a fixed period (DAMON's kdamond) as they are; by default the run gives them SCHED_IDLE while it lasts (as root) and restores them after")
}
