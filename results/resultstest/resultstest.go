// Package resultstest writes a small synthetic run folder, through
// results.WriteRun and results.WritePoint, for the tests of the packages
// that read runs (results, plots, report, the figures command).
//
// The run is fixed data computed from closed-form distributions (no
// random numbers, no clock), so every output rendered from it is
// byte-for-byte reproducible and can be compared with golden files. It
// holds the cases a reader must survive:
//
//   - four configurations in report order (leaderfollowers/lifo,
//     leaderfollowers/fifo, halfsynchalfreactive, netpoll), six
//     repetitions each of a capacity point and open-loop points at 0.10,
//     0.50 and 0.90 of capacity;
//   - an unavailable model (proactor), in Run.Unavailable and as a point
//     with status unavailable;
//   - a failed point (halfsynchalfreactive open 0.90 rep 5, the server
//     killed), which leaves that group five repetitions: too few for a
//     95% confidence interval of the median;
//   - invalid verdicts (Load.Valid false, with Reasons and Checks), whose
//     values are made far off so that a statistic that mixed them in would
//     show it: leaderfollowers/fifo open 0.90 rep 2 (rate: the achieved
//     rate missed the schedule); leaderfollowers/lifo capacity rep 4
//     (errors: read errors, 0.6 of the capacity); halfsynchalfreactive
//     open 0.90 reps 1 and 3 (over-capacity, then rate: the server did not
//     keep up, latency 4×); netpoll open 0.50 reps 1, 3 and 5
//     (generator-lag, then generator-cpu: latency 10×, which would move
//     that group's median far up); and every repetition of netpoll open
//     0.90 (generator-lag), a load with no valid point at all, which makes
//     the run "mostly invalid" for the report's banner;
//   - zeros that would break a log axis: netpoll open 0.10 rep 3 has a
//     p50 latency of 0, and the M/M/c ideal of halfsynchalfreactive at
//     0.90 is unstable (latencies 0);
//   - netpoll without schedstat (no run-queue metric);
//   - a mechanisms point per configuration in repetition 0 at
//     MechanismsRate, with system calls by kind, futex wake calls and
//     wake-up IPIs, but netpoll's not counted (NotCounted, as without
//     permission).
package resultstest

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
)

// Repetitions is the number of repetitions of every point in the run.
const Repetitions = 6

// Fractions are the open-loop loads of the run, as fractions of capacity.
var Fractions = []float64{0.1, 0.5, 0.9}

// config is one synthetic configuration and the parameters its numbers
// are computed from.
type config struct {
	cfg         results.ModelConfig
	capacity    float64   // req/s
	baseNs      float64   // mean latency above the floor at zero load
	serviceNs   float64   // the M/M/c ideal's service time
	vCtxsw      float64   // voluntary context switches per request
	iCtxsw      float64   // involuntary
	cpuNs       float64   // CPU ns per request
	allocs      float64   // allocations per request
	bytes       float64   // bytes per request
	shares      []float64 // per-thread share of events (LF only)
	noSchedStat bool      // the kernel exposed no schedstat
	// mech are the mechanisms point's system calls per request by kind,
	// then its futex wake calls and wake-up IPIs per request (keys
	// "wakes", "ipis"); nil: not counted (the kernel refused).
	mech map[string]float64
}

