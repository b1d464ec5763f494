package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"concbench/harness"
	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/report"
	"concbench/results"
)

// TestBenchHelp checks that --help documents every flag with its default.
func TestBenchHelp(t *testing.T) {
	checkHelp(t, "bench",
		"usage: concbench bench", "-profile", `(default "default")`, "-experiment", "-resume", "-out", `(default "out")`,
		"-models", "-reps", "(default 5)", "-fractions", "-rates-from-slowest", "-duration", "-warmup",
		"-conns", `(default "64")`, "-protocol", "-cpu", `(default "exp:10us")`, "-gomaxprocs", "-server-cpus",
		"-load-cpus", "-server-binary", "-seed", "-print-experiment", "-slo", "-slo-percentile", "-slo-probes",
		"-mechanisms", "(default 1)", "-mechanisms-duration",
	)
}

// printExperiment runs bench --print-experiment with args and decodes the
// experiment it prints.
func printExperiment(t *testing.T, args ...string) harness.Experiment {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runBench(context.Background(), append([]string{"--print-experiment"}, args...), nil, &out, &errOut); err != nil {
		t.Fatalf("bench %v: %v", args, err)
	}
	var e harness.Experiment
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatalf("bench %v printed %q: %v", args, out.String(), err)
	}
	return e
}

