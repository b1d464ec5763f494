package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

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
	if err := parseFlags(fs, args, stdout, agentUsage); err != nil {
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
	if err := pinCPUs("agent", cpus, 0); err != nil {
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