var configs = []config{
	{cfg: results.ModelConfig{Name: "leaderfollowers/lifo", Model: "leaderfollowers", Args: []string{"--promotion", "lifo"}, Threads: 4},
		capacity: 50000, baseNs: 25000, serviceNs: 10000, vCtxsw: 0.02, iCtxsw: 0.01, cpuNs: 18000, allocs: 0.001, bytes: 0.1,
		shares: []float64{0.7, 0.2, 0.07, 0.03},
		mech:   map[string]float64{"epoll_wait": 0.9, "epoll_ctl": 1, "read": 1, "write": 1, "futex": 0.1, "other": 0.3, "wakes": 0.05, "ipis": 0.4}},
	{cfg: results.ModelConfig{Name: "leaderfollowers/fifo", Model: "leaderfollowers", Args: []string{"--promotion", "fifo"}, Threads: 4},
		capacity: 48000, baseNs: 27000, serviceNs: 10000, vCtxsw: 0.9, iCtxsw: 0.02, cpuNs: 19000, allocs: 0.001, bytes: 0.1,
		shares: []float64{0.26, 0.25, 0.25, 0.24},
		mech:   map[string]float64{"epoll_wait": 0.9, "epoll_ctl": 1, "read": 1, "write": 1, "futex": 1.8, "other": 0.3, "wakes": 0.9, "ipis": 0.9}},
	{cfg: results.ModelConfig{Name: "halfsynchalfreactive", Model: "halfsynchalfreactive", Threads: 4},
		capacity: 30000, baseNs: 40000, serviceNs: 40000, vCtxsw: 1.9, iCtxsw: 0.1, cpuNs: 25000, allocs: 1, bytes: 96,
		mech: map[string]float64{"epoll_wait": 0.5, "epoll_ctl": 0.02, "read": 1, "write": 1, "futex": 2.2, "other": 1, "wakes": 1.4, "ipis": 0.3}},
	{cfg: results.ModelConfig{Name: "netpoll", Model: "netpoll"},
		capacity: 40000, baseNs: 30000, serviceNs: 12000, vCtxsw: 0.8, iCtxsw: 0.05, cpuNs: 20000, allocs: 0.5, bytes: 16, noSchedStat: true},
}

// Unavailable is the synthetic run's unavailable configuration.
var Unavailable = results.Unavailable{
	Config: results.ModelConfig{Name: "proactor", Model: "proactor"},
	Reason: "io_uring_setup: operation not permitted",
}

var (
	t0         = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	provenance = results.Provenance{
		Commit: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.0", OS: "linux", Arch: "amd64",
		Kernel: "6.8.0-synthetic", CPUModel: "Synthetic CPU @ 2.00GHz", NumCPU: 2, Hostname: "testhost",
		ServerCPUs: "0", LoadCPUs: "1", ServerGOMAXPROCS: 1, LoadGOMAXPROCS: 1, Time: t0,
	}
	workload = results.Workload{Protocol: "http", Conns: 64, Depth: 1, Arrival: "poisson", CPU: "10us", Block: "0", Size: "0", Ops: "work=1"}
)

// jitter is a repeatable spread around 1 for repetition rep of the i-th
// series: within ±3%, different for every repetition.
func jitter(i, rep int) float64 {
	return 1 + 0.01*float64((rep*37+i*11)%7-3)
}

// Run returns the synthetic run's description (what WriteRun writes as
// run.json).
func Run() *results.Run {
	r := &results.Run{
		ID:      "synthetic-20250102T030405",
		Profile: "test",
		Experiment: map[string]any{
			"repetitions": Repetitions, "fractions": Fractions, "duration": "1s", "warmup": "200ms",
			"workload": workload,
		},
		Unavailable: []results.Unavailable{Unavailable},
		Provenance:  provenance,
		Started:     t0,
		Finished:    t0.Add(10 * time.Minute),
		Warnings:    []string{"synthetic run: the numbers are made up for tests"},
	}
	for _, c := range configs {
		r.Configs = append(r.Configs, c.cfg)
	}
	return r
}

// Points returns every point of the synthetic run, in no particular
// order (ReadRun sorts).
func Points() ([]results.Point, error) {
	var pts []results.Point
	seq := 0
	for ci, c := range configs {
		for rep := range Repetitions {
			capRate := c.capacity * jitter(ci, rep)
			fracs := append([]float64{1}, Fractions...)
			for fi, frac := range fracs {
				kind := results.KindOpen
				if fi == 0 {
					kind = results.KindCapacity
				}
				p, err := point(ci, &c, kind, frac, rep, capRate, seq)
				if err != nil {
					return nil, err
				}
				seq++
				pts = append(pts, p)
			}
		}
	}
	for ci, c := range configs {
		p, err := mechanismsPoint(ci, &c, seq)
		if err != nil {
			return nil, err
		}
		seq++
		pts = append(pts, p)
	}
	pts = append(pts, results.Point{
		Run: Run().ID, Config: Unavailable.Config, Workload: workload, Kind: results.KindCapacity, Fraction: 1,
		Status: results.StatusUnavailable, Failure: Unavailable.Reason, StartTime: t0, Provenance: provenance,
	})
	return pts, nil
}

