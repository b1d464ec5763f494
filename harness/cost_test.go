package harness

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"concbench/internal/sysstat"
	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
)

// TestCost checks the window arithmetic on hand-made snapshots: per-request
// values over the server's own request count, gauges at the end, run-queue
// wait over the threads alive at both edges, counters that went down kept
// out of the differences, per-thread work matched by thread id.
func TestCost(t *testing.T) {
	before := &models.Snapshot{
		TimeUnixNs: 1_000_000_000,
		Rusage:     sysstat.Rusage{UserNs: 5e6, SystemNs: 2e6, Voluntary: 100, Involuntary: 10},
		Alloc:      sysstat.Alloc{Objects: 1000, Bytes: 64000},
		RSSBytes:   1 << 20, GoThreads: 7,
		Stats: models.Stats{
			Requests: 500,
			Counters: map[string]uint64{"promotions": 40, "followers": 3},
			Errors:   map[string]uint64{"peer_reset": 1},
			PerThread: []models.ThreadStats{
				{TID: 11, Role: "pool", Events: 10, Requests: 10, Promotions: 5},
				{TID: 12, Role: "pool", Events: 20, Requests: 20, Promotions: 6},
				{TID: 13, Role: "pool", Events: 30, Requests: 30},
			},
		},
	}
	after := &models.Snapshot{
		TimeUnixNs: 3_000_000_000,
		Rusage:     sysstat.Rusage{UserNs: 45e6, SystemNs: 22e6, Voluntary: 4100, Involuntary: 1010},
		Alloc:      sysstat.Alloc{Objects: 3000, Bytes: 264000},
		RSSBytes:   2 << 20, GoThreads: 9,
		Stats: models.Stats{
			Requests: 2500,
			Counters: map[string]uint64{"promotions": 1040, "followers": 1, "accepts": 8},
			Errors:   map[string]uint64{"peer_reset": 1, "truncated": 2},
			PerThread: []models.ThreadStats{
				{TID: 12, Role: "pool", Events: 1020, Requests: 1020, Promotions: 506},
				{TID: 11, Role: "pool", Events: 1010, Requests: 1010, Promotions: 505},
				{TID: 14, Role: "pool", Events: 5, Requests: 5}, // replaced thread 13
			},
		},
	}
	w := window{
		before: before, after: after,
		rqBefore: map[int]sysstat.ThreadSched{1: {RunNs: 1000, WaitNs: 100, Slices: 10}, 11: {RunNs: 5000, WaitNs: 1000, Slices: 100}, 13: {WaitNs: 50}},
		rqAfter:  map[int]sysstat.ThreadSched{1: {RunNs: 3000, WaitNs: 300, Slices: 30}, 11: {RunNs: 9000, WaitNs: 5000, Slices: 300}, 14: {WaitNs: 999_999}},
		perf:     &results.PerfCounters{ContextSwitches: 5000, TaskClockNs: 60e6},
	}
	got := w.cost()
	want := results.ServerCost{
		Requests:                   2000,
		WindowNs:                   2e9,
		VoluntaryCtxswPerRequest:   2,
		InvoluntaryCtxswPerRequest: 0.5,
		CtxswPerRequest:            2.5,
		UserNsPerRequest:           20000,
		SystemNsPerRequest:         10000,
		CPUNsPerRequest:            30000,
		AllocsPerRequest:           1,
		BytesPerRequest:            100,
		RSSBytes:                   2 << 20,
		GoThreads:                  9,
		RunQueueNsPerRequest:       (200 + 4000) / 2000.0, // threads 1 and 11; 13 exited, 14 is new
		SchedStat:                  true,
		// Thread 1 is not among the named (PerThread) threads: the
		// runtime's; 11 is named; 13 exited, 14 is new.
		Other: &results.OtherThreads{Threads: 1, CPUNsPerRequest: 2000 / 2000.0, SlicesPerRequest: 20 / 2000.0,
			NamedSlicesPerRequest: 200 / 2000.0},
		Perf:          w.perf,
		Counters:      map[string]uint64{"promotions": 1000, "accepts": 8},
		CountersAtEnd: map[string]uint64{"promotions": 1040, "followers": 1, "accepts": 8},
		Errors:        map[string]uint64{"truncated": 2},
		PerThread: []models.ThreadStats{
			{TID: 12, Role: "pool", Events: 1000, Requests: 1000, Promotions: 500},
			{TID: 11, Role: "pool", Events: 1000, Requests: 1000, Promotions: 500},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cost =\n%+v\nwant\n%+v", got, want)
	}
}

// TestCostIdle checks a window in which the server completed nothing: no
// division by zero, no NaN, zero per-request values.
func TestCostIdle(t *testing.T) {
	s := &models.Snapshot{TimeUnixNs: 5, Rusage: sysstat.Rusage{Voluntary: 3}, Stats: models.Stats{Requests: 7}}
	s2 := *s
	s2.Rusage.Voluntary = 9
	got := (&window{before: s, after: &s2, perfUnavailable: "perf: no"}).cost()
	if got.Requests != 0 || got.CtxswPerRequest != 0 || got.SchedStat || got.PerfUnavailable != "perf: no" {
		t.Errorf("cost = %+v", got)
	}
}

// TestRunQueueSelf reads this process's own threads' schedstat.
func TestRunQueueSelf(t *testing.T) {
	m, ok := runQueue(os.Getpid())
	if !ok || len(m) == 0 {
		t.Fatalf("runQueue(self) = %v, %t; want this process's threads (the kernel has schedstat)", m, ok)
	}
	if _, ok := m[os.Getpid()]; !ok {
		t.Errorf("runQueue(self) = %v lacks the main thread %d", m, os.Getpid())
	}
	if _, ok := runQueue(1 << 30); ok {
		t.Error("runQueue of a process that does not exist succeeded")
	}
}

// TestTail checks that the stderr tail keeps the last lines, including an
// unterminated one, and bounds a runaway line.
func TestTail(t *testing.T) {
	var tl tail
	for i := range 30 {
		fmt.Fprintf(&tl, "line %d\n", i)
	}
	tl.Write([]byte("partial"))
	got := strings.Split(tl.String(), "\n")
	if len(got) != stderrLines+1 || got[0] != "line 10" || got[stderrLines-1] != "line 29" || got[stderrLines] != "partial" {
		t.Errorf("tail = %q", got)
	}
	var long tail
	long.Write([]byte(strings.Repeat("x", 10000)))
	if n := len(long.String()); n != 4096 {
		t.Errorf("a runaway line kept %d bytes, want 4096", n)
	}
}

// TestCounterDeltas checks that a counter absent before counts from zero
// and that unchanged counters are left out of the differences.
func TestCounterDeltas(t *testing.T) {
	d, end := counterDeltas(map[string]uint64{"a": 5, "b": 2}, map[string]uint64{"a": 5, "b": 7, "c": 1})
	if !maps.Equal(d, map[string]uint64{"b": 5, "c": 1}) || !maps.Equal(end, map[string]uint64{"a": 5, "b": 7, "c": 1}) {
		t.Errorf("counterDeltas = %v, %v", d, end)
	}
}

// TestTheoryServers checks the choice of c and of the service time for
// the M/M/c ideal, and the points where there is no ideal or a caveat.
func TestTheoryServers(t *testing.T) {
	exp10, fixed10 := loadgen.Exp(10e3), loadgen.Fixed(10e3)
	for _, tc := range []struct {
		name      string
		cpu       loadgen.Dist
		block     loadgen.Dist
		info      models.Info
		wantC     int
		wantNil   bool
		wantWarns string
	}{
		{name: "LF 4 threads on 1 CPU", cpu: exp10, info: models.Info{CPUs: "0", NumCPU: 1, GOMAXPROCS: 4, Threads: 4}, wantC: 1},
		{name: "GOMAXPROCS bounds CPUs", cpu: exp10, info: models.Info{CPUs: "0-3", NumCPU: 4, GOMAXPROCS: 2, Threads: 4}, wantC: 2},
		{name: "threads bound CPUs", cpu: exp10, info: models.Info{CPUs: "0-7", NumCPU: 8, GOMAXPROCS: 8, Threads: 3}, wantC: 3},
		{name: "no thread count", cpu: exp10, info: models.Info{CPUs: "0-3", NumCPU: 4, GOMAXPROCS: 4}, wantC: 4},
		{name: "unparsable CPUs", cpu: exp10, info: models.Info{CPUs: "unknown", NumCPU: 2, GOMAXPROCS: 2}, wantC: 2},
		{name: "fixed work", cpu: fixed10, info: models.Info{CPUs: "0", GOMAXPROCS: 1}, wantC: 1, wantWarns: "assumes exponential service"},
		{name: "blocking work", cpu: exp10, block: loadgen.Fixed(1e6), info: models.Info{CPUs: "0"}, wantNil: true, wantWarns: "no M/M/c ideal: the workload has blocking work"},
		{name: "no work", cpu: loadgen.Fixed(0), info: models.Info{CPUs: "0"}, wantNil: true, wantWarns: "no CPU work"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := loadgen.Config{CPU: tc.cpu, Block: tc.block}
			th, warns := theory(&lc, tc.info, 20e3, nil)
			if tc.wantNil != (th == nil) {
				t.Fatalf("theory = %+v, want nil %t", th, tc.wantNil)
			}
			if th != nil && (th.C != tc.wantC || th.ServiceNs != 10e3 || th.RatePerS != 20e3) {
				t.Errorf("theory = %+v, want c %d, 10 µs service, 20000 req/s", th, tc.wantC)
			}
			if got := strings.Join(warns, "; "); !strings.Contains(got, tc.wantWarns) || (tc.wantWarns == "") != (got == "") {
				t.Errorf("warnings %q, want %q", got, tc.wantWarns)
			}
		})
	}
}

