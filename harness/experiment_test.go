package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/registry"
	"concbench/results"
)

// TestProfilesValidate checks that every profile is a valid experiment
// and keeps the promises its documentation makes.
func TestProfilesValidate(t *testing.T) {
	for _, name := range ProfileNames {
		t.Run(name, func(t *testing.T) {
			e, err := Profile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("profile %s: %v", name, err)
			}
			if e.Profile != name && name != "thesis" {
				t.Errorf("profile %s is named %q", name, e.Profile)
			}
			switch name {
			case "load":
				if e.Repetitions < 6 || len(e.Configs) != len(Families()) || !hasFractions(e.Fractions, 0.5, 0.9) || !e.CalibrateOnce {
					t.Errorf("load: %d repetitions, %d configurations, fractions %v, calibrate once %t; want ≥ 6, every family, 0.5 and 0.9, true", e.Repetitions, len(e.Configs), e.Fractions, e.CalibrateOnce)
				}
			case "default":
				if e.Repetitions < 5 || len(e.Configs) != len(Families()) || len(e.RatesFromSlowest) == 0 || !e.CalibrateOnce {
					t.Errorf("suite: %d repetitions, %d configurations, rates from the slowest %v, calibrate once %t; want ≥ 5, every family, one at least, true", e.Repetitions, len(e.Configs), e.RatesFromSlowest, e.CalibrateOnce)
				}
				// The suite: ≥ 4 workloads, every model family in each,
				// each sized by the rule, and the point count of the
				// documented estimate.
				points := 0
				for _, w := range e.Workloads {
					models := map[string]bool{}
					for _, c := range e.Configs {
						if w.runs(c.Name) {
							models[c.Model] = true
							points += e.Repetitions * (1 + len(e.Fractions) + len(e.Rates) + len(e.RatesFromSlowest))
						}
						if c.Sizing != SizeRule {
							t.Errorf("suite: %s is not sized by the rule", c.Name)
						}
					}
					if len(models) != 6 {
						t.Errorf("suite: workload %s runs models %v, want all 6", w.Name, models)
					}
				}
				if len(e.Workloads) < 4 || points != 300 {
					t.Errorf("suite: %d workloads, %d points; want ≥ 4 and the 300 of the documented estimate", len(e.Workloads), points)
				}
				// A mechanisms point after each equal-load point of the
				// first repetition, in windows of its own.
				if e.Mechanisms != 1 || e.MechanismsWarmup != Duration(DefaultMechanismsWarmup) || e.MechanismsDuration != Duration(DefaultMechanismsDuration) {
					t.Errorf("suite: mechanisms %d (%v, %v), want 1 (%v, %v)", e.Mechanisms, e.MechanismsWarmup, e.MechanismsDuration, DefaultMechanismsWarmup, DefaultMechanismsDuration)
				}
			case "thesis":
				parts := ThesisParts()
				var names []string
				for _, p := range parts {
					names = append(names, p.Profile)
					if err := p.Validate(); err != nil {
						t.Errorf("thesis part %s: %v", p.Profile, err)
					}
					if p.Repetitions < 10 || time.Duration(p.Duration) < 3*time.Second {
						t.Errorf("thesis part %s: %d repetitions, %v windows; want ≥ 10 and ≥ 3s", p.Profile, p.Repetitions, p.Duration)
					}
				}
				if !slices.Equal(names, []string{"thesis/default", "thesis/cores", "thesis/threads"}) {
					t.Errorf("thesis parts %v", names)
				}
			case "cores":
				if e.Sweep != SweepCores || len(e.RatesFromSlowest) != 0 || !e.hasSLO() || e.Mechanisms != 0 {
					t.Errorf("cores: sweep %q, rates from the slowest %v, an objective %t, mechanisms %d; want %q, none, true, 0", e.Sweep, e.RatesFromSlowest, e.hasSLO(), e.Mechanisms, SweepCores)
				}
				e.ServerCPUs, e.LoadCPUs = "0-7", "8-15"
				r, err := e.WithDefaults().Resolve()
				if err != nil {
					t.Fatal(err)
				}
				counts := map[string][]int{}
				for _, c := range r.Configs {
					base, _, _ := strings.Cut(c.Name, CPUsSuffix)
					counts[base] = append(counts[base], c.CPUs)
				}
				if len(counts) != 6 || !slices.Equal(counts["netpoll"], []int{1, 2, 4, 8}) {
					t.Errorf("cores on 8 server CPUs: %v", counts)
				}
				if s := r.Sizes["leaderfollowers/lifo/cpus=2/cpu"]; s.Threads != 2 {
					t.Errorf("cores: leaderfollowers on 2 CPUs sized %+v, want 2 threads", s)
				}
			case "variants":
				for _, c := range e.Configs {
					if c.Model == "leaderfollowers" && c.MinPool != 4 {
						t.Errorf("variants: %s has a floor of %d threads, want 4", c.Name, c.MinPool)
					}
				}
			case "threads":
				// Every pool model at every thread count, sized as the
				// rule sizes its own T (a P per thread it runs and the
				// spare); the references once; and the point count of
				// the documented estimate.
				for _, n := range []int{1, 8} {
					e.ServerCPUs, e.LoadCPUs = fmt.Sprintf("0-%d", n-1), fmt.Sprintf("%d-%d", n, 2*n-1)
					r, err := e.WithDefaults().Resolve()
					if err != nil {
						t.Fatal(err)
					}
					counts := map[string][]int{}
					refs := 0
					for _, c := range r.Configs {
						base, k, ok := strings.Cut(c.Name, ThreadsSuffix)
						if !ok {
							refs++
							continue
						}
						k1, err := strconv.Atoi(k)
						if err != nil {
							t.Fatalf("threads: configuration %s: %v", c.Name, err)
						}
						counts[base] = append(counts[base], k1)
						spare := registry.SpareProcs
						want := map[string]Size{
							"leaderfollowers":      {Pool: k1, Threads: k1, GOMAXPROCS: k1 + spare},
							"halfsynchalfreactive": {Pool: k1, Threads: k1, GOMAXPROCS: k1 + 1 + spare},
							"activeobject":         {Pool: k1, Threads: n, GOMAXPROCS: k1 + n + spare},
						}[c.Model]
						for _, w := range r.Workloads {
							s := r.Sizes[c.Name+"/"+w.Name]
							if s.Pool != want.Pool || s.Threads != want.Threads || s.GOMAXPROCS != want.GOMAXPROCS {
								t.Errorf("threads on %d CPUs: %s under %s sized %+v, want pool %d, threads %d, GOMAXPROCS %d (the rule's mapping of T)",
									n, c.Name, w.Name, s, want.Pool, want.Threads, want.GOMAXPROCS)
							}
						}
					}
					for _, base := range []string{"leaderfollowers/lifo", "halfsynchalfreactive", "activeobject"} {
						if !slices.Equal(counts[base], ThreadCounts(n)) || slices.Max(counts[base]) < 2*n {
							t.Errorf("threads on %d CPUs: %s at thread counts %v, want %v (up to 2n at least)", n, base, counts[base], ThreadCounts(n))
						}
					}
					points := 0
					for _, w := range r.Workloads {
						for _, c := range r.Configs {
							if w.runs(c.Name) {
								points += r.Repetitions * (1 + len(r.Fractions) + len(r.Rates) + len(r.RatesFromSlowest))
							}
						}
					}
					names := []string{}
					for _, w := range r.Workloads {
						names = append(names, w.Name)
					}
					if wantPoints := (3*len(ThreadCounts(n)) + 2) * 2 * 2 * r.Repetitions; refs != 2 || len(counts) != 3 || !slices.Equal(names, []string{"cpu", "block"}) || len(r.RatesFromSlowest) != 1 || points != wantPoints {
						t.Errorf("threads on %d CPUs: %d references, %d swept models, workloads %v, rates from the slowest %v, %d points; want 2, 3, [cpu block], one, %d",
							n, refs, len(counts), names, r.RatesFromSlowest, points, wantPoints)
					}
				}
			case "gate":
				if e.Repetitions < 6 || len(e.Configs) != 3 || !hasFractions(e.Fractions, 0.1, 0.5) || len(e.Fractions) != 2 {
					t.Errorf("gate: %d repetitions, %d configurations, fractions %v; want ≥ 6, 3, 0.1 and 0.5", e.Repetitions, len(e.Configs), e.Fractions)
				}
			case "nginx":
				// The model and real nginx side by side in each mode,
				// under one workload without work, at capacity and one
				// equal load.
				var pairs []string
				for _, c := range e.Configs {
					mode, err := nginxMode(c.Args)
					if err != nil {
						t.Errorf("nginx: %s: %v", c.Name, err)
					}
					pairs = append(pairs, c.Model+" "+mode)
				}
				want := []string{"acceptmutex mutex", "nginx mutex", "acceptmutex exclusive", "nginx exclusive", "acceptmutex reuseport", "nginx reuseport"}
				if !slices.Equal(pairs, want) || len(e.Workloads) != 1 || e.Workloads[0].CPU != "0" || len(e.Fractions) != 0 ||
					!slices.Equal(e.RatesFromSlowest, []float64{SuiteRateFromSlowest}) || e.Repetitions < 5 {
					t.Errorf("nginx: configurations %v, workloads %+v, fractions %v, rates from the slowest %v, %d repetitions; want %v, one without CPU work, none, [%g], ≥ 5",
						pairs, e.Workloads, e.Fractions, e.RatesFromSlowest, e.Repetitions, want, SuiteRateFromSlowest)
				}
			case "asio":
				// The model and real asio side by side, at the nginx
				// profile's loads, with a mechanisms point.
				var names []string
				for _, c := range e.Configs {
					names = append(names, c.Model)
				}
				if !slices.Equal(names, []string{SharedQueueModel, AsioModel}) || e.Configs[0].MinPool != e.Configs[1].MinPool ||
					len(e.Workloads) != 1 || e.Workloads[0].CPU != "0" || len(e.Fractions) != 0 ||
					!slices.Equal(e.RatesFromSlowest, []float64{SuiteRateFromSlowest}) || e.Repetitions < 5 || e.Mechanisms < 1 {
					t.Errorf("asio: models %v (floors %d, %d), workloads %+v, fractions %v, rates from the slowest %v, %d repetitions, %d mechanisms points; want [%s %s] with one floor, one without CPU work, none, [%g], ≥ 5, ≥ 1",
						names, e.Configs[0].MinPool, e.Configs[1].MinPool, e.Workloads, e.Fractions, e.RatesFromSlowest, e.Repetitions, e.Mechanisms,
						SharedQueueModel, AsioModel, SuiteRateFromSlowest)
				}
			case "connections":
				models := map[string]bool{}
				for _, c := range e.Configs {
					models[c.Model] = true
				}
				most, idle := 0, 0
				for _, w := range e.Workloads {
					most = max(most, w.Conns)
					if w.Idle > 0 {
						idle = w.Conns + w.Idle
					}
				}
				if e.Repetitions < 5 || len(models) != 6 || len(e.Configs) != 6 || len(e.Fractions) != 0 || len(e.Rates) != 1 || most != 10000 || e.Workloads[0].Conns > 100 {
					t.Errorf("connections: %d repetitions, models %v, fractions %v, rates %v, conns %d..%d; want ≥ 5, the 6 models once each, no fractions, one rate, from ≤ 100 to 10000",
						e.Repetitions, models, e.Fractions, e.Rates, e.Workloads[0].Conns, most)
				}
				if idle != most {
					t.Errorf("connections: the control holds %d connections in all, want the largest count, %d", idle, most)
				}
				if ls := e.loads(); len(ls) != 1 || ls[0].kind != results.KindRate {
					t.Errorf("connections: loads %+v, want the rate alone (no capacity)", ls)
				}
			}
			// GOMAXPROCS is explicit for every model but netpoll and the
			// Proactor, whose default is their rule: by the sizing rule,
			// or fixed.
			e.ServerCPUs, e.LoadCPUs = "0", "1"
			r, err := e.WithDefaults().Resolve()
			if err != nil {
				t.Fatal(err)
			}
			for name, s := range r.Sizes {
				// nginx and asio are no Go programs; the nginx-style
				// model before it is in the model table runs with its
				// defaults.
				foreign := strings.HasPrefix(name, NginxModel+"/") || name == AsioModel || !hasShape(AcceptMutexModel) && strings.HasPrefix(name, AcceptMutexModel+"/")
				if s.GOMAXPROCS == 0 && !strings.HasPrefix(name, "netpoll") && !strings.HasPrefix(name, "proactor") && !foreign {
					t.Errorf("%s: %s leaves GOMAXPROCS to the default (%s)", e.Profile, name, s.Rule)
				}
			}
		})
	}
	if _, err := Profile("nosuch"); err == nil || !strings.Contains(err.Error(), strings.Join(ProfileNames, ", ")) {
		t.Errorf("Profile(nosuch) = %v, want an error listing the profiles", err)
	}
}

