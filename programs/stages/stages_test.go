package stages

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"concbench/harness"
	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(concbenchtest.Main(m)) }

// TestParseReport: perf report's lines (ReportArgs' fields) become
// samples; comments and blank lines are skipped; a line of another shape
// is an error naming it.
func TestParseReport(t *testing.T) {
	in := `# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 8  of event 'cpu-clock:ppp'
# Samples|  Pid:Command   |Shared Object       |Symbol
 120        |  4711:concbench  |[kernel.kallsyms]   |[k] tcp_sendmsg_locked
 31         |  4712:concbench  |concbench           |[.] concbench/wire.(*HTTP).DecodeRequest
 2          |  4713:nginx      |nginx               |[.] 0x00000000000a1b2c

`
	got, err := ParseReport(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{
		{TID: 4711, Comm: "concbench", DSO: "[kernel.kallsyms]", Symbol: "tcp_sendmsg_locked", Kernel: true, Samples: 120},
		{TID: 4712, Comm: "concbench", DSO: "concbench", Symbol: "concbench/wire.(*HTTP).DecodeRequest", Samples: 31},
		{TID: 4713, Comm: "nginx", DSO: "nginx", Symbol: "0x00000000000a1b2c", Samples: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d samples %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"12|4711:x|dso", "x|4711:x|dso|[k] f", "3|4711|dso|[k] f"} {
		if _, err := ParseReport(strings.NewReader(bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: error %v, want one naming line 1", bad, err)
		}
	}
}

// TestStage: each kind of symbol lands in its stage.
func TestStage(t *testing.T) {
	for _, tc := range []struct {
		dso, sym string
		kernel   bool
		want     string
	}{
		{"[kernel.kallsyms]", "tcp_sendmsg_locked", true, StageTCP},
		{"[kernel.kallsyms]", "_copy_to_iter", true, StageTCP},
		{"[kernel.kallsyms]", "pvm_irq_enable", true, StageIRQ},
		{"[kernel.kallsyms]", "entry_SYSCALL_64", true, StageSyscall},
		{"[kernel.kallsyms]", "ep_poll", true, StageSyscall},
		{"[kernel.kallsyms]", "do_epoll_wait", true, StageSyscall},
		{"[kernel.kallsyms]", "io_submit_sqes", true, StageURing},
		{"[kernel.kallsyms]", "__io_run_local_work", true, StageURing},
		{"[kernel.kallsyms]", "fget", true, StageFiles},
		{"[kernel.kallsyms]", "__fdget_pos", true, StageFiles},
		{"[kernel.kallsyms]", "finish_task_switch.isra.0", true, StageSched},
		{"[kernel.kallsyms]", "enqueue_task_fair", true, StageSched},
		{"[kernel.kallsyms]", "try_to_wake_up", true, StageSched},
		{"[kernel.kallsyms]", "futex_wake", true, StageFutex},
		{"concbench", "runtime.exitsyscall", false, StageRuntime},
		{"concbench", "internal/runtime/syscall/linux.Syscall6", false, StageRuntime},
		{"concbench", "golang.org/x/sys/unix.write", false, StageRuntime},
		{"concbench", "indexbytebody", false, StageBytes},
		{"concbench", "runtime.memmove", false, StageBytes},
		{"concbench", "concbench/wire.(*HTTP).DecodeRequest", false, "user: wire"},
		{"concbench", "concbench/models/internal/connio.(*Conn).Read", false, "user: models/internal/connio"},
		{"concbench", "concbench/models/proactor.(*loop).run.func1", false, "user: models/proactor"},
		{"concbench", "sync.(*Mutex).lockSlow", false, "user: sync"},
		{"concbench", "gogo", false, "user: concbench"},
		{"nginx", "ngx_http_process_request_line", false, "user: nginx"},
		{"nginx", "ngx_http_parse.part.0", false, "user: nginx"},
		{"nginx", "0x000000000004f00d", false, "user: nginx"},
		{"[unknown]", "0x00007f0000001000", false, StageUnknown},
		{"libc.so.6", "__memmove_avx_unaligned_erms", false, StageLibc},
	} {
		s := Sample{DSO: tc.dso, Symbol: tc.sym, Kernel: tc.kernel}
		if got := s.Stage("concbench"); got != tc.want {
			t.Errorf("%s %s: stage %q, want %q", tc.dso, tc.sym, got, tc.want)
		}
	}
}

// measured returns a measurement of requests requests at rate, its
// threads' CPU (ns) and switches, the busiest first, and its samples.
func measured(name string, rate float64, requests int64, threads [][2]int64, samples map[string]int64) *measurement {
	m := &measurement{name: name, rate: rate, requests: requests, valid: true, server: 1, samples: samples}
	for i, th := range threads {
		m.threads = append(m.threads, thread{tid: i + 1, runNs: th[0], slices: th[1]})
	}
	for _, n := range samples {
		m.total += n
	}
	return m
}

// TestWriteTable: medians with their ranges over the valid rounds, an
// invalid round left out and said, each stage's µs per request its share
// of the CPU per request, small user stages gathered into the rest.
func TestWriteTable(t *testing.T) {
	// 1000 requests on 10 ms of CPU (9 ms the server thread's): 10 µs
	// per request, 0.8 of the samples the kernel's TCP path.
	a := measured("m", 50_000, 1000, [][2]int64{{9e6, 20}, {1e6, 10}},
		map[string]int64{StageTCP: 800, "user: wire": 197, "user: service": 3})
	b := measured("m", 60_000, 1000, [][2]int64{{7e6, 40}, {1e6, 10}},
		map[string]int64{StageTCP: 800, "user: wire": 197, "user: service": 3})
	c := measured("m", 70_000, 1000, [][2]int64{{11e6, 30}, {1e6, 10}},
		map[string]int64{StageTCP: 800, "user: wire": 197, "user: service": 3})
	bad := measured("m", 1, 1000, [][2]int64{{1e9, 1}}, map[string]int64{StageTCP: 1})
	bad.valid, bad.reasons = false, []string{"the generator's threads waited"}
	a.round, b.round, bad.round, c.round = 0, 1, 2, 3
	// k: twice m's rate in the two rounds it has, at 0.5 and 0.25 its CPU.
	k0 := measured("k", 100_000, 1000, [][2]int64{{4e6, 1}, {1e6, 1}}, map[string]int64{StageTCP: 1})
	k1 := measured("k", 120_000, 1000, [][2]int64{{1e6, 1}, {1e6, 1}}, map[string]int64{StageTCP: 1})
	k1.round = 1
	gone := &measurement{name: "n", unavailable: "no nginx here"}
	var out bytes.Buffer
	writeTable(&out, []harness.Config{{Name: "m"}, {Name: "k"}, {Name: "n"}}, [][]*measurement{{a, b, bad, c}, {k0, k1}, {gone}})
	s := out.String()
	for _, want := range []string{
		"|  | m (3 of 4 rounds) | k (2 of 2 rounds) | n (0 of 1 rounds) |",
		"| requests/s | 60000 [50000, 70000] | 110000 [100000, 120000] | - |",
		"|   × m, paired by round | 1.000 [1.000, 1.000] | 2.000 [2.000, 2.000] | - |",
		"| CPU µs/req, every thread | 10.00 [8.00, 12.00] | 3.50 [2.00, 5.00] | - |",
		"|   × m, paired by round | 1.000 [1.000, 1.000] | 0.375 [0.250, 0.500] | - |",
		"|   the server's threads | 9.00 [7.00, 11.00] |",
		"| context switches/req, the server's threads | 0.0300 [0.0200, 0.0400] |",
		"| " + StageTCP + " | 8.00 (80.0 %) | 3.50 (100.0 %) | - |",
		"| user: wire | 1.97 (19.7 %) | 0.00 (0.0 %) | - |",
		"| user: the rest | 0.03 (0.3 %) | 0.00 (0.0 %) | - |",
		"user: the rest: user: service",
		"m: a round left out, its load invalid: the generator's threads waited",
		"n: no column: no nginx here",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

// TestCheck: settings out of range are refused, naming the flag.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Conns = 0 }, "--conns"},
		{func(c *Config) { c.Rounds = 0 }, "--rounds"},
		{func(c *Config) { c.Freq = 0 }, "--freq"},
		{func(c *Config) { c.Quota = -1 }, "--quota"},
		{func(c *Config) { c.Duration = time.Millisecond }, "--duration"},
		{func(c *Config) { c.ServerCPUs = "x" }, "--server-cpus"},
	} {
		c := Default()
		tc.change(&c)
		if _, err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %s", err, tc.want)
		}
	}
	c := Default()
	c.Before = os.Args[0]
	c, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, hc := range c.Configs {
		names = append(names, hc.Name)
		if strings.HasSuffix(hc.Name, beforeSuffix) && (hc.ServerBinary != os.Args[0] || hc.GOMAXPROCS != 0) {
			t.Errorf("%s: binary %q, GOMAXPROCS %d: want --before's, and its own choice", hc.Name, hc.ServerBinary, hc.GOMAXPROCS)
		}
	}
	if got := strings.Join(names, ","); got != "nginx/exclusive,acceptmutex/exclusive,acceptmutex/exclusive (before),proactor,proactor (before),leaderfollowers/lifo,leaderfollowers/lifo (before),leaderfollowers/kernel,leaderfollowers/kernel (before)" {
		t.Errorf("--before: configurations %s: want each model's twin beside it, none for nginx", got)
	}
	c.Before = "/nonexistent/concbench"
	c.Configs = nil
	if _, err := c.Check(); err == nil || !strings.Contains(err.Error(), "--before") {
		t.Errorf("a missing --before binary: error %v", err)
	}
	if _, err := Configs("nosuchmodel"); err == nil {
		t.Error("an unknown configuration was accepted")
	}
}

// TestRun runs a model and real nginx through Run: a line per
// measurement, with its rate and CPU per request, and the table with a
// column for each; nginx is measured or unavailable with the reason.
// Whether a round's load was valid is the machine's (the race detector
// slows the generator), so the columns' contents are TestMeasure's.
func TestRun(t *testing.T) {
	testenv.EndToEnd(t)
	c := Default()
	c.ServerBinary, c.Quota, c.Rounds = concbenchtest.Binary(t), 0, 1
	c.Warmup, c.Duration, c.Conns = 300*time.Millisecond, 300*time.Millisecond, 8
	var err error
	if c.Configs, err = Configs("netpoll,nginx/exclusive"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), c, &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{"round 1: netpoll: ", " req/s, CPU ", "| requests/s | ", " netpoll (", " nginx/exclusive ("} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if !strings.Contains(s, "nginx/exclusive: unavailable: ") && !strings.Contains(s, "round 1: nginx/exclusive: ") {
		t.Errorf("nginx neither measured nor unavailable:\n%s", s)
	}
}

// TestMeasure measures a model once: requests, the server thread's CPU
// and, where perf can sample here, stages that split all of it (the
// wire package's among them); without perf the measurement says why.
func TestMeasure(t *testing.T) {
	testenv.EndToEnd(t)
	c := Default()
	c.ServerBinary, c.Quota, c.Rounds = concbenchtest.Binary(t), 0, 1
	c.Warmup, c.Duration, c.Conns = 300*time.Millisecond, 300*time.Millisecond, 8
	c, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	// A model whose threads all exist when perf starts (the worker is
	// started, locked, before the server listens): netpoll's runtime
	// threads start on demand under the load, unsampled (TestUnsampled).
	cs, err := Configs("acceptmutex/exclusive")
	if err != nil {
		t.Fatal(err)
	}
	perf, why := c.perfExecutable()
	dir := t.TempDir()
	m := c.measure(context.Background(), cs[0], nil, perf, why, dir+"/perf.data", dir)
	if m.failure != "" || m.unavailable != "" {
		t.Fatalf("acceptmutex: %s%s", m.failure, m.unavailable)
	}
	cpu, _ := m.cpuNs(true)
	if m.requests <= 0 || m.rate <= 0 || cpu <= 0 || m.server != 1 || len(m.threads) < 2 {
		t.Fatalf("measurement %+v: want requests, a rate, the server thread's CPU and the runtime's threads", m)
	}
	if perf == "" {
		if !strings.Contains(m.noStages, "not found") {
			t.Errorf("no perf, and no stages says %q", m.noStages)
		}
		return
	}
	if m.total == 0 && strings.Contains(m.noStages, "started after perf") {
		t.Fatalf("no stages: %s", m.noStages)
	}
	if m.total == 0 {
		t.Skipf("perf is here but did not sample (not root, or perf_event_paranoid): %s", m.noStages)
	}
	var sum int64
	for _, n := range m.samples {
		sum += n
	}
	if sum != m.total || m.samples["user: wire"] == 0 || m.samples[StageTCP] == 0 {
		t.Errorf("samples %v (total %d): want them all in stages, the wire package's and the kernel's TCP path's among them", m.samples, m.total)
	}
	if _, err := os.Stat(dir + "/perf.data.ctl"); !os.IsNotExist(err) {
		t.Errorf("perf's control FIFO left behind: %v", err)
	}
}

// TestUnsampled checks that a window whose CPU time was spent in threads
// perf was not started on leaves the stages out, saying so, and that a
// small share does not.
func TestUnsampled(t *testing.T) {
	attached := map[int]thread{1: {tid: 1}, 2: {tid: 2}}
	for _, tc := range []struct {
		name   string
		window []thread
		want   string
	}{
		{"all attached", []thread{{tid: 1, runNs: 900}, {tid: 2, runNs: 100}}, ""},
		{"a little unseen", []thread{{tid: 1, runNs: 960}, {tid: 3, runNs: 40}}, ""},
		{"most unseen", []thread{{tid: 1, runNs: 100}, {tid: 3, runNs: 600}, {tid: 4, runNs: 300}}, "2 of the server's threads started after perf record did and ran 90 %"},
		{"no CPU", nil, ""},
	} {
		got := unsampled(attached, tc.window)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