// TestCapacityMedian checks the rule for the open points' rate: the
// median of the configuration's valid capacities in repetitions 0..r.
func TestCapacityMedian(t *testing.T) {
	r := &runner{capacities: map[string]map[int]float64{}}
	valid := func(rep int, rate float64, ok bool) {
		r.remember(&results.Point{
			Config: results.ModelConfig{Name: "m"}, Kind: results.KindCapacity, Repetition: rep, Status: results.StatusOK,
			Load: &loadgen.Result{Valid: ok, AchievedRatePerS: rate},
		})
	}
	valid(0, 100, true)
	valid(1, 300, true)
	valid(2, 5000, false) // invalid: not used
	valid(3, 200, true)
	for _, tc := range []struct {
		rep  int
		want float64
	}{{0, 100}, {1, 200}, {2, 200}, {3, 200}, {9, 200}} {
		if got := r.capacity("m", tc.rep); got != tc.want {
			t.Errorf("capacity at repetition %d = %g, want %g", tc.rep, got, tc.want)
		}
	}
	if got := r.capacity("other", 3); got != 0 {
		t.Errorf("capacity of a configuration without measurements = %g, want 0", got)
	}
}

// TestSearchBounds checks what bounds a repetition's latency-objective
// search: its own capacity, or, with none valid, its own invalid
// capacity point's rate — never another repetition's measurement or
// result, so that repetitions are independent.
func TestSearchBounds(t *testing.T) {
	r := &runner{capacities: map[string]map[int]float64{}, beyondIn: map[string]map[int]bool{}}
	rc := &runConfig{name: "m"}
	slo := &SLO{Percentile: 99, Bound: Duration(time.Millisecond)}
	for _, p := range []struct {
		rep   int
		rate  float64
		valid bool
	}{{0, 9000, true}, {1, 7000, false}, {2, 12000, true}, {3, 5000, false}} {
		r.remember(&results.Point{
			Config: results.ModelConfig{Name: "m"}, Kind: results.KindCapacity, Repetition: p.rep, Status: results.StatusOK,
			Load: &loadgen.Result{Valid: p.valid, AchievedRatePerS: p.rate},
		})
		r.remember(&results.Point{Config: results.ModelConfig{Name: "m"}, Kind: results.KindSLO, Repetition: p.rep, Status: results.StatusOK,
			SLO: &results.SLOResult{RatePerS: p.rate / 2}})
	}
	for _, tc := range []struct {
		rep       int
		want      float64
		byInvalid bool
	}{{0, 9000, false}, {1, 7000, true}, {2, 12000, false}, {3, 5000, true}, {4, 0, false}} {
		s, byCeiling, byInvalid := r.newSearch(rc, tc.rep, slo)
		if s.capacity != tc.want || byInvalid != tc.byInvalid || byCeiling || s.boundNs != 1e6 {
			t.Errorf("search of repetition %d: %+v (by an invalid capacity %t), want bounded by %g (%t)", tc.rep, s, byInvalid, tc.want, tc.byInvalid)
		}
	}
	// Another repetition's results change nothing.
	before, _, _ := r.newSearch(rc, 2, slo)
	r.capacities["m"][0], r.invalidCaps["m"][1] = 1, 1
	if after, _, _ := r.newSearch(rc, 2, slo); after != before {
		t.Errorf("repetition 2's search %+v changed to %+v with repetition 0's results", before, after)
	}
}

