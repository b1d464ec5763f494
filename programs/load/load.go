package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"concbench/internal/cli"
	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/loadgen/agent"
	"concbench/results"
)

// Config is a load invocation: the generator's settings that map onto
// loadgen.Config's fields directly (Gen), and those it parses.
type Config struct {
	Gen                               loadgen.Config
	CPU, Block, Size, Prio            string // distributions (loadgen.ParseDurationDist, ParseIntDist)
	PrioClasses, Ops, Arrival, Verify string
	Poll                              string // busy or sleep; empty: busy with CPUs, else sleep
	CPUs                              string // cpulist to pin the generator to; empty: none
	JSON                              string // write the result here (- for stdout); empty: none
	AllowInvalid                      bool   // exit 0 on an invalid verdict
	Agents, AgentToken                string // coordinate these agents instead of generating load here
	AgentLead                         time.Duration
	Given                             map[string]bool // the flags given on the command line
}

// Defaults returns the Config of an unset command line: the defaults for
// driving a server by hand.
func Defaults() Config {
	return Config{
		Gen: loadgen.Config{Protocol: "http", Conns: loadgen.DefaultConns, Workers: 1, Depth: 1,
			MaxInFlight: loadgen.DefaultMaxInFlight, Duration: 10 * time.Second, Warmup: time.Second,
			Timeout: loadgen.DefaultTimeout, Amount: 1, Seed: 1,
			HistLowest: loadgen.DefaultHistLowest, HistHighest: loadgen.DefaultHistHighest, HistDigits: loadgen.DefaultHistDigits,
			HlogInterval: loadgen.DefaultHlogInterval, Limits: loadgen.Limits{MaxLagShare: loadgen.DefaultLimits.MaxLagShare}},
		CPU: "0", Block: "0", Size: "0", Prio: "0", Ops: "work=1",
		Arrival: string(loadgen.Poisson), Verify: string(loadgen.VerifyFull), AgentLead: agent.DefaultLead,
	}
}

