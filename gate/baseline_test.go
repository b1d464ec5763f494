package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

func testSetup() Setup {
	return Setup{
		Profile:     "gate",
		Configs:     []results.ModelConfig{{Name: "netpoll", Model: "netpoll", Args: []string{}}},
		Workloads:   []results.Workload{{Protocol: "http", Conns: 64, Depth: 1, Arrival: "poisson", CPU: "exp:10us", Block: "0", Size: "0", Ops: "work=1"}},
		Fractions:   []float64{0.5},
		Repetitions: 6, Warmup: "500ms", Duration: "2s", CapacityOutstanding: 1, LoadWorkers: 1, Seed: 1,
	}
}

// TestBaselineRoundTrip checks that a written baseline reads back equal,
// with one line per point.
func TestBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	side := mkSide("baseline", "netpoll", results.KindCapacity, results.AllocsPerReq.Name, 0.001, 0.002, 0.001, 0.001)
	side.Points[1].Valid, side.Points[1].Why = false, "send lag p99 101µs exceeds 100µs"
	side.Unavailable["proactor"] = "io_uring_setup: operation not permitted"
	b := &Baseline{About: About, Setup: testSetup(), Provenance: results.Provenance{Commit: "abc", GoVersion: "go1.26", Time: time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)}, Side: *side}
	if err := WriteBaseline(dir, b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, BaselineFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, `    {"config":"netpoll"`) {
			lines++
		}
	}
	if lines != 4 {
		t.Errorf("%d point lines, want one per point (4):\n%s", lines, data)
	}
	got, err := ReadBaseline(dir)
	if err != nil {
		t.Fatalf("ReadBaseline: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, b)
	}
}

// TestReadBaselineRefuses checks that a baseline that cannot be trusted
// is an error, naming the problem: the gate is then undecided.
func TestReadBaselineRefuses(t *testing.T) {
	good := &Baseline{About: About, Setup: testSetup(), Side: *mkSide("baseline", "netpoll", results.KindCapacity, "allocs_per_req", 1)}
	for _, tc := range []struct {
		name string
		edit func(s string) string
		want string
	}{
		{name: "missing", edit: nil, want: "no such file"},
		{name: "unknown field", edit: func(s string) string { return strings.Replace(s, `"about"`, `"abuot"`, 1) }, want: `unknown field "abuot"`},
		{name: "schema", edit: func(s string) string { return strings.Replace(s, `"schema": 1`, `"schema": 2`, 1) }, want: "schema 2 (this build reads 1"},
		{name: "truncated", edit: func(s string) string { return s[:len(s)/2] }, want: "unexpected EOF"},
		{name: "no points", edit: func(s string) string {
			i := strings.Index(s, `"points": [`)
			return s[:i] + `"points": []}`
		}, want: "no points"},
		{name: "bad kind", edit: func(s string) string { return strings.Replace(s, `"kind":"capacity"`, `"kind":"closed"`, 1) }, want: `kind "closed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.edit != nil {
				if err := WriteBaseline(dir, good); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, BaselineFile)
				b, _ := os.ReadFile(path)
				os.WriteFile(path, []byte(tc.edit(string(b))), 0o644)
			}
			_, err := ReadBaseline(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadBaseline = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestSetupDiff checks that every differing field is named with both
// values.
func TestSetupDiff(t *testing.T) {
	a, b := testSetup(), testSetup()
	if d := a.Diff(&b); d != nil {
		t.Errorf("equal setups differ: %q", d)
	}
	b.Duration = "1s"
	b.Repetitions = 8
	b.Configs = append(b.Configs, results.ModelConfig{Name: "leaderfollowers/lifo"})
	d := a.Diff(&b)
	want := []string{`configs: [{"name":"netpoll"`, `repetitions: 8, not 6`, `duration: "1s", not "2s"`}
	if len(d) != len(want) {
		t.Fatalf("diff %q, want %d entries", d, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(d[i], w) {
			t.Errorf("diff[%d] = %q, want it to start with %q", i, d[i], w)
		}
	}
}

// TestFromRun checks the reduction of a run's points to a side: the
// suffix selects and is removed, verdicts and failures are kept with
// why, unavailable configurations are listed, and a point that was not
// measured carries no values.
func TestFromRun(t *testing.T) {
	run := &results.Run{Unavailable: []results.Unavailable{{Config: results.ModelConfig{Name: "proactor/head"}, Reason: "no io_uring"}}}
	ok := func(name string, kind results.Kind, rep int, valid bool) results.Point {
		p := results.Point{Config: results.ModelConfig{Name: name}, Kind: kind, Fraction: 1, Repetition: rep, Status: results.StatusOK,
			Load:       &loadgen.Result{Valid: valid, AchievedRatePerS: 40000, Latency: loadgen.Summary{Count: 100, P50Ns: 90000, P99Ns: 400000}},
			Server:     results.ServerCost{Requests: 80000, AllocsPerRequest: 0.00123456789, CtxswPerRequest: 0.4},
			Provenance: results.Provenance{Commit: "c0ffee", Dirty: true}}
		if !valid {
			p.Load.Reasons = []string{"send lag p99 101µs exceeds 100µs", "achieved rate 90% of target"}
		}
		return p
	}
	failed := ok("netpoll/head", results.KindCapacity, 2, true)
	failed.Status, failed.Load, failed.Failure = results.StatusFailed, nil, "the server exited\nstderr: panic"
	pts := []results.Point{
		ok("netpoll/base", results.KindCapacity, 0, true),
		ok("netpoll/head", results.KindCapacity, 0, true),
		ok("netpoll/head", results.KindCapacity, 1, false),
		failed,
		{Config: results.ModelConfig{Name: "proactor/head"}, Kind: results.KindCapacity, Fraction: 1, Status: results.StatusUnavailable, Failure: "no io_uring"},
	}
	s := FromRun(run, pts, "head", "/head", []results.Metric{results.Capacity, results.AllocsPerReq, results.LatencyP50})
	if s.Label != "head" || s.Commit != "c0ffee" || !s.Dirty {
		t.Errorf("side %s commit %s dirty %t", s.Label, s.Commit, s.Dirty)
	}
	if len(s.Points) != 4 {
		t.Fatalf("%d points, want the 4 of /head", len(s.Points))
	}
	p0 := s.Points[0]
	if p0.Config != "netpoll" || !p0.Valid || p0.Why != "" || p0.Values["capacity_req_per_s"] != 40000 || p0.Values["allocs_per_req"] != 0.00123457 {
		t.Errorf("point 0: %+v", p0)
	}
	if p := s.Points[1]; p.Valid || p.Why != "send lag p99 101µs exceeds 100µs; achieved rate 90% of target" {
		t.Errorf("invalid point: %+v", p)
	}
	if p := s.Points[2]; p.Status != results.StatusFailed || p.Valid || p.Why != "the server exited …" || len(p.Values) != 0 {
		t.Errorf("failed point: %+v", p)
	}
	if s.Unavailable["proactor"] != "no io_uring" || len(s.Unavailable) != 1 {
		t.Errorf("unavailable %v", s.Unavailable)
	}
	if all := FromRun(run, pts, "all", "", nil); len(all.Points) != 5 || all.Points[0].Config != "netpoll/base" {
		t.Errorf("no suffix: %d points, first %q", len(all.Points), all.Points[0].Config)
	}
}