// TestRunQueueThreadLimit checks that the run-queue waits are read for a
// process with few threads and not for one with more than
// maxRunQueueThreads (this process, with that many threads parked),
// saying why, and that the cost carries the reason.
func TestRunQueueThreadLimit(t *testing.T) {
	if _, ok := runQueue(os.Getpid()); !ok {
		t.Skip("the kernel exposes no schedstat")
	}
	var few window
	few.startRunQueue(os.Getpid())
	few.endRunQueue(os.Getpid())
	if few.rqBefore == nil || few.rqAfter == nil || few.rqSkipped != "" {
		t.Fatalf("with few threads: before %d, after %d threads read, skipped %q; want both read", len(few.rqBefore), len(few.rqAfter), few.rqSkipped)
	}

	release, started := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	for range maxRunQueueThreads + 1 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			started <- struct{}{}
			<-release
		}()
	}
	for range maxRunQueueThreads + 1 {
		<-started
	}
	var many window
	many.startRunQueue(os.Getpid())
	many.endRunQueue(os.Getpid())
	if many.rqBefore != nil || many.rqAfter != nil || !strings.Contains(many.rqSkipped, "not read: the server has") {
		t.Fatalf("with %d threads parked: before %d, after %d threads read, skipped %q; want none read, and why", maxRunQueueThreads+1, len(many.rqBefore), len(many.rqAfter), many.rqSkipped)
	}
	many.before, many.after = &models.Snapshot{}, &models.Snapshot{}
	if c := many.cost(); c.SchedStat || c.RunQueueSkipped != many.rqSkipped {
		t.Errorf("cost: schedstat %t, skipped %q; want false and the reason", c.SchedStat, c.RunQueueSkipped)
	}
}

