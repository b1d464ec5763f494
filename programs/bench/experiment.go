package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/programs/internal/override"
)

// experiment builds the experiment f asks for: the profile (or
// --experiment file) with every flag that was given applied over it.
func experiment(f *Config) (harness.Experiment, error) {
	var exp harness.Experiment
	if f.Experiment != "" {
		if f.Given["profile"] {
			return exp, errors.New("bench: --profile and --experiment both given (accepted: one of them)")
		}
		b, err := os.ReadFile(f.Experiment)
		if err != nil {
			return exp, fmt.Errorf("bench: --experiment: %w", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&exp); err != nil {
			return exp, fmt.Errorf("bench: --experiment %s: %w", f.Experiment, err)
		}
	} else {
		var err error
		if exp, err = harness.Profile(f.Profile); err != nil {
			return exp, fmt.Errorf("bench: --profile: %w", err)
		}
	}
	return apply(exp, f)
}

// apply returns exp with every flag that was given applied over it,
// validated.
func apply(exp harness.Experiment, f *Config) (harness.Experiment, error) {
	set := f.Given
	exp = exp.WithDefaults().WithoutTwinConfig()
	if set["twin"] {
		switch f.Twin {
		case "", "none":
			exp.Twin = nil
		default:
			exp.Twin = &harness.Twin{Of: f.Twin}
		}
	}
	if set["models"] {
		var err error
		if exp.Configs, err = override.Configs(exp.Configs, f.Models); err != nil {
			return exp, err
		}
		if exp.Workloads, err = pruneWorkloads(exp.Workloads, exp.Configs); err != nil {
			return exp, err
		}
		if t := exp.Twin; t != nil && !slices.ContainsFunc(exp.Configs, func(c harness.Config) bool { return c.Name == t.Of }) {
			if set["twin"] {
				return exp, fmt.Errorf("bench: --twin %s: not among the configurations --models keeps", t.Of)
			}
			// The profile's twin repeats its first configuration: so it
			// does of the ones kept.
			exp.Twin = &harness.Twin{Of: exp.Configs[0].Name}
		}
	}
	override.Given(set, "reps", &exp.Repetitions, f.Reps)
	override.Given(set, "budget", &exp.Budget, harness.Duration(f.Budget))
	for _, fl := range []struct {
		name, value string
		to          *[]float64
		blank       bool // an empty list is none
	}{
		{"fractions", f.Fractions, &exp.Fractions, false},
		{"rates", f.Rates, &exp.Rates, true},
		{"rates-from-slowest", f.RatesFromSlowest, &exp.RatesFromSlowest, true},
	} {
		if !set[fl.name] {
			continue
		}
		if fl.blank && strings.TrimSpace(fl.value) == "" {
			*fl.to = nil
			continue
		}
		xs, err := cli.ParseFloats(fl.value)
		if err != nil {
			return exp, fmt.Errorf("bench: --%s: %w", fl.name, err)
		}
		*fl.to = xs
	}
	if set["mechanisms"] {
		exp.Mechanisms = f.Mechanisms
	} else if len(exp.RatesFromSlowest) == 0 {
		exp.Mechanisms = 0 // the profile's follow its equal-load points, and --rates-from-slowest removed them
	}
	override.Given(set, "duration", &exp.Duration, harness.Duration(f.Duration))
	override.Given(set, "warmup", &exp.Warmup, harness.Duration(f.Warmup))
	if set["cpu"] {
		for i := range exp.Workloads {
			exp.Workloads[i].CPU = f.CPU
		}
	}
	if set["conns"] || set["protocol"] {
		var err error
		if exp.Workloads, err = sweep(exp.Workloads[0], f); err != nil {
			return exp, err
		}
	}
	if set["slo"] || set["slo-percentile"] {
		for i := range exp.Workloads {
			w := &exp.Workloads[i]
			switch {
			case set["slo"] && f.SLO == 0:
				w.SLO = nil
			case set["slo"]:
				w.SLO = &harness.SLO{Percentile: f.SLOPercentile, Bound: harness.Duration(f.SLO)}
			case w.SLO != nil:
				c := *w.SLO
				c.Percentile = f.SLOPercentile
				w.SLO = &c
			}
		}
	}
	exp = exp.WithDefaults() // the search's defaults, if --slo added an objective
	override.Given(set, "slo-probes", &exp.SLOProbes, f.SLOProbes)
	override.Given(set, "slo-warmup", &exp.SLOWarmup, harness.Duration(f.SLOWarmup))
	override.Given(set, "slo-duration", &exp.SLODuration, harness.Duration(f.SLODuration))
	override.Given(set, "mechanisms-duration", &exp.MechanismsDuration, harness.Duration(f.MechanismsDuration))
	if set["gomaxprocs"] {
		for i := range exp.Configs {
			exp.Configs[i].GOMAXPROCS, exp.Configs[i].GOMAXPROCSPerConn = f.GOMAXPROCS, false
		}
	}
	override.Given(set, "server-cpus", &exp.ServerCPUs, f.ServerCPUs)
	override.Given(set, "load-cpus", &exp.LoadCPUs, f.LoadCPUs)
	override.Given(set, "server-cpu-quota", &exp.ServerCPUQuota, f.ServerCPUQuota)
	override.Given(set, "server-binary", &exp.ServerBinary, f.ServerBinary)
	override.Given(set, "seed", &exp.Seed, f.Seed)
	if f.RelaxLoadChecks {
		exp.LoadLimits = loadgen.RelaxedLimits
	}
	if err := exp.Validate(); err != nil {
		return exp, fmt.Errorf("bench: %w", err)
	}
	return exp, nil
}

// pruneWorkloads drops from every workload's configuration list
// (harness.Workload.Configs) the configurations that --models did not
// keep, and drops a workload none of whose listed configurations is kept.
func pruneWorkloads(ws []harness.Workload, cs []harness.Config) ([]harness.Workload, error) {
	var out []harness.Workload
	for _, w := range ws {
		if len(w.Configs) == 0 {
			out = append(out, w)
			continue
		}
		var keep []string
		for _, name := range w.Configs {
			if slices.ContainsFunc(cs, func(c harness.Config) bool { return c.Name == name }) {
				keep = append(keep, name)
			}
		}
		if len(keep) > 0 {
			w.Configs = keep
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: --models: no workload of the profile runs any of the configurations selected")
	}
	return out, nil
}

// sweep returns the workloads of the --conns × --protocol lists, the
// other fields from base; each is named when there are several.
func sweep(base harness.Workload, f *Config) ([]harness.Workload, error) {
	conns := []int{base.Conns}
	if f.Given["conns"] {
		conns = nil
		for _, s := range strings.Split(f.Conns, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("bench: --conns: %q is not a number of connections", s)
			}
			conns = append(conns, n)
		}
	}
	protos := []string{base.Protocol}
	if f.Given["protocol"] {
		protos = nil
		for _, p := range strings.Split(f.Protocol, ",") {
			protos = append(protos, strings.TrimSpace(p))
		}
	}
	var out []harness.Workload
	for _, p := range protos {
		for _, n := range conns {
			w := base
			w.Protocol, w.Conns, w.Name = p, n, ""
			out = append(out, w)
		}
	}
	if len(out) > 1 {
		for i := range out {
			var parts []string
			if len(protos) > 1 {
				parts = append(parts, out[i].Protocol)
			}
			if len(conns) > 1 {
				parts = append(parts, fmt.Sprintf("conns=%d", out[i].Conns))
			}
			out[i].Name = strings.Join(parts, ",")
		}
	}
	return out, nil
}

// printExperiments prints exp, or the thesis's parts with the flags
// applied (a JSON array), as JSON, resolved for this machine and the CPUs
// given: the CPU split, the load generator's workers and every
// configuration's size.
func printExperiments(w io.Writer, exp harness.Experiment, thesis bool, f *Config) error {
	exps := []harness.Experiment{exp}
	if thesis {
		exps = nil
		for _, p := range harness.ThesisParts() {
			e, err := apply(p, f)
			if err != nil {
				return err
			}
			exps = append(exps, e)
		}
	}
	var out []harness.Experiment
	for _, e := range exps {
		r, err := e.Resolve()
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		out = append(out, r)
	}
	var b []byte
	if thesis {
		b, _ = json.MarshalIndent(out, "", "  ") // an array: the parts in order
	} else {
		b, _ = json.MarshalIndent(out[0], "", "  ")
	}
	_, err := fmt.Fprintf(w, "%s\n", b)
	return err
}