func point(ci int, c *config, kind results.Kind, frac float64, rep int, capRate float64, seq int) (results.Point, error) {
	p := results.Point{
		Run: Run().ID, Config: c.cfg, Workload: workload, Kind: kind, Fraction: frac, Repetition: rep,
		Warnings: []string{"the server and the load generator share CPU 0 with other work"},
		Status:   results.StatusOK, StartTime: t0.Add(time.Duration(seq) * 2 * time.Second), Provenance: provenance,
		ServerInfo: models.Info{Model: c.cfg.Model, Protocol: "http", Threads: max(c.cfg.Threads, 1), GOMAXPROCS: 1, NumCPU: 2, CPUs: "0"},
	}
	name := c.cfg.Name
	if name == "halfsynchalfreactive" && kind == results.KindOpen && frac == 0.9 && rep == 5 {
		p.Status = results.StatusFailed
		p.Failure = "server exited: signal: killed; stderr tail:\nfatal error: runtime: out of memory\n\ngoroutine 1 [running]:"
		return p, nil
	}
	j := jitter(ci, rep)
	rho := frac
	rate := capRate
	if kind == results.KindOpen {
		rate = frac * capRate
		p.OfferedRatePerS = math.Round(rate)
	} else {
		rho = 0.95 // saturation, closed loop
	}
	window := time.Second
	ok := int64(rate * window.Seconds())
	meanNs := c.baseNs / (1 - rho) * j
	zeroP50 := name == "netpoll" && kind == results.KindOpen && frac == 0.1 && rep == 3
	lat, err := summary(1000, 15000, meanNs)
	if err != nil {
		return p, err
	}
	if zeroP50 {
		lat.P50Ns = 0 // as if the clock had not advanced: a log axis must survive it
	}
	unc, err := summary(1000, 15000, 0.8*meanNs)
	if err != nil {
		return p, err
	}
	res := &loadgen.Result{
		Mode: "open-loop poisson", Valid: true, Reasons: []string{}, Warnings: []string{},
		Config:    loadgen.Config{Protocol: "http", Conns: 64, Depth: 1, Rate: math.Round(rate), Arrival: loadgen.Poisson, HistLowest: loadgen.DefaultHistLowest, HistHighest: loadgen.DefaultHistHighest, HistDigits: loadgen.DefaultHistDigits},
		StartTime: p.StartTime, WarmupNs: int64(200 * time.Millisecond), WindowNs: int64(window),
		TargetRatePerS: math.Round(rate), ScheduledRatePerS: math.Round(rate), SentRatePerS: rate, AchievedRatePerS: rate,
		Requests:    loadgen.Counts{Scheduled: ok, Sent: ok, Completed: ok, OK: ok, Warmup: ok / 5},
		Errors:      map[string]int64{},
		Latency:     lat,
		Uncorrected: unc,
		Histogram:   loadgen.HistogramParams{LowestNs: int64(loadgen.DefaultHistLowest), HighestNs: int64(loadgen.DefaultHistHighest), SignificantDigits: loadgen.DefaultHistDigits},
		Generator:   loadgen.Generator{Workers: 1, GOMAXPROCS: 1, CPUs: "1", CPUNsPerRequest: 3000, BusyFraction: 0.3},
	}
	if kind == results.KindCapacity {
		res.Mode = "closed-loop (1 outstanding per connection)"
		res.Config.Closed, res.Config.Rate = true, 0
		res.TargetRatePerS, res.ScheduledRatePerS, res.Requests.Scheduled = 0, 0, 0
	} else {
		lag, err := summary(100, 2000, 3000*j)
		if err != nil {
			return p, err
		}
		res.SendLag = lag
	}
	if name == "netpoll" && kind == results.KindOpen && frac == 0.9 && rep == 0 {
		res.Warnings = []string{"120 requests (0.33%) waited for the in-flight bound (256 per connection) and left late (held lag p99 1.20ms); their corrected latency includes the wait"}
	}
	if err := invalidate(res, name, kind, frac, rep, rate, meanNs, window); err != nil {
		return p, err
	}
	p.Load = res

	p.Server = serverCost(ci, c, rep, uint64(ok), window)
	if kind == results.KindOpen {
		p.Theory = theoryAt(c, rate)
	}
	return p, nil
}

// MechanismsRate is the rate of the synthetic run's mechanisms points,
// req/s, and MechanismsWindow their window.
const (
	MechanismsRate   = 10000
	MechanismsWindow = 300 * time.Millisecond
)