// TestDeriveRatesBeyondCeiling checks the rates from the slowest when
// capacities are beyond the load generator's ceiling: a configuration
// with no valid capacity but one beyond the ceiling counts as the
// ceiling's bound, the lowest of them sets the rates, and the record
// says its capacity is a bound; with a valid capacity below the bound,
// that one sets them.
func TestDeriveRatesBeyondCeiling(t *testing.T) {
	for _, tc := range []struct {
		name      string
		valid     float64 // b's valid capacity, 0: none (beyond the ceiling)
		wantFrom  string
		wantCap   float64
		wantBound bool
	}{
		{name: "all beyond", wantFrom: "a", wantCap: 40000, wantBound: true},
		{name: "one below", valid: 30000, wantFrom: "b", wantCap: 30000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{Name: "tiny", Workload: results.Workload{Protocol: "http"}}
			r := &runner{capacities: map[string]map[int]float64{}, beyondIn: map[string]map[int]bool{},
				exp:  Experiment{Repetitions: 2, RatesFromSlowest: []float64{0.5}, Workloads: []Workload{w}},
				run:  &results.Run{Ceilings: []results.Ceiling{{Protocol: "http", PerS: 50000, Fraction: 0.8}}},
				cfgs: []runConfig{{name: "a", wl: w}, {name: "b", wl: w}}}
			r.beyondIn["a"] = map[int]bool{0: true, 1: true}
			if tc.valid > 0 {
				r.capacities["b"] = map[int]float64{0: tc.valid, 1: tc.valid}
			} else {
				r.beyondIn["b"] = map[int]bool{0: true}
			}
			r.deriveRates()
			dr := r.exp.DerivedRates["tiny"]
			if dr.From != tc.wantFrom || dr.Capacity != tc.wantCap || dr.Bound != tc.wantBound || len(dr.Rates) != 1 || dr.Rates[0] != tc.wantCap/2 {
				t.Errorf("derived rates %+v, want from %s at %g (a bound: %t), one rate at half", dr, tc.wantFrom, tc.wantCap, tc.wantBound)
			}
			if warned := len(r.run.Warnings) > 0; warned != tc.wantBound {
				t.Errorf("warnings %q, want one only for a bound", r.run.Warnings)
			}
		})
	}
}
