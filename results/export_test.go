package results_test

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"concbench/results"
	"concbench/results/resultstest"
)

func TestWriteCSV(t *testing.T) {
	_, r, pts := readSynthetic(t)
	out := resultstest.GoldenWrite(t, "points.csv", func(w io.Writer) error { return results.WriteCSV(w, r, pts) })

	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(pts)+1 {
		t.Fatalf("%d rows, want a header and %d points", len(rows), len(pts))
	}
	header := rows[0]
	if !slices.Equal(header, results.CSVHeader()) {
		t.Errorf("header %q, want %q", header, results.CSVHeader())
	}
	for _, m := range results.Metrics() {
		if !slices.Contains(header, m.Name) {
			t.Errorf("header lacks metric %s", m.Name)
		}
	}
	col := func(name string) int { return slices.Index(header, name) }
	if c := col("failed_checks"); c != col("invalid_reasons")+1 || col("over_capacity") != c+1 {
		t.Errorf("failed_checks and over_capacity are not right after invalid_reasons: %q", header)
	}
	invalid, overCapacity := 0, 0
	for i, row := range rows[1:] {
		// Invalid points are in the CSV, with their checks; valid ones
		// have none.
		switch row[col("valid")] {
		case "false":
			invalid++
			if row[col("failed_checks")] == "" || row[col("invalid_reasons")] == "" {
				t.Errorf("row %d: invalid without its checks (%q) or reasons (%q)", i+1, row[col("failed_checks")], row[col("invalid_reasons")])
			}
			if n, m := len(strings.Split(row[col("failed_checks")], " | ")), len(strings.Split(row[col("invalid_reasons")], " | ")); n != m {
				t.Errorf("row %d: %d checks for %d reasons", i+1, n, m)
			}
		case "true":
			if row[col("failed_checks")] != "" || row[col("over_capacity")] != "false" {
				t.Errorf("row %d: valid, with checks %q, over_capacity %q", i+1, row[col("failed_checks")], row[col("over_capacity")])
			}
		}
		if row[col("over_capacity")] == "true" {
			overCapacity++
			if !strings.HasPrefix(row[col("failed_checks")], "over-capacity") {
				t.Errorf("row %d: over capacity, but the main check is %q", i+1, row[col("failed_checks")])
			}
		}
		if len(row) != len(header) {
			t.Errorf("row %d has %d cells for %d columns", i+1, len(row), len(header))
		}
		switch row[col("status")] {
		case "failed", "unavailable":
			// A point without a measurement has empty cells, not zeros.
			for _, m := range results.Metrics() {
				if v := row[col(m.Name)]; v != "" {
					t.Errorf("row %d (%s): %s = %q, want empty", i+1, row[col("status")], m.Name, v)
				}
			}
			if row[col("failure")] == "" {
				t.Errorf("row %d: a %s point without its reason", i+1, row[col("status")])
			}
		}
		if row[col("config")] == "netpoll" && row[col("status")] == "ok" && row[col("runqueue_ns_per_req")] != "" {
			t.Errorf("row %d: netpoll has no schedstat, but runqueue_ns_per_req = %q", i+1, row[col("runqueue_ns_per_req")])
		}
	}
	wantInvalid := 0
	for i := range pts {
		if pts[i].Invalid() {
			wantInvalid++
		}
	}
	if invalid != wantInvalid || overCapacity != 2 {
		t.Errorf("%d invalid rows (%d over capacity), want every invalid point: %d (2 over capacity)", invalid, overCapacity, wantInvalid)
	}
}