// NotCounted is the reason netpoll's mechanisms point has no counts.
const NotCounted = "perf_event_open: permission denied (raw_syscalls:sys_enter (epoll_wait), thread 4242): not permitted: run as root or lower /proc/sys/kernel/perf_event_paranoid"

// mechanismsPoint returns configuration c's (the ci-th) mechanisms
// point, in repetition 0 at MechanismsRate: its counts, or netpoll's
// reason for having none.
func mechanismsPoint(ci int, c *config, seq int) (results.Point, error) {
	p, err := point(ci, c, results.KindOpen, 0.2, 0, c.capacity, seq)
	if err != nil {
		return p, err
	}
	p.Kind, p.Fraction, p.OfferedRatePerS, p.Theory = results.KindMechanisms, 0, MechanismsRate, nil
	l := p.Load
	l.Config.Rate, l.TargetRatePerS, l.ScheduledRatePerS, l.SentRatePerS, l.AchievedRatePerS = MechanismsRate, MechanismsRate, MechanismsRate, MechanismsRate, MechanismsRate
	l.WarmupNs, l.WindowNs = int64(100*time.Millisecond), int64(MechanismsWindow)
	served := uint64(MechanismsRate * MechanismsWindow.Seconds())
	l.Requests = loadgen.Counts{Scheduled: int64(served), Sent: int64(served), Completed: int64(served), OK: int64(served), Warmup: int64(served) / 3}
	p.Server = serverCost(ci, c, 0, served, MechanismsWindow)
	if c.mech == nil {
		p.Server.MechanismsUnavailable = NotCounted
		return p, nil
	}
	count := func(perReq float64) uint64 { return uint64(math.Round(perReq * float64(served))) }
	m := &results.Mechanisms{Syscalls: map[string]uint64{}, FutexWakes: count(c.mech["wakes"]), WakeIPIs: count(c.mech["ipis"]),
		IPICPUs: "0", IPIEvents: "ipi:ipi_send_cpu", Threads: max(c.cfg.Threads, 1) + 4}
	for _, k := range results.SyscallKindNames() {
		m.Syscalls[k] = count(c.mech[k])
		m.Total += m.Syscalls[k]
	}
	p.Server.Mechanisms = m
	return p, nil
}

// serverCost returns the server's costs of configuration c (the ci-th)
// in repetition rep, having served served requests in window.
func serverCost(ci int, c *config, rep int, served uint64, window time.Duration) results.ServerCost {
	j := jitter(ci, rep)
	sc := results.ServerCost{
		Requests: served, WindowNs: int64(window),
		VoluntaryCtxswPerRequest: c.vCtxsw * j, InvoluntaryCtxswPerRequest: c.iCtxsw * j,
		UserNsPerRequest: 0.7 * c.cpuNs * j, SystemNsPerRequest: 0.3 * c.cpuNs * j,
		AllocsPerRequest: c.allocs * j, BytesPerRequest: c.bytes * j,
		RSSBytes: int64(12<<20) + int64(ci)<<20, GoThreads: 8,
		RunQueueNsPerRequest: 500 * j, SchedStat: !c.noSchedStat,
	}
	sc.CtxswPerRequest = sc.VoluntaryCtxswPerRequest + sc.InvoluntaryCtxswPerRequest
	sc.CPUNsPerRequest = sc.UserNsPerRequest + sc.SystemNsPerRequest
	if c.noSchedStat {
		sc.RunQueueNsPerRequest = 0
		sc.PerfUnavailable = "perf_event_open: permission denied"
	}
	if c.shares != nil {
		n := len(c.shares)
		for i := range n {
			// Threads in an order unrelated to their share, so readers must sort.
			k := (i + rep) % n
			share := c.shares[k] * (1 + 0.02*float64((rep+k)%3-1))
			ev := uint64(share * float64(served))
			sc.PerThread = append(sc.PerThread, models.ThreadStats{
				TID: 1000*(rep+1) + i, Role: "pool", Events: ev, Requests: ev, Promotions: ev,
			})
		}
		if b, ok := results.Balance(sc.PerThread); ok {
			sc.Balance = &b
		}
	}
	return sc
}

