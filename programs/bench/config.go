package bench

import (
	"strconv"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/internal/cpuset"
	"concbench/programs/loadopt"
)

// Config is a bench invocation: the experiment to start from and the
// fields to override in it. A field overrides the experiment's only if
// Given names its flag.
type Config struct {
	Profile, Experiment, Resume, Out          string
	Models, Fractions, Rates, Conns, Protocol string
	RatesFromSlowest                          string
	CPU, ServerCPUs, LoadCPUs, ServerBinary   string
	Twin                                      string
	Reps, GOMAXPROCS, SLOProbes, Mechanisms   int
	Duration, Warmup, MechanismsDuration      time.Duration
	SLO, SLOWarmup, SLODuration, Budget       time.Duration
	SLOPercentile, ServerCPUQuota             float64
	Seed                                      uint64
	Print, NoFigures, RelaxLoadChecks         bool
	Validate                                  time.Duration // the measurement chain's window; 0 skips it
	Agents                                    loadopt.Agents
	Given                                     map[string]bool // the flags given on the command line
}

// Defaults returns the Config of an unset command line: the default
// profile's values, which the flags show as their defaults.
func Defaults() Config {
	def, _ := harness.Profile("default")
	w0 := def.Workloads[0]
	return Config{
		Profile: "default", Out: "out", Twin: twinDefault(def),
		Reps: def.Repetitions, Budget: time.Duration(def.Budget),
		Fractions: cli.JoinFloats(def.Fractions), RatesFromSlowest: cli.JoinFloats(def.RatesFromSlowest),
		Duration: time.Duration(def.Duration), Warmup: time.Duration(def.Warmup),
		SLOPercentile: harness.DefaultSLOPercentile, SLOProbes: harness.DefaultSLOProbes,
		SLOWarmup: harness.DefaultSLOWarmup, SLODuration: harness.DefaultSLODuration,
		Mechanisms: def.Mechanisms, MechanismsDuration: harness.DefaultMechanismsDuration,
		Conns: strconv.Itoa(w0.Conns), Protocol: w0.Protocol, CPU: w0.CPU, Seed: def.Seed,
		Validate: 10 * time.Second, Agents: loadopt.Agents{Lead: loadopt.DefaultLead},
	}
}

// CPUSplit returns the server's and the load generator's CPUs that a
// run on this machine takes when none are given (harness.SplitCPUs of
// this process's CPUs); empty with fewer than 2 CPUs: both unpinned.
func CPUSplit() (server, load string) {
	cur, err := cpuset.Current()
	if err != nil {
		return "", ""
	}
	s, l := harness.SplitCPUs(cur)
	return s.String(), l.String()
}

// twinDefault is --twin's default: the profile's twin, or none.
func twinDefault(e harness.Experiment) string {
	if e.Twin == nil {
		return "none"
	}
	return e.Twin.Of
}
