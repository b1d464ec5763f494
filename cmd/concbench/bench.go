package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/report"
	"concbench/results"
)

const benchUsage = `usage: concbench bench [--profile NAME] [flags]
       concbench bench --resume DIR

Runs an experiment: every configuration (a model and its settings) under
every workload; per configuration and repetition one server process
("concbench serve", pinned to --server-cpus) whose capacity is measured
closed-loop, then open-loop points, the load generator running in this
process, pinned to --load-cpus. Repetitions are interleaved across
configurations. Each point is written to <out>/bench-<UTC time>/points/
as soon as it is measured; run.json describes the run. At the start the
load generator's own ceiling is measured against a server that answers
at once, and every point whose rate reaches 80% of it is reported as
beyond what the generator measures here, never as a model's number.

Every model is sized from the server's CPUs by one rule (a thread per
CPU; more for blocking work, by Little's law), recorded in every point;
the load generator gets a busy-polling worker per load CPU but the first.
--print-experiment shows both for the CPUs given, without running.

A progress line per point goes to standard error; at the end, the run's
summary and its folder go to standard output (preceded by a warning when
most of the run is invalid), and the figures and the report (report.md,
report.html) are rendered into the folder (--no-figures skips it). A
model that cannot run here is recorded as unavailable with its reason; a
point whose server died is recorded as failed; neither stops the run.
Ctrl-C stops after the current point; --resume DIR continues it.

Profiles (--profile; docs/profiles.md has what each measures and why):
  default      the workload suite: cpu, tiny, block, bimodal, ledger; every
               model family under each; capacity, capacity at the latency
               objective, one equal absolute rate; 5 repetitions; an A/A
               twin of Leader/Followers (lifo)
  aa           the A/A campaign's experiment (concbench aarate): LF (lifo,
               twinned), netpoll, proactor under cpu and tiny
  load         every family under cpu at its capacity and 10/50/75/90% of it
  variants     the Leader/Followers promotion orders, Half-Sync/Half-
               Reactive pooled, under cpu and bimodal
  practised    Leader/Followers as servers practise it (nginx's accept
               modes, the partitioned server, Cherokee, boost.asio)
               beside the textbook pool, under cpu, tiny and churn
               (a new connection per request)
  dispersion   the shared handle set against the partitioned server at one
               equal load as the service time's dispersion grows (needs
               ≥ 4 server CPUs)
  cores        every family on 1, 2, 4, … server CPUs under cpu, tiny and
               block: capacity and its speed-up against CPUs
  threads      the thread sweep: the pools at 1, 2, 4, … up to 2× the
               server CPUs (at least 8) under cpu and block
  thesis       default, cores and threads in turn at 10 repetitions and
               3 s windows, into one folder; its duration estimated first
  gate         the CI regression gate's fixed suite
  chain        the front end in front of a back end
  connections  every family at 16 to 10 000 connections at one rate
  nginx        real nginx beside the nginx-style model in each accept mode
               (mutex, exclusive, reuseport), no work per request:
               capacity, one equal rate, connection balance (make nginx)
  asio         real boost.asio beside the sharedqueue model, the nginx
               profile's loads and a mechanisms point (make asio)
Flags override the profile's fields; --experiment FILE reads a whole
experiment (JSON, as in run.json's "experiment"; print one with
--print-experiment).

From many hosts: --agents host:port,… with --agent-token runs every point's
load through those agents ("concbench agent" on each load host; see "help
load") instead of this process: connections and rate are split over them,
their histograms merged exactly, a point invalid if any agent's is; each
point's warnings record every agent's share, clock offset and window
skew. The server must then listen on an address the agents reach
(--server-addr, e.g. 10.0.0.1:0; the agents' --allow must include it);
the server's costs are still measured over the common window, with every
agent's connections open. --load-cpus does not pin the agents (each has
its own --cpus).

Flags:
`