func TestBenchName(t *testing.T) {
	tests := []struct {
		name string
		p    results.Point
		want string
	}{
		{name: "variant after the model", p: results.Point{Config: results.ModelConfig{Name: "leaderfollowers/lifo", Model: "leaderfollowers"}, Kind: results.KindOpen, Fraction: 0.5},
			want: "Serve/config=leaderfollowers-lifo/kind=open/load=0.50"},
		{name: "no variant", p: results.Point{Config: results.ModelConfig{Name: "netpoll", Model: "netpoll"}, Kind: results.KindCapacity, Fraction: 1},
			want: "Serve/config=netpoll/kind=capacity/load=max"},
		{name: "workload of its own", p: results.Point{Config: results.ModelConfig{Name: "leaderfollowers/lifo/block", Model: "leaderfollowers"}, WorkloadName: "block", Kind: results.KindRate, OfferedRatePerS: 7967},
			want: "Serve/workload=block/config=leaderfollowers-lifo/kind=rate/load=7967"},
		{name: "reserved characters", p: results.Point{Config: results.ModelConfig{Name: "hshr pooled/q=64", Model: "halfsynchalfreactive"}, Kind: results.KindOpen, Fraction: 0.125},
			want: "Serve/config=hshr-pooled-q-64/kind=open/load=0.12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := results.BenchName(&tc.p); got != tc.want {
				t.Errorf("BenchName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWriteBench reads the export back with benchfmt.Reader: one result
// per valid repetition (no invalid, failed or unavailable point; a
// mechanisms point only with its counts, and only them), key=value
// names, the configuration lines, the units, and the values of the
// points.
func TestWriteBench(t *testing.T) {
	_, r, pts := readSynthetic(t)
	out := resultstest.GoldenWrite(t, "bench.txt", func(w io.Writer) error { return results.WriteBench(w, r, pts) })

	byName := map[string][]*results.Point{}
	valid, invalid := 0, 0
	for i := range pts {
		if pts[i].Invalid() {
			invalid++
		}
		if pts[i].Valid() && (pts[i].Kind != results.KindMechanisms || pts[i].Server.Mechanisms != nil) {
			valid++
			n := results.BenchName(&pts[i])
			byName[n] = append(byName[n], &pts[i])
		}
	}
	if invalid < 2 {
		t.Fatalf("the synthetic run has %d invalid points; the test needs some", invalid)
	}
	rd := benchfmt.NewReader(bytes.NewReader(out), "bench.txt")
	results_, seen := 0, map[string]int{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			results_++
			name := rec.Name.String()
			want := byName[name]
			if seen[name] >= len(want) {
				t.Errorf("result %q: %d results, but only %d valid points have that name", name, seen[name]+1, len(want))
				continue
			}
			p := want[seen[name]]
			seen[name]++
			base, parts := rec.Name.Parts()
			if string(base) != "Serve" || len(parts) != 3 || !bytes.HasPrefix(parts[0], []byte("/config=")) {
				t.Errorf("name %q: base %q parts %q, want Serve with 3 key=value parts, config first", name, base, parts)
			}
			for key, want := range map[string]string{"goos": "linux", "goarch": "amd64", "cpu": "Synthetic CPU @ 2.00GHz",
				"commit": "0123456789abcdef0123456789abcdef01234567", "valid": ""} {
				if got := rec.GetConfig(key); got != want {
					t.Errorf("%s: config %s = %q, want %q", name, key, got, want)
				}
			}
			if rec.Iters != int(p.Load.Requests.OK) {
				t.Errorf("%s: iters %d, want %d", name, rec.Iters, p.Load.Requests.OK)
			}
			if p.Kind == results.KindMechanisms {
				m := p.Server.Mechanisms
				for unit, want := range map[string]float64{
					"syscalls/op": float64(m.Total), "read-syscalls/op": float64(m.Syscalls["read"]),
					"futex-wakes/op": float64(m.FutexWakes), "wake-ipis/op": float64(m.WakeIPIs),
				} {
					if got, ok := rec.Value(unit); !ok || !near(got, want/float64(p.Server.Requests)) {
						t.Errorf("%s: %s = %v (present %v), want %v", name, unit, got, ok, want/float64(p.Server.Requests))
					}
				}
				if _, ok := rec.Value("p99-sec"); ok {
					t.Errorf("%s: a mechanisms point's latency in bench.txt; its counting perturbs it", name)
				}
				continue
			}
			for _, c := range []struct {
				unit  string // tidied, as the reader reports it
				value float64
				ok    bool
			}{
				{"p99-sec", float64(p.Load.Latency.P99Ns) / 1e9, true},
				{"ctxsw/op", p.Server.CtxswPerRequest, true},
				{"allocs/op", p.Server.AllocsPerRequest, true},
				{"B/op", p.Server.BytesPerRequest, true},
				{"cpu-sec/op", p.Server.CPUNsPerRequest / 1e9, true},
				{"req/s", p.Load.AchievedRatePerS, p.Kind == results.KindCapacity},
				{"runq-sec/op", p.Server.RunQueueNsPerRequest / 1e9, p.Server.SchedStat},
			} {
				got, ok := rec.Value(c.unit)
				if ok != c.ok || (ok && !near(got, c.value)) {
					t.Errorf("%s: %s = %v (present %v), want %v (present %v)", name, c.unit, got, ok, c.value, c.ok)
				}
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if results_ != valid {
		t.Errorf("%d results, want one per valid repetition: %d", results_, valid)
	}
	// Every repetition of netpoll open 0.90 is invalid: the benchmark is
	// absent, not a table of rejected measurements.
	if bytes.Contains(out, []byte("config=netpoll/kind=open/load=0.90")) {
		t.Errorf("bench.txt has netpoll open 0.90, whose every repetition is invalid")
	}
	units := rd.Units()
	for unit, want := range map[string]string{"p99-sec": "lower", "ctxsw/op": "lower", "req/s": "higher"} {
		if got := units.Get(unit, "better"); got == nil || got.Value != want {
			t.Errorf("unit %s: better=%v, want %q", unit, got, want)
		}
	}
}

// TestBenchstatReads runs benchstat (a tool of this module) on the
// export: it must read it without complaint and show the metrics.
func TestBenchstatReads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchstat")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	_, r, pts := readSynthetic(t)
	var buf bytes.Buffer
	if err := results.WriteBench(&buf, r, pts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, "tool", "benchstat", "-col", "/config", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	// One row per load, shared by every configuration's column.
	for _, want := range []string{"leaderfollowers-lifo", "halfsynchalfreactive", "p99-sec", "ctxsw/op", "allocs/op", "cpu-sec/op", "Serve/kind=open/load=0.50"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("benchstat output lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("parse")) || bytes.Contains(out, []byte("syntax")) {
		t.Errorf("benchstat complained:\n%s", out)
	}
}

// TestExportSLO: a search's result has a bench.txt line (slo-req/s, one
// iteration) and its CSV columns when valid; a spoiled one has no bench
// line, and its CSV row says why.
func TestExportSLO(t *testing.T) {
	_, r, _ := readSynthetic(t)
	res := func(invalid string) results.Point {
		return results.Point{Config: results.ModelConfig{Name: "netpoll"}, Kind: results.KindSLO, Status: results.StatusOK,
			SLO: &results.SLOResult{Percentile: 99, BoundNs: 1e6, RatePerS: 12000, LoPerS: 12000, HiPerS: 13000, CapacityPerS: 20000, Probes: 3, Invalid: invalid}}
	}
	for _, tc := range []struct {
		name      string
		p         results.Point
		wantBench string // "" no line
		wantCSV   string
	}{
		{"valid", res(""), "BenchmarkServe/config=netpoll/kind=slo/load=p99-1ms 1 12000 slo-req/s", "p99 ≤ 1ms,12000,13000,,"},
		{"spoiled", res("probe at 12000 req/s: invalid (generator-cpu)"), "", "p99 ≤ 1ms,12000,13000,probe at 12000 req/s: invalid (generator-cpu),"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bench, csvOut bytes.Buffer
			if err := results.WriteBench(&bench, r, []results.Point{tc.p}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(bench.String(), "kind=slo"); got != (tc.wantBench != "") || tc.wantBench != "" && !strings.Contains(bench.String(), tc.wantBench) {
				t.Errorf("bench.txt:\n%s\nwant the line %q", bench.String(), tc.wantBench)
			}
			if err := results.WriteCSV(&csvOut, r, []results.Point{tc.p}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(csvOut.String(), tc.wantCSV) {
				t.Errorf("points.csv:\n%s\nwant %q", csvOut.String(), tc.wantCSV)
			}
		})
	}
}

// TestSLOAggregate: a spoiled search's result is excluded from the
// aggregate, with its reason; probes of one index group together and
// have a file each.
func TestSLOAggregate(t *testing.T) {
	_, r, _ := readSynthetic(t)
	cfg := results.ModelConfig{Name: "netpoll"}
	var pts []results.Point
	for rep, invalid := range []string{"", "", "probe at 1 req/s: invalid (generator-cpu)"} {
		pts = append(pts,
			results.Point{Config: cfg, Kind: results.KindSLO, Status: results.StatusOK, Repetition: rep,
				SLO: &results.SLOResult{Percentile: 99, BoundNs: 1e6, RatePerS: float64(1000 * (rep + 1)), Invalid: invalid}},
			results.Point{Config: cfg, Kind: results.KindProbe, Status: results.StatusOK, Repetition: rep, Probe: 0, OfferedRatePerS: float64(500 * (rep + 1))},
			results.Point{Config: cfg, Kind: results.KindProbe, Status: results.StatusOK, Repetition: rep, Probe: 1, OfferedRatePerS: float64(700 * (rep + 1))})
	}
	groups := results.GroupPoints(r, pts)
	g := results.Find(groups, "netpoll", results.KindSLO, 0)
	if g == nil {
		t.Fatal("no SLO group")
	}
	a := g.Aggregate(results.SLOCapacity)
	if a.Stats.N != 2 || a.Stats.Median != 1500 || a.Excluded != 1 || !strings.Contains(a.ExcludedReasons[0], "generator-cpu") {
		t.Errorf("aggregate %+v, want the 2 valid results (median 1500) and the spoiled one excluded", a)
	}
	files := map[string]bool{}
	for i := range pts {
		files[results.PointFileName(&pts[i])] = true
	}
	if len(groups) != 3 || len(files) != len(pts) {
		t.Errorf("%d groups (want the result and 2 probe indexes), %d files for %d points", len(groups), len(files), len(pts))
	}
}