// TestBenchFlags checks that flags override the profile's fields, and
// only the fields they name.
func TestBenchFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, e harness.Experiment)
	}{
		{name: "load profile", args: []string{"--profile", "load"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Profile != "load" || len(e.Configs) != len(harness.Families()) || e.Repetitions != 6 || len(e.Workloads) != 1 || len(e.Fractions) != 4 || len(e.RatesFromSlowest) != 0 {
				t.Errorf("experiment %+v", e)
			}
		}},
		{name: "default profile, the suite", args: nil, check: func(t *testing.T, e harness.Experiment) {
			if e.Profile != "default" || len(untwinned(e)) != len(harness.Families()) || e.Repetitions != 5 || len(e.Workloads) != 5 || len(e.RatesFromSlowest) != 1 || !e.Shuffle {
				t.Errorf("experiment %+v", e)
			}
			if e.Twin == nil || e.Twin.Of != "leaderfollowers/lifo" || e.Twin.Name != "leaderfollowers/lifo/twin" || !slices.Contains(names(e.Configs), e.Twin.Name) {
				t.Errorf("twin %+v among %v, want leaderfollowers/lifo's", e.Twin, names(e.Configs))
			}
		}},
		{name: "no twin", args: []string{"--twin", "none"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Twin != nil || len(e.Configs) != len(harness.Families()) {
				t.Errorf("twin %+v, configurations %v", e.Twin, names(e.Configs))
			}
		}},
		{name: "another twin", args: []string{"--twin", "netpoll"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Twin == nil || e.Twin.Of != "netpoll" || !slices.Contains(names(e.Configs), "netpoll/twin") || slices.Contains(names(e.Configs), "leaderfollowers/lifo/twin") {
				t.Errorf("twin %+v among %v, want netpoll's alone", e.Twin, names(e.Configs))
			}
		}},
		{name: "the twin follows --models", args: []string{"--models", "netpoll,proactor"}, check: func(t *testing.T, e harness.Experiment) {
			if got := names(e.Configs); e.Twin == nil || e.Twin.Of != "netpoll" || !slices.Equal(got, []string{"netpoll", "proactor", "netpoll/twin"}) {
				t.Errorf("twin %+v among %v, want the first kept configuration's", e.Twin, got)
			}
		}},
		{name: "threads profile", args: []string{"--profile", "threads", "--models", "activeobject,netpoll"}, check: func(t *testing.T, e harness.Experiment) {
			got := names(e.Configs)
			want := []string{"activeobject/threads=1", "activeobject/threads=2", "activeobject/threads=4", "activeobject/threads=8", "netpoll"}
			if e.Profile != "threads" || !slices.Equal(got, want) || len(e.Workloads) != 2 || len(e.RatesFromSlowest) != 1 || len(e.Fractions) != 0 {
				t.Errorf("configurations %v (want %v), experiment %+v", got, want, e)
			}
		}},
		{name: "suite objectives", args: nil, check: func(t *testing.T, e harness.Experiment) {
			for _, w := range e.Workloads {
				if w.SLO == nil || time.Duration(w.SLO.Bound) != harness.SuiteSLOs[w.Name] || w.SLO.Percentile != 99 {
					t.Errorf("workload %s objective %+v, want p99 ≤ %v", w.Name, w.SLO, harness.SuiteSLOs[w.Name])
				}
			}
			if e.SLOProbes != harness.DefaultSLOProbes || time.Duration(e.SLODuration) != harness.DefaultSLODuration {
				t.Errorf("search of %d probes of %v", e.SLOProbes, e.SLODuration)
			}
		}},
		{name: "slo for every workload", args: []string{"--slo", "3ms", "--slo-percentile", "99.9", "--slo-probes", "4", "--slo-duration", "200ms"}, check: func(t *testing.T, e harness.Experiment) {
			for _, w := range e.Workloads {
				if w.SLO == nil || time.Duration(w.SLO.Bound) != 3*time.Millisecond || w.SLO.Percentile != 99.9 {
					t.Errorf("workload %s objective %+v, want p99.9 ≤ 3ms", w.Name, w.SLO)
				}
			}
			if e.SLOProbes != 4 || time.Duration(e.SLODuration) != 200*time.Millisecond {
				t.Errorf("search of %d probes of %v, want 4 of 200ms", e.SLOProbes, e.SLODuration)
			}
		}},
		{name: "slo added to the load profile", args: []string{"--profile", "load", "--slo", "1ms"}, check: func(t *testing.T, e harness.Experiment) {
			if w := e.Workloads[0]; w.SLO == nil || time.Duration(w.SLO.Bound) != time.Millisecond || e.SLOProbes != harness.DefaultSLOProbes {
				t.Errorf("objective %+v, %d probes", w.SLO, e.SLOProbes)
			}
		}},
		{name: "slo removed", args: []string{"--slo", "0"}, check: func(t *testing.T, e harness.Experiment) {
			for _, w := range e.Workloads {
				if w.SLO != nil {
					t.Errorf("workload %s keeps its objective %+v", w.Name, w.SLO)
				}
			}
		}},
		{name: "load profile has no objective", args: []string{"--profile", "load"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Workloads[0].SLO != nil || e.SLOProbes != 0 {
				t.Errorf("objective %+v, %d probes", e.Workloads[0].SLO, e.SLOProbes)
			}
		}},
		{name: "mechanisms", args: []string{"--mechanisms", "2", "--mechanisms-duration", "500ms"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Mechanisms != 2 || time.Duration(e.MechanismsDuration) != 500*time.Millisecond || time.Duration(e.MechanismsWarmup) != harness.DefaultMechanismsWarmup {
				t.Errorf("mechanisms %d (%v, %v), want 2 (%v, 500ms)", e.Mechanisms, e.MechanismsWarmup, e.MechanismsDuration, harness.DefaultMechanismsWarmup)
			}
		}},
		{name: "mechanisms off", args: []string{"--mechanisms", "0"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Mechanisms != 0 || len(e.RatesFromSlowest) != 1 {
				t.Errorf("mechanisms %d, rates from the slowest %v; want 0 and the profile's", e.Mechanisms, e.RatesFromSlowest)
			}
		}},
		{name: "no equal load, no mechanisms", args: []string{"--rates-from-slowest", ""}, check: func(t *testing.T, e harness.Experiment) {
			if e.Mechanisms != 0 {
				t.Errorf("mechanisms %d without rates from the slowest, want 0", e.Mechanisms)
			}
		}},
		{name: "mechanisms added to the load profile", args: []string{"--profile", "load", "--rates-from-slowest", "0.7", "--mechanisms", "1"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Mechanisms != 1 || time.Duration(e.MechanismsDuration) != harness.DefaultMechanismsDuration {
				t.Errorf("mechanisms %d (%v)", e.Mechanisms, e.MechanismsDuration)
			}
		}},
		{name: "rates from slowest", args: []string{"--rates-from-slowest", "0.5,0.8"}, check: func(t *testing.T, e harness.Experiment) {
			if !slices.Equal(e.RatesFromSlowest, []float64{0.5, 0.8}) {
				t.Errorf("rates from slowest %v, want [0.5 0.8]", e.RatesFromSlowest)
			}
		}},
		{name: "models choose the suite's configurations", args: []string{"--models", "netpoll,activeobject"}, check: func(t *testing.T, e harness.Experiment) {
			got := untwinned(e)
			if !slices.Equal(got, []string{"netpoll", "activeobject"}) || len(e.Workloads) != 5 {
				t.Errorf("configurations %v under %d workloads, want netpoll and activeobject under 5", got, len(e.Workloads))
			}
		}},
		{name: "a variant in the suite", args: []string{"--models", "leaderfollowers/fifo"}, check: func(t *testing.T, e harness.Experiment) {
			if len(untwinned(e)) != 1 || e.Configs[0].MinPool != 4 || len(e.Workloads) != 5 {
				t.Errorf("configurations %+v under %d workloads, want the variant with its floor under every workload", e.Configs, len(e.Workloads))
			}
		}},
		{name: "server CPUs size every configuration", args: []string{"--server-cpus", "0-7", "--load-cpus", "8-15"}, check: func(t *testing.T, e harness.Experiment) {
			if e.LoadWorkers != 7 || len(e.LoadWorkerCPUs) != 7 || e.LoadWorkerCPUs[0] != 9 {
				t.Errorf("load workers %d on %v, want 7 on 9-15", e.LoadWorkers, e.LoadWorkerCPUs)
			}
			if s := e.Sizes["leaderfollowers/lifo/cpu"]; s.Threads != 8 || s.GOMAXPROCS != 9 {
				t.Errorf("leaderfollowers under cpu on 8 CPUs: %+v", s)
			}
			if s := e.Sizes["halfsynchalfreactive/block"]; s.Threads != 64 || s.GOMAXPROCS != 66 {
				t.Errorf("halfsynchalfreactive under block on 8 CPUs: %+v", s)
			}
		}},
		{name: "lean", args: []string{"--profile", "lean"}, check: func(t *testing.T, e harness.Experiment) {
			if e.ServerCPUQuota != harness.LeanQuota || len(e.Configs) != len(harness.LeanConfigs()) {
				t.Errorf("lean: quota %g, %d configurations; want %g and %d", e.ServerCPUQuota, len(e.Configs), harness.LeanQuota, len(harness.LeanConfigs()))
			}
		}},
		{name: "server CPU quota", args: []string{"--profile", "lean", "--server-cpu-quota", "0.25"}, check: func(t *testing.T, e harness.Experiment) {
			if e.ServerCPUQuota != 0.25 {
				t.Errorf("quota %g, want the flag's 0.25", e.ServerCPUQuota)
			}
		}},
		{name: "one server CPU", args: []string{"--server-cpus", "0", "--load-cpus", "1"}, check: func(t *testing.T, e harness.Experiment) {
			if e.LoadWorkers != 1 || len(e.LoadWorkerCPUs) != 0 {
				t.Errorf("load workers %d on %v, want 1, unpinned within CPU 1", e.LoadWorkers, e.LoadWorkerCPUs)
			}
			if s := e.Sizes["proactor/cpu"]; s.Threads != 1 || s.GOMAXPROCS != 2 {
				t.Errorf("proactor under cpu on 1 CPU: %+v", s)
			}
		}},
		{name: "gate keeps its own fields", args: []string{"--profile", "gate"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Profile != "gate" || len(e.Configs) != 3 || e.Repetitions != 7 || len(e.Fractions) != 2 {
				t.Errorf("experiment %+v", e)
			}
		}},
		{name: "models by model and name", args: []string{"--models", "netpoll,leaderfollowers/os,halfsynchalfreactive"}, check: func(t *testing.T, e harness.Experiment) {
			if got := strings.Join(untwinned(e), " "); got != "netpoll leaderfollowers/os halfsynchalfreactive" {
				t.Errorf("configurations %s", got)
			}
		}},
		{name: "model and one of its configurations", args: []string{"--models", "halfsynchalfreactive,halfsynchalfreactive/pooled"}, check: func(t *testing.T, e harness.Experiment) {
			if got := strings.Join(untwinned(e), " "); got != "halfsynchalfreactive halfsynchalfreactive/pooled" {
				t.Errorf("configurations %s", got)
			}
		}},
		{name: "model outside the profile", args: []string{"--profile", "gate", "--models", "proactor"}, check: func(t *testing.T, e harness.Experiment) {
			if len(e.Configs) != 1 || e.Configs[0].Name != "proactor" {
				t.Errorf("configurations %+v", e.Configs)
			}
		}},
		{name: "scalars", args: []string{"--reps", "2", "--fractions", "0.2, 0.8", "--duration", "3s", "--warmup", "1s", "--cpu", "20us", "--seed", "9",
			"--server-cpus", "0", "--load-cpus", "1", "--server-binary", "/bin/true"}, check: func(t *testing.T, e harness.Experiment) {
			if e.Repetitions != 2 || len(e.Fractions) != 2 || e.Fractions[0] != 0.2 || e.Fractions[1] != 0.8 || e.Duration.String() != "3s" ||
				e.Warmup.String() != "1s" || e.Workloads[0].CPU != "20us" || e.Seed != 9 || e.ServerCPUs != "0" || e.LoadCPUs != "1" || e.ServerBinary != "/bin/true" {
				t.Errorf("experiment %+v", e)
			}
			if e.Workloads[0].Conns != 64 || e.Profile != "default" {
				t.Errorf("an unset field changed: %+v", e)
			}
		}},
		{name: "sweep", args: []string{"--conns", "16,256", "--protocol", "http,binary"}, check: func(t *testing.T, e harness.Experiment) {
			var names []string
			for _, w := range e.Workloads {
				names = append(names, w.Name)
				if w.CPU != "exp:10us" {
					t.Errorf("workload %s lost the base's CPU work: %+v", w.Name, w)
				}
			}
			if got := strings.Join(names, " "); got != "http,conns=16 http,conns=256 binary,conns=16 binary,conns=256" {
				t.Errorf("workloads %s", got)
			}
		}},
		{name: "one connection count", args: []string{"--profile", "load", "--conns", "32"}, check: func(t *testing.T, e harness.Experiment) {
			if len(e.Workloads) != 1 || e.Workloads[0].Conns != 32 || e.Workloads[0].Name != "" {
				t.Errorf("workloads %+v", e.Workloads)
			}
		}},
		{name: "connections at two rates", args: []string{"--profile", "connections", "--rates", "1000,5000", "--reps", "1"}, check: func(t *testing.T, e harness.Experiment) {
			if len(e.Rates) != 2 || e.Rates[1] != 5000 || len(e.Fractions) != 0 || len(e.Workloads) != len(harness.ConnCounts)+1 || e.Repetitions != 1 {
				t.Errorf("rates %v, fractions %v, %d workloads, %d repetitions", e.Rates, e.Fractions, len(e.Workloads), e.Repetitions)
			}
		}},
		{name: "gomaxprocs", args: []string{"--gomaxprocs", "2"}, check: func(t *testing.T, e harness.Experiment) {
			for _, c := range e.Configs {
				if c.GOMAXPROCS != 2 || c.GOMAXPROCSPerConn {
					t.Errorf("configuration %+v", c)
				}
			}
			for name, s := range e.Sizes {
				if s.GOMAXPROCS != 2 {
					t.Errorf("%s: %+v", name, s)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, printExperiment(t, tc.args...)) })
	}
}