// benchFlags are the bench command's settings.
type benchFlags struct {
	profile, experiment, resume, out          string
	models, fractions, rates, conns, protocol string
	ratesFromSlowest                          string
	cpu, serverCPUs, loadCPUs                 string
	serverBinary                              string
	reps, gomaxprocs, sloProbes, mechanisms   int
	duration, warmup, mechanismsDuration      time.Duration
	slo, sloWarmup, sloDuration               time.Duration
	budget                                    time.Duration
	twin                                      string
	sloPercentile                             float64
	seed                                      uint64
	print, noFigures, relaxLoadChecks         bool
	agent                                     agentFlags
	validate                                  time.Duration
}

func runBench(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f benchFlags
	def, _ := harness.Profile("default")
	thesis, _ := harness.Profile("thesis")
	gate, _ := harness.Profile("gate")
	w0 := def.Workloads[0]
	fs.StringVar(&f.profile, "profile", "default", "the experiment to start from: "+strings.Join(harness.ProfileNames, ", "))
	fs.StringVar(&f.experiment, "experiment", "", "read the experiment from this JSON file instead of a profile (the other flags still override it)")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in this folder, with its own experiment (no other experiment flags)")
	fs.StringVar(&f.out, "out", "out", "the folder under which the run's folder bench-<UTC time> is made")
	fs.StringVar(&f.models, "models", "", "comma-separated configurations to run, by name (leaderfollowers/lifo) or by model (leaderfollowers: all its configurations); default: the profile's")
	fs.StringVar(&f.twin, "twin", twinDefault(def), "the A/A control: the configuration measured a second time, as <name>/twin, whose decisions against its original must never separate them (the default and thesis profiles': their first configuration; none turns it off)")
	fs.IntVar(&f.reps, "reps", def.Repetitions, fmt.Sprintf("repetitions of every point (the profile's; thesis %d, gate %d)", thesis.Repetitions, gate.Repetitions))
	fs.DurationVar(&f.budget, "budget", time.Duration(def.Budget), "time budget of a suite run, from its start to its last measurement: after the planned points it decides the who-wins table on them and spends the rest on extra rounds for the cells still undecided (the default profile's; 0: no extra rounds)")
	fs.StringVar(&f.fractions, "fractions", joinFloats(def.Fractions), "comma-separated open-loop loads as fractions of capacity, each in (0, 1] (the profile's)")
	fs.StringVar(&f.rates, "rates", "", "comma-separated open-loop loads as absolute rates, req/s, the same for every configuration (the profile's; connections 5000)")
	fs.StringVar(&f.ratesFromSlowest, "rates-from-slowest", joinFloats(def.RatesFromSlowest), "comma-separated open-loop loads as fractions in (0, 1] of the slowest configuration's median capacity under each workload, the same absolute rates for every configuration, measured after every other point (the profile's; empty for none)")
	fs.DurationVar(&f.duration, "duration", time.Duration(def.Duration), fmt.Sprintf("measured window of every point (the profile's; thesis %v, gate %v)", time.Duration(thesis.Duration), time.Duration(gate.Duration)))
	fs.DurationVar(&f.warmup, "warmup", time.Duration(def.Warmup), fmt.Sprintf("unmeasured warm-up before every window, at least 100ms (the profile's; thesis %v, gate %v)", time.Duration(thesis.Warmup), time.Duration(gate.Warmup)))
	fs.DurationVar(&f.slo, "slo", 0, "latency objective of every workload, the bound of its percentile (--slo-percentile): each configuration's highest open-loop rate that meets it is searched for after every capacity point (default: the profile's per-workload objectives; suite sets them; 0 removes them)")
	fs.Float64Var(&f.sloPercentile, "slo-percentile", harness.DefaultSLOPercentile, "the percentile --slo bounds: 50, 90, 99 or 99.9")
	fs.IntVar(&f.sloProbes, "slo-probes", harness.DefaultSLOProbes, "most probes of each search (one per configuration, workload with an objective and repetition)")
	fs.DurationVar(&f.sloWarmup, "slo-warmup", harness.DefaultSLOWarmup, "warm-up of every search probe, at least 100ms")
	fs.DurationVar(&f.sloDuration, "slo-duration", harness.DefaultSLODuration, "measured window of every search probe")
	fs.IntVar(&f.mechanisms, "mechanisms", def.Mechanisms, "repetitions, the first ones, with a mechanisms point after each equal-load point (--rates-from-slowest): a short window that counts the server's system calls by kind, futex wake calls and cross-CPU wake-ups with kernel tracepoints (needs root), measuring nothing else; 0 turns it off (the profile's)")
	fs.DurationVar(&f.mechanismsDuration, "mechanisms-duration", harness.DefaultMechanismsDuration, "measured window of every mechanisms point")
	fs.StringVar(&f.conns, "conns", strconv.Itoa(w0.Conns), "connections; a comma-separated list makes a sweep, one workload each (the profile's)")
	fs.StringVar(&f.protocol, "protocol", w0.Protocol, "wire protocol, http or binary; a comma-separated list makes a sweep (the profile's)")
	fs.StringVar(&f.cpu, "cpu", w0.CPU, "CPU work per request: V, exp:MEAN or bimodal:P:A:B durations (exponential service makes the M/M/c ideal exact)")
	fs.IntVar(&f.gomaxprocs, "gomaxprocs", 0, "GOMAXPROCS of every server, overriding the profile's per-model choice (0: keep the profile's)")
	fs.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs the server runs on (cpulist); default: the first half of this process's CPUs (0 on a 2-CPU machine)")
	fs.StringVar(&f.loadCPUs, "load-cpus", "", "CPUs the load generator runs on, disjoint from --server-cpus; default: the second half (1 on a 2-CPU machine)")
	fs.StringVar(&f.serverBinary, "server-binary", "", "the concbench executable that serves (e.g. another commit's build); default: this one")
	fs.Uint64Var(&f.seed, "seed", def.Seed, "seed of the load generator's schedules")
	fs.BoolVar(&f.noFigures, "no-figures", false, "do not render the figures and the report at the end (render later with concbench figures)")
	fs.BoolVar(&f.relaxLoadChecks, "relax-load-checks", false, "turn off the load generator's checks on its own health (only for tests on a machine busy with other work; every point then says so)")
	fs.DurationVar(&f.validate, "validate", 10*time.Second, "after the run, check the measurement chain with one short concbench validate experiment (M/M/1 at ρ 0.5) of this window, ~8 s more for the floor, a closed-loop run and start-up, for the report's Measurement chain section; 0 skips it")
	fs.BoolVar(&f.print, "print-experiment", false, "print the experiment as JSON (an --experiment file) and exit without running it")
	f.agent.register(fs)
	if err := cli.Parse(fs, args, stdout, benchUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := cli.Set(fs)

	opt, err := f.agent.options("bench", stderr)
	if err != nil {
		return err
	}
	var sum *harness.Summary
	if f.resume != "" {
		for name := range set {
			// --no-figures, --validate and --out change what is done with the run, not
			// the experiment; --out is meaningless here (the folder is
			// --resume's) and stays refused. The agents' flags say how
			// the load is generated, as on the first invocation.
			if name != "resume" && name != "no-figures" && name != "validate" && !agentFlagNames[name] {
				return fmt.Errorf("bench: --resume takes the experiment from %s/run.json; --%s cannot change it", f.resume, name)
			}
		}
		fmt.Fprintf(stderr, "concbench bench: resuming %s\n", f.resume)
		sum, err = harness.Resume(ctx, f.resume, opt)
	} else {
		exp, xerr := benchExperiment(&f, set)
		if xerr != nil {
			return xerr
		}
		if f.print {
			return printExperiments(stdout, exp, f.profile == "thesis" && !set["experiment"], set, &f)
		}
		if f.profile == "thesis" && !set["experiment"] {
			return runThesis(ctx, &f, set, opt, stdout, stderr)
		}
		dir := harness.NewRunDir(f.out, time.Now())
		fmt.Fprintf(stderr, "concbench bench: profile %s, %d configurations, %d workload(s), %d repetitions → %s\n",
			exp.Profile, len(exp.Configs), len(exp.Workloads), exp.Repetitions, dir)
		sum, err = harness.Run(ctx, exp, dir, opt)
	}
	if err != nil {
		if sum == nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(stdout, "run: %s\n", sum.Dir)
		return fmt.Errorf("bench: %w (the points measured so far are in %s)", err, sum.Dir)
	}
	chain := ""
	if !sum.Interrupted && f.validate > 0 {
		chain = benchChain(ctx, sum.Dir, f, stderr)
	}
	if err := finishRun(stdout, sum, !f.noFigures); err != nil {
		return err
	}
	if chain != "" {
		fmt.Fprintf(stdout, "measurement chain: %s (%s)\n", chain, filepath.Join(sum.Dir, report.ValidationMD))
	}
	fmt.Fprintf(stdout, "render again: concbench figures --run %s   (or: make figures RUN=%s)\n", sum.Dir, sum.Dir)
	if sum.Interrupted {
		return fmt.Errorf("bench: interrupted; continue with: concbench bench --resume %s", sum.Dir)
	}
	return nil
}

// benchChain runs a short validation of the measurement chain (one
// M/M/1 experiment at ρ 0.5 with a window of f.validate) and writes it into
// the run folder, where the report's Measurement chain section reads it.
// A validation that cannot run is recorded as not validated, with why: it
// never fails the bench. It returns the verdict.
func benchChain(ctx context.Context, dir string, f benchFlags, stderr io.Writer) string {
	if v, _ := report.ReadValidation(dir); v != nil {
		return v.Verdict // a resumed run that has one
	}
	fmt.Fprintf(stderr, "concbench bench: the measurement chain: one M/M/1 experiment at ρ 0.5, %v (--validate 0 skips it)\n", f.validate)
	opt := harness.ValidateOptions{Binary: f.serverBinary, Work: []string{"exp"}, Rhos: []float64{0.5}, Duration: f.validate,
		FloorDuration: 2 * time.Second, ServerCPUs: f.serverCPUs, LoadCPUs: f.loadCPUs, Progress: stderr, KeepKernelThreads: f.agent.keepKernelThreads}
	if f.relaxLoadChecks {
		opt.Limits = relaxedLimits
	}
	v, err := harness.Validate(ctx, opt)
	if err != nil {
		v = &results.Validation{Verdict: "not validated: the validation could not run: " + err.Error()}
	}
	if f.relaxLoadChecks {
		v.Notes = append(v.Notes, "the load generator's checks on its own health were turned off (--relax-load-checks)")
	}
	if _, err := report.WriteValidation(dir, v, []string{"svg"}); err != nil {
		fmt.Fprintf(stderr, "concbench bench: the measurement chain: %v\n", err)
	}
	return v.Verdict
}

// finishRun reads the run in sum.Dir back and writes to stdout, in this
// order: the warning of a mostly invalid run (report.Banner), if it is
// one, and the run's summary and folder. When render is set it then
// renders the figures and the report into the folder and says where they
// are.
func finishRun(stdout io.Writer, sum *harness.Summary, render bool) error {
	run, pts, err := results.ReadRun(sum.Dir)
	if err != nil {
		return fmt.Errorf("bench: reading the run back from %s: %w (the points are kept; render with: concbench figures --run %s)", sum.Dir, err, sum.Dir)
	}
	if banner := report.Banner(run, pts); banner != "" {
		fmt.Fprintf(stdout, "%s\n\n", banner)
	}
	fmt.Fprintf(stdout, "%s\nrun: %s\n", sum, sum.Dir)
	if !render {
		return nil
	}
	// Render whatever was measured, an interrupted run included.
	if _, err := report.Render(sum.Dir, run, pts, report.Options{}); err != nil {
		return fmt.Errorf("bench: rendering the figures of %s: %w (the points are kept; retry with: concbench figures --run %s)", sum.Dir, err, sum.Dir)
	}
	fmt.Fprintf(stdout, "report: %s\n        %s\nfigures: %s\n", filepath.Join(sum.Dir, report.ReportHTML), screenshot(sum.Dir), filepath.Join(sum.Dir, report.FiguresDir))
	return nil
}

// screenshot takes report.png of the run folder's report with headless
// Chromium, for a quick look, and says what it did: the file's path, or
// why there is none (no Chromium is not an error: the report is complete
// without it).
func screenshot(dir string) string {
	png := filepath.Join(dir, report.ReportPNG)
	switch err := report.Screenshot(context.Background(), filepath.Join(dir, report.ReportHTML), png); {
	case err == nil:
		return png + " (screenshot)"
	case errors.Is(err, report.ErrNoBrowser):
		return "no screenshot: no Chromium here (apt-get install -y chromium for report.png)"
	default:
		return fmt.Sprintf("no screenshot: %v", strings.SplitN(err.Error(), "\n", 2)[0])
	}
}

// benchExperiment builds the experiment the flags ask for: the profile
// (or --experiment file) with every flag that was set applied over it.
func benchExperiment(f *benchFlags, set map[string]bool) (harness.Experiment, error) {
	var exp harness.Experiment
	if f.experiment != "" {
		if set["profile"] {
			return exp, errors.New("bench: --profile and --experiment both given (accepted: one of them)")
		}
		b, err := os.ReadFile(f.experiment)
		if err != nil {
			return exp, fmt.Errorf("bench: --experiment: %w", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&exp); err != nil {
			return exp, fmt.Errorf("bench: --experiment %s: %w", f.experiment, err)
		}
	} else {
		var err error
		if exp, err = harness.Profile(f.profile); err != nil {
			return exp, fmt.Errorf("bench: --profile: %w", err)
		}
	}
	return applyFlags(exp, f, set)
}

// given sets *to to v if the flag name was given on the command line:
// bench's and the gate's flags override their profile's (or file's)
// fields one by one.
func given[T any](set map[string]bool, name string, to *T, v T) {
	if set[name] {
		*to = v
	}
}

// applyFlags returns exp with every flag that was set applied over it,
// validated.
func applyFlags(exp harness.Experiment, f *benchFlags, set map[string]bool) (harness.Experiment, error) {
	exp = exp.WithDefaults().WithoutTwinConfig()
	if set["twin"] {
		switch f.twin {
		case "", "none":
			exp.Twin = nil
		default:
			exp.Twin = &harness.Twin{Of: f.twin}
		}
	}
	if set["models"] {
		var err error
		if exp.Configs, err = selectConfigs(exp.Configs, f.models); err != nil {
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
	given(set, "reps", &exp.Repetitions, f.reps)
	given(set, "budget", &exp.Budget, harness.Duration(f.budget))
	for _, fl := range []struct {
		name, value string
		to          *[]float64
		blank       bool // an empty list is none
	}{
		{"fractions", f.fractions, &exp.Fractions, false},
		{"rates", f.rates, &exp.Rates, true},
		{"rates-from-slowest", f.ratesFromSlowest, &exp.RatesFromSlowest, true},
	} {
		if !set[fl.name] {
			continue
		}
		if fl.blank && strings.TrimSpace(fl.value) == "" {
			*fl.to = nil
			continue
		}
		xs, err := parseFloats(fl.value)
		if err != nil {
			return exp, fmt.Errorf("bench: --%s: %w", fl.name, err)
		}
		*fl.to = xs
	}
	if set["mechanisms"] {
		exp.Mechanisms = f.mechanisms
	} else if len(exp.RatesFromSlowest) == 0 {
		exp.Mechanisms = 0 // the profile's follow its equal-load points, and --rates-from-slowest removed them
	}
	given(set, "duration", &exp.Duration, harness.Duration(f.duration))
	given(set, "warmup", &exp.Warmup, harness.Duration(f.warmup))
	if set["cpu"] {
		for i := range exp.Workloads {
			exp.Workloads[i].CPU = f.cpu
		}
	}
	if set["conns"] || set["protocol"] {
		var err error
		if exp.Workloads, err = sweep(exp.Workloads[0], f, set); err != nil {
			return exp, err
		}
	}
	if set["slo"] || set["slo-percentile"] {
		for i := range exp.Workloads {
			w := &exp.Workloads[i]
			switch {
			case set["slo"] && f.slo == 0:
				w.SLO = nil
			case set["slo"]:
				w.SLO = &harness.SLO{Percentile: f.sloPercentile, Bound: harness.Duration(f.slo)}
			case w.SLO != nil:
				c := *w.SLO
				c.Percentile = f.sloPercentile
				w.SLO = &c
			}
		}
	}
	exp = exp.WithDefaults() // the search's defaults, if --slo added an objective
	given(set, "slo-probes", &exp.SLOProbes, f.sloProbes)
	given(set, "slo-warmup", &exp.SLOWarmup, harness.Duration(f.sloWarmup))
	given(set, "slo-duration", &exp.SLODuration, harness.Duration(f.sloDuration))
	given(set, "mechanisms-duration", &exp.MechanismsDuration, harness.Duration(f.mechanismsDuration))
	if set["gomaxprocs"] {
		for i := range exp.Configs {
			exp.Configs[i].GOMAXPROCS, exp.Configs[i].GOMAXPROCSPerConn = f.gomaxprocs, false
		}
	}
	given(set, "server-cpus", &exp.ServerCPUs, f.serverCPUs)
	given(set, "load-cpus", &exp.LoadCPUs, f.loadCPUs)
	given(set, "server-binary", &exp.ServerBinary, f.serverBinary)
	given(set, "seed", &exp.Seed, f.seed)
	if f.relaxLoadChecks {
		exp.LoadLimits = relaxedLimits
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

// selectConfigs keeps the configurations named in list (comma-separated),
// by name or by model, in the order of the list; a name that is not in
// the experiment is looked up in harness.AllConfigs. A configuration named
// twice (halfsynchalfreactive, a model, includes
// halfsynchalfreactive/pooled) is kept once.
func selectConfigs(have []harness.Config, list string) ([]harness.Config, error) {
	cs, err := selectFrom(list, have, harness.AllConfigs())
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return cs, nil
}

// selectFrom keeps the configurations named in list (comma-separated),
// by name or by model, in the order of the list, each looked up in the
// first of pools that has it; a configuration named twice is kept once.
func selectFrom(list string, pools ...[]harness.Config) ([]harness.Config, error) {
	var out []harness.Config
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		found := false
		for _, pool := range pools {
			for _, c := range pool {
				if c.Name != want && c.Model != want {
					continue
				}
				found = true
				if !slices.ContainsFunc(out, func(o harness.Config) bool { return o.Name == c.Name }) {
					out = append(out, c)
				}
			}
			if found {
				break
			}
		}
		if !found {
			var names []string
			for _, pool := range pools {
				for _, c := range pool {
					if !slices.Contains(names, c.Name) {
						names = append(names, c.Name)
					}
				}
			}
			return nil, fmt.Errorf("--models: no configuration or model %q (accepted: %s, or a model name)", want, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// sweep returns the workloads of the --conns × --protocol lists, the
// other fields from base; each is named when there are several.
func sweep(base harness.Workload, f *benchFlags, set map[string]bool) ([]harness.Workload, error) {
	conns := []int{base.Conns}
	if set["conns"] {
		conns = nil
		for _, s := range strings.Split(f.conns, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("bench: --conns: %q is not a number of connections", s)
			}
			conns = append(conns, n)
		}
	}
	protos := []string{base.Protocol}
	if set["protocol"] {
		protos = nil
		for _, p := range strings.Split(f.protocol, ",") {
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

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", part)
		}
		out = append(out, v)
	}
	return out, nil
}

func joinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// printExperiments prints exp, or the thesis's parts with the flags
// applied (a JSON array), as JSON, resolved for this machine and the CPUs given: the
// CPU split, the load generator's workers and every configuration's
// size.
func printExperiments(w io.Writer, exp harness.Experiment, thesis bool, set map[string]bool, f *benchFlags) error {
	exps := []harness.Experiment{exp}
	if thesis {
		exps = nil
		for _, p := range harness.ThesisParts() {
			e, err := applyFlags(p, f, set)
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

// runThesis runs the thesis profile's parts (harness.ThesisParts) one
// after another into one folder, each with the flags applied: it
// measures the load generator's ceilings and the run's overheads once,
// prints the estimated duration, then runs every part (its own run
// folder, report and figures) with those ceilings.
func runThesis(ctx context.Context, f *benchFlags, set map[string]bool, opt harness.Options, stdout, stderr io.Writer) error {
	var parts []harness.Experiment
	for _, p := range harness.ThesisParts() {
		e, err := applyFlags(p, f, set)
		if err != nil {
			return err
		}
		if e, err = e.Resolve(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		parts = append(parts, e)
	}
	opt.Progress = stderr
	fmt.Fprintf(stderr, "concbench bench: thesis: measuring the load generator's ceiling and the per-point overhead\n")
	ceilings, timing, err := harness.MeasureCeilings(ctx, parts[0], opt)
	if err != nil {
		return fmt.Errorf("bench: thesis: %w", err)
	}
	opt.Ceilings = ceilings
	total := time.Duration(0)
	for _, p := range parts {
		n, d := p.Estimate(timing)
		total += d
		fmt.Fprintf(stderr, "concbench bench: thesis: %s: %d configurations, %d workloads, %d repetitions, up to %d points: about %s\n",
			p.Profile, len(p.Configs), len(p.Workloads), p.Repetitions, n, d.Round(time.Minute))
	}
	fmt.Fprintf(stderr, "concbench bench: thesis: about %s in all (estimated from the windows, %s per point and %s per server start, measured now); Ctrl-C stops after the current point, and each part resumes with --resume\n",
		total.Round(time.Minute), timing.PointOverhead.Round(time.Millisecond), timing.ServerStart.Round(time.Millisecond))
	root := filepath.Join(f.out, "thesis-"+time.Now().UTC().Format("20060102T150405Z"))
	for _, p := range parts {
		dir := filepath.Join(root, strings.TrimPrefix(p.Profile, "thesis/"))
		fmt.Fprintf(stderr, "concbench bench: thesis: %s → %s\n", p.Profile, dir)
		sum, err := harness.Run(ctx, p, dir, opt)
		if err != nil {
			if sum != nil {
				fmt.Fprintf(stdout, "run: %s\n", sum.Dir)
			}
			return fmt.Errorf("bench: thesis: %s: %w", p.Profile, err)
		}
		if err := finishRun(stdout, sum, !f.noFigures); err != nil {
			return err
		}
		if sum.Interrupted {
			return fmt.Errorf("bench: thesis: interrupted in %s; continue it with: concbench bench --resume %s (then the later parts with --profile thesis … again)", p.Profile, sum.Dir)
		}
	}
	fmt.Fprintf(stdout, "thesis: %s\n", root)
	return nil
}

// twinDefault is --twin's default: the profile's twin, or none.
func twinDefault(e harness.Experiment) string {
	if e.Twin == nil {
		return "none"
	}
	return e.Twin.Of
}