func hasFractions(fs []float64, want ...float64) bool {
	for _, w := range want {
		found := false
		for _, f := range fs {
			found = found || f == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestValidateMessages checks that each bad setting is reported with the
// value and the accepted range, and that every bad setting is reported,
// not only the first.
func TestValidateMessages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(e *Experiment)
		want   []string
	}{
		{name: "no configs", change: func(e *Experiment) { e.Configs = nil }, want: []string{"0 configurations (accepted: 1..64)"}},
		{name: "duplicate config", change: func(e *Experiment) { e.Configs = append(e.Configs, e.Configs[0]) }, want: []string{`name "leaderfollowers/lifo" used twice`}},
		{name: "bad name", change: func(e *Experiment) { e.Configs[0].Name = "a b" }, want: []string{`name "a b" invalid (accepted: 1..100 of`}},
		{name: "no model", change: func(e *Experiment) { e.Configs[0].Model = "" }, want: []string{"no model"}},
		{name: "threads", change: func(e *Experiment) { e.Configs[0].Threads = -1 }, want: []string{"threads -1 out of range (accepted: 0 for the model's default, or 1.."}},
		{name: "gomaxprocs", change: func(e *Experiment) { e.Configs[0].GOMAXPROCS = 5000 }, want: []string{"gomaxprocs 5000 out of range (accepted: 0 for the server's default, or 1..4096)"}},
		{name: "gomaxprocs twice", change: func(e *Experiment) { e.Configs[0].GOMAXPROCSPerConn = true }, want: []string{"gomaxprocs 4 and gomaxprocs_per_conn both set"}},
		{name: "reserved arg", change: func(e *Experiment) { e.Configs[0].Args = []string{"--cpus=1"} }, want: []string{`argument "--cpus=1" sets a flag the harness sets itself (--cpus`}},
		{name: "server CPU quota", change: func(e *Experiment) { e.ServerCPUQuota = 0.01 }, want: []string{"server CPU quota 0.01 out of range (accepted: 0 for none, or 0.1..1024 of one CPU)"}},
		{name: "fraction zero", change: func(e *Experiment) { e.Fractions = []float64{0} }, want: []string{"fraction 0 out of range (accepted: > 0 and ≤ 1 of capacity)"}},
		{name: "fraction over", change: func(e *Experiment) { e.Fractions = []float64{0.5, 1.2} }, want: []string{"fraction 1.2 out of range"}},
		{name: "fraction twice", change: func(e *Experiment) { e.Fractions = []float64{0.5, 0.5001} }, want: []string{"fraction 0.5001 given twice"}},
		{name: "rate from slowest", change: func(e *Experiment) { e.RatesFromSlowest = []float64{0.5, 0.5, 1.5} }, want: []string{"rate from the slowest 0.5 given twice", "rate from the slowest 1.5 out of range (accepted: > 0 and ≤ 1 of the slowest configuration's capacity)"}},
		{name: "mechanisms without rates", change: func(e *Experiment) { e.Mechanisms = 1 }, want: []string{"mechanisms 1 without rates from the slowest (accepted: 0, or rates from the slowest"}},
		{name: "mechanisms over repetitions", change: func(e *Experiment) { e.RatesFromSlowest, e.Mechanisms = []float64{0.7}, 6 }, want: []string{"mechanisms 6 out of range (accepted: 0 for none, or 1..5, the repetitions)"}},
		{name: "mechanisms windows", change: func(e *Experiment) {
			e.RatesFromSlowest, e.Mechanisms, e.MechanismsWarmup, e.MechanismsDuration = []float64{0.7}, 1, Duration(10*time.Millisecond), 0
		}, want: []string{"mechanisms warmup 10ms out of range (accepted: 100ms..", "mechanisms duration 0s out of range (accepted: 100ms.."}},
		{name: "ns per iter", change: func(e *Experiment) { e.NsPerIter = -1 }, want: []string{"ns per iteration -1 out of range (accepted: 0, or 0.001..1e+06)"}},
		{name: "workload config", change: func(e *Experiment) { e.Workloads[0].Configs = []string{"nosuch"} }, want: []string{`configuration "nosuch" is not a configuration of the experiment`}},
		{name: "repetitions", change: func(e *Experiment) { e.Repetitions = 0 }, want: []string{"repetitions 0 out of range (accepted: 1..100)"}},
		{name: "warmup", change: func(e *Experiment) { e.Warmup = Duration(50 * time.Millisecond) }, want: []string{"warmup 50ms out of range (accepted: 100ms..1h0m0s"}},
		{name: "duration", change: func(e *Experiment) { e.Duration = 0 }, want: []string{"duration 0s out of range (accepted: 100ms..1h0m0s)"}},
		{name: "outstanding", change: func(e *Experiment) { e.CapacityOutstanding = 0 }, want: []string{"capacity outstanding 0 out of range"}},
		{name: "protocol", change: func(e *Experiment) { e.Workloads[0].Protocol = "smtp" }, want: []string{`protocol "smtp" unknown (accepted: binary, http)`}},
		{name: "conns", change: func(e *Experiment) { e.Workloads[0].Conns = 0 }, want: []string{"conns 0 out of range (accepted: 1..65536)"}},
		{name: "cpu", change: func(e *Experiment) { e.Workloads[0].CPU = "fast" }, want: []string{`cpu "fast"`}},
		{name: "onoff", change: func(e *Experiment) { e.Workloads[0].Arrival = "onoff" }, want: []string{`arrival "onoff" not supported by the harness (accepted: poisson, constant)`}},
		{name: "unnamed sweep", change: func(e *Experiment) { e.Workloads = append(e.Workloads, e.Workloads[0]) }, want: []string{`workload 0: name "" invalid`, `workload 1: name "" invalid`}},
		{name: "shared CPU", change: func(e *Experiment) { e.ServerCPUs, e.LoadCPUs = "0-1", "1" }, want: []string{`server CPUs "0-1" and load CPUs "1" share CPU 1 (accepted: disjoint lists`}},
		{name: "one CPU list", change: func(e *Experiment) { e.ServerCPUs = "0" }, want: []string{"give both or neither"}},
		{name: "bad CPU list", change: func(e *Experiment) { e.ServerCPUs, e.LoadCPUs = "x", "1" }, want: []string{`server CPUs: cpu list "x"`}},
		{name: "colliding files", change: func(e *Experiment) { e.Configs[1].Name = "leaderfollowers_lifo" }, want: []string{`configurations "leaderfollowers/lifo" and "leaderfollowers_lifo" would share point files`}},
		{name: "rates from nowhere", change: func(e *Experiment) { e.Configs[1].RatesFrom = "nosuch" }, want: []string{`rates_from "nosuch" is not a configuration`}},
		{name: "rates from itself", change: func(e *Experiment) { e.Configs[1].RatesFrom = e.Configs[1].Name }, want: []string{"rates_from names itself"}},
		{name: "rates chained", change: func(e *Experiment) {
			e.Configs[1].RatesFrom, e.Configs[2].RatesFrom = e.Configs[2].Name, e.Configs[3].Name
		},
			want: []string{`takes its own rates from "leaderfollowers/os"`}},
		{name: "several at once", change: func(e *Experiment) { e.Repetitions, e.Fractions = 0, nil }, want: []string{"repetitions 0 out of range", "0 fractions (accepted: 1..32, or 0 with rates, rates from the slowest or a latency objective)"}},
		{name: "sizing unknown", change: func(e *Experiment) { e.Configs[2].Sizing = "auto" }, want: []string{`sizing "auto" unknown (accepted: empty for the values given, or "rule")`}},
		{name: "rule and threads", change: func(e *Experiment) { e.Configs[0].Sizing = SizeRule }, want: []string{`sizing "rule" with threads or a per-connection form set`}},
		{name: "rule for an unknown model", change: func(e *Experiment) { e.Configs[2].Sizing, e.Configs[2].Model = SizeRule, "nosuch" }, want: []string{`model "nosuch" has no shape for the sizing rule: it is not in the model table, models/registry (accepted: leaderfollowers, halfsynchalfreactive,`}},
		{name: "floor without the rule", change: func(e *Experiment) { e.Configs[2].MinPool = 4 }, want: []string{`min_pool 4 out of range (accepted: 0, or 1..4096 with sizing "rule")`}},
		{name: "cpus", change: func(e *Experiment) { e.Configs[2].CPUs = -1 }, want: []string{"cpus -1 out of range"}},
		{name: "sweep", change: func(e *Experiment) { e.Sweep = "models" }, want: []string{`sweep "models" unknown (accepted: threads, cores)`}},
		{name: "rate zero", change: func(e *Experiment) { e.Rates = []float64{0} }, want: []string{"rate 0 req/s out of range (accepted: 1..1e+08)"}},
		{name: "rate twice", change: func(e *Experiment) { e.Rates = []float64{5000, 5000.2} }, want: []string{"rate 5000.2 given twice"}},
		{name: "max conns", change: func(e *Experiment) { e.Configs[0].MaxConns = -1 }, want: []string{"max_conns -1 out of range"}},
		{name: "max conns reason", change: func(e *Experiment) { e.Configs[0].MaxConns = 10 }, want: []string{"max_conns 10 without max_conns_reason"}},
		{name: "threads twice", change: func(e *Experiment) { e.Configs[0].ThreadsPerConn = true }, want: []string{"threads 4 and threads_per_conn both set"}},
		{name: "threads per conn over", change: func(e *Experiment) {
			e.Workloads[0].Conns = 5000
			e.Configs = []Config{{Name: "tpc", Model: "threadperconn", ThreadsPerConn: true}}
		}, want: []string{"threads per connection under workload http/conns=5000 would be 5000 (accepted: up to 4096; set max_conns"}},
		{name: "gomaxprocs per conn over", change: func(e *Experiment) {
			e.Workloads[0].Conns = 5000
			e.Configs = []Config{{Name: "tpc", Model: "threadperconn", GOMAXPROCSPerConn: true}}
		}, want: []string{"gomaxprocs per connection under workload http/conns=5000 would be 5002 (accepted: up to 4096 connections; set max_conns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Profile("default")
			if err != nil {
				t.Fatal(err)
			}
			// One workload and fractions of capacity, as the default
			// profile was before its workload suite, and fixed sizes:
			// the cases change them.
			e.Workloads, e.Fractions, e.RatesFromSlowest, e.Mechanisms = []Workload{{Workload: DefaultWorkload()}}, []float64{0.1, 0.5}, nil, 0
			e.Configs = []Config{
				{Name: "leaderfollowers/lifo", Model: "leaderfollowers", Args: []string{"--promotion", "lifo"}, Threads: 4, GOMAXPROCS: 4},
				{Name: "halfsynchalfreactive", Model: "halfsynchalfreactive", Threads: 4, GOMAXPROCS: 5},
				{Name: "proactor", Model: "proactor"},
				{Name: "leaderfollowers/os", Model: "leaderfollowers", Args: []string{"--promotion", "os"}, Threads: 4, GOMAXPROCS: 4},
			}
			tc.change(&e)
			err = e.Validate()
			if err == nil {
				t.Fatalf("Validate accepted %s", tc.name)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestRatesAndCaps checks what an experiment with absolute rates and a
// model's connection cap runs: rate points without a capacity point
// unless there are fractions, the rates after the fractions with seeds
// of their own, and a capped configuration's workloads past its cap
// accepted (not run) where its per-connection settings would be out of
// range.
func TestRatesAndCaps(t *testing.T) {
	e, err := Profile("connections")
	if err != nil {
		t.Fatal(err)
	}
	e.Rates = []float64{5000, 20000}
	w := e.Workloads[0]
	w.Name, w.Conns = "conns=4096", models.MaxThreads
	e.Workloads = append(e.Workloads, w)
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	var tpc *Config
	for i := range e.Configs {
		if e.Configs[i].Model == "threadperconn" {
			tpc = &e.Configs[i]
		}
	}
	if tpc == nil || tpc.MaxConns != models.MaxThreads || tpc.Sizing != SizeRule {
		t.Fatalf("connections: thread per connection is %+v, want threads and a P per connection by the rule, capped at %d", tpc, models.MaxThreads)
	}
	for _, tc := range []struct {
		name      string
		conns     int
		wantCap   bool
		wantServe string
	}{
		{name: "within", conns: 4000, wantServe: "--threads 4096 --gomaxprocs 4002"},
		{name: "at the cap", conns: models.MaxThreads, wantServe: "--threads 4096 --gomaxprocs 4096"},
		{name: "over", conns: 10000, wantCap: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{}
			w.Protocol, w.Conns = "http", tc.conns
			reason := tpc.overCap(&w)
			if (reason != "") != tc.wantCap {
				t.Fatalf("overCap(%d connections) = %q, want a reason: %t", tc.conns, reason, tc.wantCap)
			}
			if tc.wantCap && (!strings.Contains(reason, "10000 connections exceed the model's limit of 4096") || !strings.Contains(reason, "503")) {
				t.Errorf("overCap = %q, want the counts and the model's reason", reason)
			}
			if got := strings.Join(serveArgsOf(tpc, &w, ""), " "); !tc.wantCap && !strings.Contains(got, tc.wantServe) {
				t.Errorf("serveArgs = %q, want %q", got, tc.wantServe)
			}
		})
	}

	mixed := e
	mixed.Fractions = []float64{0.5}
	var got []string
	for _, l := range mixed.loads() {
		got = append(got, fmt.Sprintf("%s/%g/%g/%d", l.kind, l.fraction, l.rate, l.seedIdx))
	}
	if want := "capacity/0/0/0 open/0.5/0/1 rate/0/5000/2 rate/0/20000/3"; strings.Join(got, " ") != want {
		t.Errorf("loads = %v, want %s", got, want)
	}
}

// TestExperimentJSON checks that an experiment survives JSON (run.json,
// --experiment files) unchanged, with durations written as text.
func TestExperimentJSON(t *testing.T) {
	e, err := Profile("thesis")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"warmup":"1s"`) || !strings.Contains(string(b), `"duration":"3s"`) {
		t.Errorf("durations not written as text: %s", b)
	}
	var back Experiment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Errorf("round trip changed the experiment:\n%s\n%s", b, b2)
	}
	var d Duration
	if err := json.Unmarshal([]byte(`"soon"`), &d); err == nil {
		t.Error(`Duration accepted "soon"`)
	}
}

// TestWithDefaults checks the defaults an experiment file may leave out.
func TestWithDefaults(t *testing.T) {
	var e Experiment
	if err := json.Unmarshal([]byte(`{"configs":[{"name":"n","model":"netpoll"}],"workloads":[{"protocol":"http","conns":4}],
		"fractions":[0.5],"repetitions":1,"warmup":"100ms","duration":"100ms"}`), &e); err != nil {
		t.Fatal(err)
	}
	e = e.WithDefaults()
	w := e.Workloads[0]
	if e.Profile != "custom" || w.Depth != 1 || w.Arrival != "poisson" || w.CPU != "0" || w.Block != "0" || w.Size != "0" || w.Ops != "work=1" ||
		e.CapacityOutstanding != 1 || e.LoadWorkers != 0 {
		t.Errorf("WithDefaults = %+v", e)
	}
	if err := e.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestServeArgs checks the serve command line, GOMAXPROCS per connection
// included.
func TestServeArgs(t *testing.T) {
	w := Workload{}
	w.Protocol, w.Conns = "binary", 16
	for _, tc := range []struct {
		name string
		c    Config
		cpus string
		want string
	}{
		{name: "plain", c: Config{Model: "netpoll"}, want: "serve --model netpoll --protocol binary"},
		{name: "pinned", c: Config{Model: "leaderfollowers", Threads: 4, GOMAXPROCS: 4, Args: []string{"--promotion", "os"}}, cpus: "0",
			want: "serve --model leaderfollowers --protocol binary --cpus 0 --threads 4 --gomaxprocs 4 --promotion os"},
		{name: "per connection", c: Config{Model: "threadperconn", GOMAXPROCSPerConn: true}, want: "serve --model threadperconn --protocol binary --gomaxprocs 18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(serveArgsOf(&tc.c, &w, tc.cpus), " "); got != tc.want {
				t.Errorf("serveArgs = %q, want %q", got, tc.want)
			}
		})
	}
}

// serveArgsOf returns the serve command line of c under w on cpus, sized
// for a server of one CPU.
func serveArgsOf(c *Config, w *Workload, cpus string) []string {
	rc := runConfig{cfg: *c, wl: *w, cpus: cpus, size: c.size(w, 1)}
	return serveArgs(&rc)
}

// TestEstimateMechanisms checks what the mechanisms points add to a
// suite's estimate: one point per configuration and workload (the first
// repetition's), each its warm-up, window and a point's overhead.
func TestEstimateMechanisms(t *testing.T) {
	e, err := Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	tm := Timing{PointOverhead: 50 * time.Millisecond, ServerStart: 60 * time.Millisecond}
	n1, d1 := e.Estimate(tm)
	off := e
	off.Mechanisms = 0
	n0, d0 := off.Estimate(tm)
	pairs := len(e.Workloads) * len(e.Configs)
	if n1-n0 != pairs || d1-d0 != time.Duration(pairs)*(DefaultMechanismsWarmup+DefaultMechanismsDuration+tm.PointOverhead) {
		t.Errorf("mechanisms add %d points and %v; want %d and %v", n1-n0, d1-d0, pairs, time.Duration(pairs)*(DefaultMechanismsWarmup+DefaultMechanismsDuration+tm.PointOverhead))
	}
}

// TestCapacityRequests checks that CapacityRequests sizes the capacity
// point's window by request count, and only the capacity point's: the
// open points keep Duration.
func TestCapacityRequests(t *testing.T) {
	exp, err := Profile("gate")
	if err != nil {
		t.Fatal(err)
	}
	exp = exp.WithDefaults()
	exp.CapacityRequests = 25_000
	if err := exp.Validate(); err != nil {
		t.Fatal(err)
	}
	r := &runner{exp: exp}
	rc := &runConfig{cfg: exp.Configs[0], wl: exp.Workloads[0]}
	lc := r.loadConfig(rc, &results.Point{Kind: results.KindCapacity}, "127.0.0.1:1", 0)
	if lc.Requests != 25_000 || lc.Duration != 0 || !lc.Closed {
		t.Errorf("capacity point: requests %d, duration %v, closed %v; want 25000 requests in a closed loop, no duration", lc.Requests, lc.Duration, lc.Closed)
	}
	if err := lc.Validate(); err != nil {
		t.Errorf("capacity point's load config: %v", err)
	}
	lc = r.loadConfig(rc, &results.Point{Kind: results.KindOpen, OfferedRatePerS: 1000}, "127.0.0.1:1", 0)
	if lc.Requests != 0 || lc.Duration != time.Duration(exp.Duration) {
		t.Errorf("open point: requests %d, duration %v; want the experiment's duration %v", lc.Requests, lc.Duration, exp.Duration)
	}
	exp.CapacityRequests = -1
	if err := exp.Validate(); err == nil || !strings.Contains(err.Error(), "capacity requests -1 out of range") {
		t.Errorf("CapacityRequests -1: %v, want out of range", err)
	}
}
