package loadopt

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"concbench/harness"
	"concbench/loadgen"
	"concbench/loadgen/agent"
)

// Agents are the settings by which bench and gate generate their load
// through agents, and the harness options they give.
type Agents struct {
	Agents            string        // host:port,… of "concbench agent"s; empty: this process
	Token             string        // the agents' token; empty: $CONCBENCH_AGENT_TOKEN
	ServerAddr        string        // where the server listens, IP:port; empty: loopback
	Lead              time.Duration // how far ahead of each point's run message its common start lies
	KeepKernelThreads bool          // leave the kernel threads that stall a CPU as they are
}

// DefaultLead is Agents.Lead's default.
const DefaultLead = agent.DefaultLead

// FlagNames are the flags of Agents' fields: they say how the load is
// generated (the harness's Options), not what is measured, so that
// bench --resume accepts them. They must match the flags cmd/concbench
// registers for them.
var FlagNames = map[string]bool{"agents": true, "agent-token": true, "agent-lead": true, "server-addr": true, "keep-kernel-threads": true}

// Using reports whether the load goes through agents.
func (a *Agents) Using() bool { return a.Agents != "" }

// Options returns the harness options: progress lines to progress, and
// with agents a coordinator running every point's load, each point's
// warnings naming every agent's share, clock offset and window skew.
// cmd names the command in errors.
func (a *Agents) Options(cmd string, progress io.Writer) (harness.Options, error) {
	opt := harness.Options{Progress: progress, ServerAddr: a.ServerAddr, KeepKernelThreads: a.KeepKernelThreads}
	if a.ServerAddr != "" {
		host, _, err := net.SplitHostPort(a.ServerAddr)
		if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || ip.IsUnspecified() {
			return opt, fmt.Errorf("%s: --server-addr %q: want an IP address and port that the load generator reaches (not a wildcard: the agents are given this address)", cmd, a.ServerAddr)
		}
	}
	if a.Agents == "" {
		if a.Token != "" {
			return opt, fmt.Errorf("%s: --agent-token without --agents", cmd)
		}
		return opt, nil
	}
	token := a.Token
	if token == "" {
		token = os.Getenv("CONCBENCH_AGENT_TOKEN")
	}
	if token == "" {
		return opt, fmt.Errorf("%s: --agents needs --agent-token (or $CONCBENCH_AGENT_TOKEN): the token the agents were started with", cmd)
	}
	co := &agent.Coordinator{Token: token, Lead: a.Lead}
	for _, addr := range strings.Split(a.Agents, ",") {
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