// TestBenchExperimentFile checks --experiment: a file's fields, flags over
// them, and the refusal of unknown fields.
func TestBenchExperimentFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"profile":"mine","configs":[{"name":"np","model":"netpoll"}],
		"workloads":[{"protocol":"binary","conns":8}],"fractions":[0.4],"repetitions":3,"warmup":"200ms","duration":"1s"}`), 0o644)
	e := printExperiment(t, "--experiment", good, "--reps", "4")
	if e.Profile != "mine" || e.Configs[0].Name != "np" || e.Workloads[0].Protocol != "binary" || e.Workloads[0].Depth != 1 || e.Repetitions != 4 {
		t.Errorf("experiment %+v", e)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"configs":[],"repetitons":3}`), 0o644)
	err := runBench(context.Background(), []string{"--experiment", bad}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown field "repetitons"`) {
		t.Errorf("a misspelt field: %v", err)
	}
}

// TestBenchErrors checks that bad flags are refused with a message naming
// the problem, before anything runs.
func TestBenchErrors(t *testing.T) {
	checkRefused(t, "bench", nil, []flagCase{
		{name: "profile", args: []string{"--profile", "huge"}, want: `unknown profile "huge" (accepted: ` + strings.Join(harness.ProfileNames, ", ") + ")"},
		{name: "model", args: []string{"--models", "nginx"}, want: `no configuration or model "nginx" (accepted: leaderfollowers/lifo`},
		{name: "fraction", args: []string{"--fractions", "0.5,2"}, want: "fraction 2 out of range"},
		{name: "fraction syntax", args: []string{"--fractions", "half"}, want: `--fractions: "half" is not a number`},
		{name: "conns", args: []string{"--conns", "many"}, want: `--conns: "many" is not a number`},
		{name: "reps", args: []string{"--reps", "0"}, want: "repetitions 0 out of range"},
		{name: "slo percentile", args: []string{"--slo", "1ms", "--slo-percentile", "95"}, want: "SLO percentile 95 not supported"},
		{name: "slo bound", args: []string{"--slo", "1ns"}, want: "SLO bound 1ns out of range"},
		{name: "slo probes", args: []string{"--slo", "1ms", "--slo-probes", "0"}, want: "SLO probes 0 out of range"},
		{name: "cpus", args: []string{"--server-cpus", "0", "--load-cpus", "0"}, want: "share CPU 0"},
		{name: "server CPU quota", args: []string{"--server-cpu-quota", "-1"}, want: "server CPU quota -1 out of range"},
		{name: "mechanisms without an equal load", args: []string{"--rates-from-slowest", "", "--mechanisms", "1"}, want: "mechanisms 1 without rates from the slowest"},
		{name: "mechanisms over repetitions", args: []string{"--reps", "2", "--mechanisms", "3"}, want: "mechanisms 3 out of range (accepted: 0 for none, or 1..2, the repetitions)"},
		{name: "profile and file", args: []string{"--profile", "gate", "--experiment", "x.json"}, want: "--profile and --experiment both given"},
		{name: "resume with flags", args: []string{"--resume", "out/x", "--reps", "3"}, want: "--reps cannot change it"},
		{name: "argument", args: []string{"now"}, want: `unexpected argument "now"`},
		{name: "resume nothing", args: []string{"--resume", "/nonexistent/run"}, want: "resume"},
	})
}

// TestBenchMissingServerBinary: a server binary that does not exist is
// refused by name, and no empty run folder is left behind.
func TestBenchMissingServerBinary(t *testing.T) {
	out := t.TempDir()
	err := runBench(context.Background(), []string{"--server-binary", "/nonexistent/concbench", "--out", out}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/concbench") {
		t.Fatalf("bench with a missing server binary: %v, want an error naming it", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("left behind in --out: %v", ents)
	}
}

// TestBenchRun runs a tiny experiment end to end through the command: the
// run folder is printed with the command that renders it, and holds
// run.json and the points, which the figures command renders; resuming
// the finished run measures nothing. The run is measured with
// --no-figures and rendered as SVG only: what bench prints when it
// renders is TestBenchBanner's, and rasterising every figure as PNG under
// the race detector took longer than the whole measurement.
func TestBenchRun(t *testing.T) {
	testenv.EndToEnd(t)
	bin := concbenchtest.Binary(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := runBench(context.Background(), []string{"--profile", "load", "--models", "netpoll", "--reps", "1", "--fractions", "0.5", "--conns", "8",
		"--warmup", "100ms", "--duration", "200ms", "--out", out, "--server-binary", bin, "--relax-load-checks", "--validate", "0",
		"--rates-from-slowest", "", "--no-figures"}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench: %v\nstderr:\n%s", err, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "bench-*"))
	if len(dirs) != 1 {
		t.Fatalf("run folders %v, want one bench-<time>", dirs)
	}
	dir := dirs[0]
	for _, want := range []string{"2 points: ", "run: " + dir, "concbench figures --run " + dir} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "[2/2]") {
		t.Errorf("no progress line for point 2 of 2 on stderr:\n%s", stderr.String())
	}
	run, pts, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Finished.IsZero() || len(pts) != 2 || pts[0].Status != results.StatusOK || pts[1].Status != results.StatusOK {
		var status []string
		for _, p := range pts {
			status = append(status, fmt.Sprintf("%s %s: %s %s", p.Config.Name, p.Kind, p.Status, p.Failure))
		}
		t.Fatalf("run %+v with %d points:\n%s", run, len(pts), strings.Join(status, "\n"))
	}
	var figOut bytes.Buffer
	if err := runFigures(context.Background(), []string{"--run", dir, "--formats", "svg"}, nil, &figOut, &figOut); err != nil {
		t.Fatalf("figures --run %s: %v\n%s", dir, err, figOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, report.ReportHTML)); err != nil {
		t.Error(err)
	}

	// --validate 0 as the run had: a resume validates a run that has no
	// validation yet, with this executable as the server by default, and a
	// test binary asked to serve runs this package's tests instead until
	// the validation gives up waiting for it.
	stdout.Reset()
	if err := runBench(context.Background(), []string{"--resume", dir, "--no-figures", "--validate", "0"}, nil, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("bench --resume --no-figures --validate 0: %v", err)
	}
	if !strings.Contains(stdout.String(), "2 already measured") {
		t.Errorf("resume of a finished run: %s", stdout.String())
	}
}

// untwinned returns the names of e's configurations but its A/A twin.
func untwinned(e harness.Experiment) []string {
	var out []string
	for _, c := range e.Configs {
		if e.Twin == nil || c.Name != e.Twin.Name {
			out = append(out, c.Name)
		}
	}
	return out
}
