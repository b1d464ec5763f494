package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/loadgen/agent"
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
	var listen, token, allow, cpus string
	fs.StringVar(&listen, "listen", "", "the control address to listen on, host:port (required; port 0: any, printed)")
	fs.StringVar(&token, "token", "", "the shared token a coordinator must present (required; default: $CONCBENCH_AGENT_TOKEN, which keeps it out of ps)")
	fs.StringVar(&allow, "allow", "", "the addresses and CIDR prefixes a target may have, comma-separated (default: loopback only, 127.0.0.0/8 and ::1)")
	fs.StringVar(&cpus, "cpus", "", "pin the agent to these CPUs (cpulist, e.g. 1 or 2-3; default: no pinning)")
	if err := cli.Parse(fs, args, stdout, agentUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("agent: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if listen == "" {
		return errors.New("agent: --listen is required")
	}
	if token == "" {
		token = os.Getenv("CONCBENCH_AGENT_TOKEN")
	}
	if token == "" {
		return errors.New("agent: --token (or $CONCBENCH_AGENT_TOKEN) is required: an agent serves only a coordinator that presents it")
	}
	a := &agent.Agent{Token: token, Allow: agent.Loopback,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(stderr, "%s agent: "+format+"\n", append([]any{time.Now().UTC().Format(time.RFC3339)}, args...)...)
		},
		Run: func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
			// One P more than the workers, as "load" does.
			if w := max(cfg.Workers, 1); runtime.GOMAXPROCS(0) < w+1 {
				runtime.GOMAXPROCS(w + 1)
			}
			return loadgen.Run(ctx, cfg)
		}}
	if allow != "" {
		var err error
		if a.Allow, err = agent.ParseAllow(allow); err != nil {
			return fmt.Errorf("agent: --%w", err)
		}
	}
	if err := cli.PinCPUs("agent", cpus, 0); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	fmt.Fprintf(stdout, "agent listening on %s\n", ln.Addr())
	err = a.Serve(ctx, ln)
	if errors.Is(err, context.Canceled) {
		return nil // stopped by a signal
	}
	return err
}

// agentFlags are the flags by which bench and gate generate their load
// through agents, and the harness options they give.
type agentFlags struct {
	agents, token, serverAddr string
	lead                      time.Duration
	keepKernelThreads         bool
}

// agentFlagNames are agentFlags' flags: they say how the load is
// generated (the harness's Options), not what is measured, so that
// bench --resume accepts them.
var agentFlagNames = map[string]bool{"agents": true, "agent-token": true, "agent-lead": true, "server-addr": true, "keep-kernel-threads": true}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.agents, "agents", "", "run each point's load through these agents (host:port,…; each a \"concbench agent\") instead of this process")
	fs.StringVar(&a.token, "agent-token", "", "the token the agents were started with (default: $CONCBENCH_AGENT_TOKEN)")
	fs.DurationVar(&a.lead, "agent-lead", agent.DefaultLead, "with --agents: how far ahead of each point's run message its common start lies")
	fs.StringVar(&a.serverAddr, "server-addr", "", "the address the server listens on, IP:port (default: loopback, 127.0.0.1:0); with agents on other hosts one they reach")
	fs.BoolVar(&a.keepKernelThreads, "keep-kernel-threads", false, "leave the kernel threads that stall a CPU for milliseconds at a fixed period (DAMON's kdamond) as they are; by default the run gives them SCHED_IDLE while it lasts (as root) and restores them after")
}

// using reports whether the load goes through agents.
func (a *agentFlags) using() bool { return a.agents != "" }

// options returns the harness options: progress lines to progress, and
// with --agents a coordinator running every point's load, each point's
// warnings naming every agent's share, clock offset and window skew.
func (a *agentFlags) options(cmd string, progress io.Writer) (harness.Options, error) {
	opt := harness.Options{Progress: progress, ServerAddr: a.serverAddr, KeepKernelThreads: a.keepKernelThreads}
	if a.serverAddr != "" {
		host, _, err := net.SplitHostPort(a.serverAddr)
		if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || ip.IsUnspecified() {
			return opt, fmt.Errorf("%s: --server-addr %q: want an IP address and port that the load generator reaches (not a wildcard: the agents are given this address)", cmd, a.serverAddr)
		}
	}
	if a.agents == "" {
		if a.token != "" {
			return opt, fmt.Errorf("%s: --agent-token without --agents", cmd)
		}
		return opt, nil
	}
	token := a.token
	if token == "" {
		token = os.Getenv("CONCBENCH_AGENT_TOKEN")
	}
	if token == "" {
		return opt, fmt.Errorf("%s: --agents needs --agent-token (or $CONCBENCH_AGENT_TOKEN): the token the agents were started with", cmd)
	}
	co := &agent.Coordinator{Token: token, Lead: a.lead}
	for _, addr := range strings.Split(a.agents, ",") {
		if addr = strings.TrimSpace(addr); addr != "" {
			co.Agents = append(co.Agents, addr)
		}
	}
	opt.Load = func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error) {
		res, err := co.Run(ctx, cfg)
		if res == nil {
			return nil, err
		}
		for _, a := range res.Agents {
			share := fmt.Sprintf("%d connections", a.Conns)
			if !cfg.Closed {
				share += fmt.Sprintf(" at %.0f req/s", a.RatePerS)
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s, clock offset %s ± %s, window started %s after the common start",
				a.Label, share, loadgen.FormatNs(a.Clock.OffsetNs), loadgen.FormatNs(a.Clock.UncertaintyNs), loadgen.FormatNs(a.StartSkewNs)))
		}
		return res.Result, err
	}
	return opt, nil
}