// Run runs the load f describes and prints its summary to stdout (to
// stderr with JSON "-"). An invalid verdict is an error with exit
// status 3 unless AllowInvalid.
func Run(ctx context.Context, f Config, stdout, stderr io.Writer) error {
	cfg, set := f.Gen, f.Given
	if cfg.Requests > 0 && !set["duration"] {
		cfg.Duration = 0
	}
	// loadgen.Config reads 0 as "the default" in these fields; from the
	// command line a 0 (or less) is a mistake, not a request for the
	// default, and must not run as one.
	for _, c := range []struct {
		name string
		v    int
	}{{"conns", cfg.Conns}, {"workers", cfg.Workers}, {"depth", cfg.Depth}, {"max-in-flight", cfg.MaxInFlight}} {
		if set[c.name] && c.v < 1 {
			return fmt.Errorf("load: --%s %d out of range (accepted: 1 or more)", c.name, c.v)
		}
	}
	cfg.Arrival = loadgen.Arrival(f.Arrival)
	cfg.Poll = loadgen.Poll(f.Poll)
	if f.Poll == "" {
		// A generator pinned to CPUs of its own busy-polls: a thread woken
		// by a timer arrives late on a VM whose idle vCPUs halt (loadgen's
		// "Keeping the schedule").
		cfg.Poll = loadgen.PollSleep
		if f.CPUs != "" {
			cfg.Poll = loadgen.PollBusy
		}
	}
	cfg.Verify = loadgen.VerifyMode(f.Verify)
	var err error
	for _, d := range []struct {
		name  string
		val   string
		dst   *loadgen.Dist
		parse func(string) (loadgen.Dist, error)
	}{
		{"cpu", f.CPU, &cfg.CPU, loadgen.ParseDurationDist},
		{"block", f.Block, &cfg.Block, loadgen.ParseDurationDist},
		{"size", f.Size, &cfg.Size, loadgen.ParseIntDist},
		{"prio", f.Prio, &cfg.Priority, loadgen.ParseIntDist},
	} {
		if *d.dst, err = d.parse(d.val); err != nil {
			return fmt.Errorf("load: --%s: %w", d.name, err)
		}
	}
	if cfg.PriorityClasses, err = loadgen.ParsePriorityClasses(f.PrioClasses); err != nil {
		return fmt.Errorf("load: --prio-classes: %w", err)
	}
	if cfg.Ops, err = loadgen.ParseOpMix(f.Ops); err != nil {
		return fmt.Errorf("load: --ops: %w", err)
	}
	if f.CPUs != "" {
		cpus, err := cpuset.Parse(f.CPUs)
		if err != nil {
			return fmt.Errorf("load: --cpus: %w", err)
		}
		// The harness's placement (loadgen.Placement): a CPU of its own
		// per worker, the first CPU left to the process's other threads.
		n, pinned := loadgen.Placement(cpus, max(cfg.Conns, 1))
		if !set["workers"] {
			cfg.Workers = n
		}
		if cfg.Workers <= len(pinned) {
			cfg.WorkerCPUs = pinned
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if f.Agents != "" {
		return runAgents(ctx, cfg, &f, stdout, stderr)
	}
	if err := cli.PinCPUs("load", f.CPUs, 0); err != nil {
		return err
	}
	// Ps beyond the workers', as the harness does (loadgen.Procs): a
	// locked worker must not wait for its P to come back from the
	// process's other goroutines or the collector.
	if p := loadgen.Procs(cfg.Workers); runtime.GOMAXPROCS(0) < p {
		runtime.GOMAXPROCS(p)
	}

	res, runErr := loadgen.Run(ctx, cfg)
	if res == nil {
		return fmt.Errorf("load: %w", runErr)
	}
	return finish(&f, stdout, stderr, res, res, nil, runErr)
}

// finish prints res's summary (then more's lines, if set) and writes
// out, the whole result, as JSON asks; it returns load's error: runErr,
// or exit status 3 for an invalid verdict without AllowInvalid.
func finish(f *Config, stdout, stderr io.Writer, res *loadgen.Result, out any, more func(io.Writer), runErr error) error {
	summary := stdout
	if f.JSON == "-" {
		summary = stderr
	}
	if err := res.WriteText(summary); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if more != nil {
		more(summary)
	}
	if f.JSON != "" {
		if err := results.WriteJSON(f.JSON, stdout, out); err != nil {
			return fmt.Errorf("load: --json: %w", err)
		}
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("load: %w", runErr)
	case !f.AllowInvalid && !res.Valid:
		return cli.Exit(3, fmt.Errorf("load: invalid run: %s", strings.Join(res.Reasons, "; ")))
	}
	return nil
}

// agentMaxUncertainty bounds the agents' clock uncertainty (0: the
// coordinator's default, agent.DefaultMaxUncertainty). A variable for the
// tests, whose loaded machine may delay a pong past the default.
var agentMaxUncertainty time.Duration

// runAgents is load over agents: the run coordinated over them, its
// merged result printed and written as load's own.
func runAgents(ctx context.Context, cfg loadgen.Config, f *Config, stdout, stderr io.Writer) error {
	if f.CPUs != "" {
		return errors.New("load: --cpus with --agents: the coordinator generates no load; pin each agent with its own --cpus")
	}
	token := f.AgentToken
	if token == "" {
		token = os.Getenv("CONCBENCH_AGENT_TOKEN")
	}
	if token == "" {
		return errors.New("load: --agents needs --agent-token (or $CONCBENCH_AGENT_TOKEN): the token the agents were started with")
	}
	var addrs []string
	for _, a := range strings.Split(f.Agents, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	co := &agent.Coordinator{Agents: addrs, Token: token, Lead: f.AgentLead, MaxUncertainty: agentMaxUncertainty,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", args...) }}
	res, runErr := co.Run(ctx, cfg)
	if res == nil {
		return fmt.Errorf("load: %w", runErr)
	}
	return finish(f, stdout, stderr, res.Result, res, func(w io.Writer) {
		for _, a := range res.Agents {
			fmt.Fprintf(w, "%s: %d connections, %.0f req/s asked; clock offset %s ± %s, window started %s after the common start",
				a.Label, a.Conns, a.RatePerS, loadgen.FormatNs(a.Clock.OffsetNs), loadgen.FormatNs(a.Clock.UncertaintyNs), loadgen.FormatNs(a.StartSkewNs))
			if a.Result != nil {
				fmt.Fprintf(w, "; %s", a.Result)
			}
			if a.Error != "" {
				fmt.Fprintf(w, "; %s", a.Error)
			}
			fmt.Fprintln(w)
		}
	}, runErr)
}
