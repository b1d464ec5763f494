package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/loadgen/agent"
)

// Config is an agent's settings.
type Config struct {
	Listen string // the control address, host:port
	Token  string // the token a coordinator must present; empty: $CONCBENCH_AGENT_TOKEN
	Allow  string // addresses and CIDR prefixes a target may have, comma-separated; empty: loopback
	CPUs   string // cpulist to pin the agent to; empty: no pinning
}

// Run serves coordinators until ctx ends; the listening address goes to
// stdout, a log line per event to stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if cfg.Listen == "" {
		return errors.New("agent: --listen is required")
	}
	token := cfg.Token
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
	if cfg.Allow != "" {
		var err error
		if a.Allow, err = agent.ParseAllow(cfg.Allow); err != nil {
			return fmt.Errorf("agent: --%w", err)
		}
	}
	if err := cli.PinCPUs("agent", cfg.CPUs, 0); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
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