// theoryAt returns the queueing model's prediction for configuration c
// at the offered rate: M/M/1 on the server's one CPU.
func theoryAt(c *config, rate float64) *results.Theory {
	threads := 1 // the server's CPUs: one
	u := rate * c.serviceNs / 1e9 / float64(threads)
	t := &results.Theory{Model: "M/M/c", C: threads, ServiceNs: c.serviceNs, RatePerS: math.Round(rate), Utilization: u, Stable: u < 1}
	if t.Stable {
		mean := c.serviceNs / (1 - u) // M/M/1 sojourn time, exponential
		t.MeanNs = mean
		t.P50Ns = mean * math.Ln2
		t.P99Ns = mean * math.Log(100)
		t.P999Ns = mean * math.Log(1000)
	}
	return t
}

// invalidate makes res invalid, with its reasons, checks and numbers to
// match, if the point (name, kind, frac, rep) is one of the run's invalid
// points (see the package documentation).
func invalidate(res *loadgen.Result, name string, kind results.Kind, frac float64, rep int, rate, meanNs float64, window time.Duration) error {
	open := kind == results.KindOpen
	missed := func(achieved float64) string {
		res.AchievedRatePerS = achieved
		res.Requests.Completed = int64(achieved * window.Seconds())
		return fmt.Sprintf("achieved %.0f req/s is below 99%% of the %.0f req/s scheduled (target %.0f): %d of %d scheduled requests were answered",
			achieved, math.Round(rate), math.Round(rate), res.Requests.Completed, res.Requests.Scheduled)
	}
	// slower replaces the corrected (and, with uncorrected, the
	// uncorrected) latency by one k times slower.
	slower := func(k float64, uncorrected bool) error {
		lat, err := summary(1000, 15000, k*meanNs)
		if err != nil {
			return err
		}
		res.Latency = lat
		if uncorrected {
			unc, err := summary(1000, 15000, 0.8*k*meanNs)
			if err != nil {
				return err
			}
			res.Uncorrected = unc
		}
		return nil
	}
	switch {
	case name == "leaderfollowers/fifo" && open && frac == 0.9 && rep == 2:
		res.Reasons = []string{missed(0.95 * rate)}
		res.Checks = []loadgen.Check{loadgen.CheckRate}
	case name == "leaderfollowers/lifo" && kind == results.KindCapacity && rep == 4:
		res.AchievedRatePerS = 0.6 * rate
		res.Requests.Failed = 120
		res.Errors = map[string]int64{"read": 120}
		res.Reasons = []string{"errors: read 120"}
		res.Checks = []loadgen.Check{loadgen.CheckErrors}
	case name == "halfsynchalfreactive" && open && frac == 0.9 && (rep == 1 || rep == 3):
		if err := slower(4, true); err != nil {
			return err
		}
		res.OverCapacity = true
		res.Reasons = []string{
			"the server did not keep up: its backlog grew by 2400 requests over the window and the last tenth's p99 latency is 6.1× the first tenth's",
			missed(0.9 * rate),
		}
		res.Checks = []loadgen.Check{loadgen.CheckOverCapacity, loadgen.CheckRate}
	case name == "netpoll" && open && frac == 0.5 && rep%2 == 1:
		if err := slower(10, false); err != nil {
			return err
		}
		lag, err := summary(100, 2000, 1.5e6)
		if err != nil {
			return err
		}
		res.SendLag = lag
		res.Generator.WorkerRunQueueNs = int64(85 * time.Millisecond)
		res.Reasons = []string{
			fmt.Sprintf("send lag p99 %s exceeds 1.00ms: the generator could not keep its schedule, which moved the reported latency", loadgen.FormatNs(lag.P99Ns)),
			"the generator's threads waited 85.0ms for a CPU during the window: other work shares its CPU",
		}
		res.Checks = []loadgen.Check{loadgen.CheckBias, loadgen.CheckCPU}
	case name == "netpoll" && open && frac == 0.9:
		lag, err := summary(100, 2000, 2e6)
		if err != nil {
			return err
		}
		res.SendLag = lag
		res.Reasons = []string{fmt.Sprintf("send lag p99 %s exceeds 1.00ms: the generator could not keep its schedule, which moved the reported latency", loadgen.FormatNs(lag.P99Ns))}
		res.Checks = []loadgen.Check{loadgen.CheckBias}
	default:
		return nil
	}
	res.Valid = false
	return nil
}

// summaryKey is summary's arguments, the key of its memo.
type summaryKey struct {
	n               int
	floorNs, meanNs float64
}

// summaries memoizes summary, which is pure: a test binary asks for the
// synthetic run many times (Points, WriteRun), and building and encoding
// its few hundred histograms is most of the cost, many times over under
// the race detector. A Summary is a value (numbers and a string), so
// every caller gets its own copy.
var summaries sync.Map // summaryKey → loadgen.Summary

// summary returns a latency Summary of n values floor + an exponential
// distribution of the given mean, taken at evenly spaced quantiles.
func summary(n int, floorNs, meanNs float64) (loadgen.Summary, error) {
	key := summaryKey{n: n, floorNs: floorNs, meanNs: meanNs}
	if s, ok := summaries.Load(key); ok {
		return s.(loadgen.Summary), nil
	}
	s, err := newSummary(n, floorNs, meanNs)
	if err == nil {
		summaries.Store(key, s)
	}
	return s, err
}

// newSummary computes summary's result.
func newSummary(n int, floorNs, meanNs float64) (loadgen.Summary, error) {
	h := hdr.New(int64(loadgen.DefaultHistLowest), int64(loadgen.DefaultHistHighest), loadgen.DefaultHistDigits)
	for i := range n {
		v := floorNs - meanNs*math.Log(1-(float64(i)+0.5)/float64(n))
		if err := h.RecordValue(int64(v)); err != nil {
			return loadgen.Summary{}, err
		}
	}
	return loadgen.Summarize(h, 0), nil
}

// WriteRun writes the synthetic run to dir (run.json and points/) and
// returns its description.
func WriteRun(dir string) (*results.Run, error) { return writeEdited(dir, nil, nil) }

// WriteTemp writes the synthetic run, edited, to a new temporary folder
// of t's and returns the folder: run, if not nil, edits the run first;
// point, if not nil, edits each point and reports whether to write it (a
// partial run writes some). An error fails t.
func WriteTemp(t testing.TB, run func(*results.Run), point func(*results.Point) bool) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := writeEdited(dir, run, point); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeEdited is WriteRun with WriteTemp's edits.
func writeEdited(dir string, run func(*results.Run), point func(*results.Point) bool) (*results.Run, error) {
	r := Run()
	if run != nil {
		run(r)
	}
	if err := results.WriteRun(dir, r); err != nil {
		return nil, err
	}
	pts, err := Points()
	if err != nil {
		return nil, err
	}
	for i := range pts {
		if point != nil && !point(&pts[i]) {
			continue
		}
		if err := results.WritePoint(dir, &pts[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ReadRun reads the run in dir (results.ReadRun), failing the test if it
// cannot: the tests of every package that reads runs, the synthetic one
// or one they measured, read them so.
func ReadRun(t testing.TB, dir string) (*results.Run, []results.Point) {
	t.Helper()
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		t.Fatalf("ReadRun %s: %v", dir, err)
	}
	return r, pts
}

// Main is a TestMain for packages that read the synthetic run: it writes
// the run once to a temporary folder, stores the folder in *dir, runs the
// tests, removes the folder and returns m.Run's exit code (1 if the run
// could not be written).
func Main(m *testing.M, dir *string) int {
	d, err := os.MkdirTemp("", "concbench-synthetic-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "resultstest:", err)
		return 1
	}
	defer os.RemoveAll(d)
	if _, err := WriteRun(d); err != nil {
		fmt.Fprintln(os.Stderr, "resultstest:", err)
		return 1
	}
	*dir = d
	return m.Run()
}

// update is go test's -update flag in every package whose tests import
// resultstest: GoldenFile rewrites the golden files instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// GoldenFile compares got with testdata/name, or rewrites it when the
// tests run with -update (Golden).
func GoldenFile(t testing.TB, name string, got []byte) {
	t.Helper()
	Golden(t, filepath.Join("testdata", name), got, *update)
}

// GoldenWrite writes with write into a buffer, compares what it wrote
// with testdata/name (GoldenFile) and returns it: a renderer's test
// checks its golden file, then reads the same bytes back for the
// properties the golden file must have.
func GoldenWrite(t testing.TB, name string, write func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	GoldenFile(t, name, b.Bytes())
	return b.Bytes()
}

// Golden compares got with the golden file at path, or, with update,
// rewrites the file; a difference is reported at its first differing
// line.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s differs from the golden file at line %d (run the tests with -update if the change is intended):\n got: %s\nwant: %s", path, i+1, gl, wl)
			return
		}
	}
	t.Errorf("%s differs from the golden file", path)
}
