package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/ktrace"
	"concbench/internal/testenv"
	"concbench/loadgen"
	"concbench/results"
)

// perfCheckEnv names the model (or configuration of the default profile)
// whose mechanisms counts TestPerfCheck checks against perf stat.
const perfCheckEnv = "CONCBENCH_PERFCHECK"

// perfCheckTolerance is how far a kind's count may be from perf's: 5 %,
// and 3 system calls for the few the two windows' edges may split
// differently (ours are read just inside perf's).
const perfCheckTolerance = 0.05

// TestPerfCheck is the hand check of a mechanisms point's counts: it runs
// only when asked, as root with perf installed,
//
//	CONCBENCH_PERFCHECK=leaderfollowers go test -run TestPerfCheck -v ./harness/
//
// It starts the model's server (the default profile's configuration,
// sized for one CPU) on the first half of the CPUs, drives it at a fixed
// rate from the other half, and counts the load twice: with this
// package's counters (ktrace.OpenMechanisms) and with perf stat -e
// 'syscalls:sys_enter_*' -p PID (and the same IPI tracepoint, per CPU),
// enabled and disabled through perf's control pipe, both read just
// before the load's connections open and just after they close.
// Each kind's count, the futex wake calls and the wake-up IPIs must be
// within perfCheckTolerance of perf's. It logs both, per request.
func TestPerfCheck(t *testing.T) {
	model := os.Getenv(perfCheckEnv)
	if model == "" {
		t.Skipf("the hand check against perf stat runs only when asked: %s=leaderfollowers go test -run TestPerfCheck -v ./harness/", perfCheckEnv)
	}
	testenv.EndToEnd(t)
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Fatalf("%s is set, but: %v", perfCheckEnv, err)
	}
	cfg := Config{Name: model, Model: model}
	for _, c := range Families() {
		if c.Name == model || c.Model == model {
			cfg = c
		}
	}
	cur, err := cpuset.Current()
	if err != nil {
		t.Fatal(err)
	}
	srvCPUs, loadCPUs := SplitCPUs(cur)
	w := Workload{Workload: DefaultWorkload()}
	sp := newSpawner()
	defer sp.close()
	srv, err := startServer(sp, serverBinary, serveArgsOf(&cfg, &w, srvCPUs.String()), w.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	if len(loadCPUs) > 0 {
		prev, _ := cpuset.Current()
		if err := cpuset.Pin(0, loadCPUs); err != nil {
			t.Fatal(err)
		}
		defer cpuset.Pin(0, prev)
	}

	ms, why := ktrace.OpenMechanisms([]int{srv.pid}, srv.info.CPUs)
	if ms == nil {
		t.Fatalf("ktrace.OpenMechanisms: %s", why)
	}
	defer ms.Close()
	threads := startPerf(t, perfBin, "-e", "syscalls:sys_enter_futex", "--filter", ktrace.FutexWakeFilter,
		"-e", "raw_syscalls:sys_enter", "-e", "syscalls:sys_enter_*", "-p", strconv.Itoa(srv.pid))
	var ipis *perfStat
	switch ms.IPIEvents() {
	case "ipi:ipi_send_cpu":
		set, _ := cpuset.Parse(ms.IPICPUs())
		ipis = startPerf(t, perfBin, "-a", "-e", "ipi:ipi_send_cpu", "--filter", ktrace.TargetFilter(set))
	case "":
	default:
		args := []string{"-C", ms.IPICPUs()}
		for _, ev := range strings.Split(ms.IPIEvents(), " + ") {
			args = append(args, "-e", ev)
		}
		ipis = startPerf(t, perfBin, args...)
	}

	lc, err := w.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	lc.Addr, lc.Rate, lc.Seed = srv.addr, 2000, 1
	lc.Warmup, lc.Duration = 500*time.Millisecond, 2*time.Second
	lc.Limits = relaxed
	// The window is the whole load, connections included, between two
	// edges where the server is idle: perf switches its thousands of
	// counters one after another, which takes it about 100 ms, and under
	// load the counters switched first would count more.
	// perf's IPIs are counted inside its threads' window: switching a
	// thread's counter sends the thread's CPU an IPI.
	threads.control(t, "enable")
	ipis.control(t, "enable")
	b, err := ms.Read(true)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := srv.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadgen.Run(context.Background(), lc); err != nil {
		t.Fatalf("loadgen.Run: %v", err)
	}
	s1, err := srv.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	a, err := ms.Read(false)
	if err != nil {
		t.Fatal(err)
	}
	ipis.control(t, "disable")
	threads.control(t, "disable")
	ours := ms.Counts(b, a)
	theirs := threads.stop(t)
	served := s1.Stats.Requests - s0.Stats.Requests
	requests := float64(max(served, 1))

	perfKinds := map[string]uint64{}
	var named uint64
	for _, k := range results.SyscallKinds {
		for _, name := range k.Syscalls {
			perfKinds[k.Name] += theirs["syscalls:sys_enter_"+name]
		}
		named += perfKinds[k.Name]
	}
	perfKinds[results.SyscallOther] = theirs["raw_syscalls:sys_enter"] - min(named, theirs["raw_syscalls:sys_enter"])
	check := func(what string, got, want uint64) {
		t.Helper()
		diff := max(got, want) - min(got, want)
		ok := float64(diff) <= perfCheckTolerance*float64(want)+3
		t.Logf("%-16s ours %8d (%6.3f/req)  perf %8d (%6.3f/req)  diff %5.2f%%  %v", what, got, float64(got)/requests,
			want, float64(want)/requests, 100*float64(diff)/max(float64(want), 1), map[bool]string{true: "ok", false: "OUT OF TOLERANCE"}[ok])
		if !ok {
			t.Errorf("%s: %d counted, perf stat counted %d: more than %g%% apart", what, got, want, 100*perfCheckTolerance)
		}
	}
	t.Logf("%s, %d requests (%v of warm-up and %v of window at %.0f req/s, %d connections), %d server threads",
		cfg.Name, served, lc.Warmup, lc.Duration, lc.Rate, lc.Conns, ours.Threads)
	for _, k := range results.SyscallKindNames() {
		check(k, ours.Syscalls[k], perfKinds[k])
	}
	check("total", ours.Total, theirs["raw_syscalls:sys_enter"])
	var others []string
	for ev, n := range theirs {
		name, ok := strings.CutPrefix(ev, "syscalls:sys_enter_")
		if ok && n > 0 && ev != perfFilteredFutex && !slices.ContainsFunc(results.SyscallKinds, func(k results.SyscallKind) bool { return slices.Contains(k.Syscalls, name) }) {
			others = append(others, fmt.Sprintf("%s %.3f", name, float64(n)/requests))
		}
	}
	slices.Sort(others)
	t.Logf("other, per request, by perf: %s", strings.Join(others, ", "))
	check("futex wakes", ours.FutexWakes, theirs[perfFilteredFutex]+theirs["syscalls:sys_enter_futex_wake"])
	if ipis != nil {
		var sum uint64
		for ev, n := range ipis.stop(t) {
			if slices.Contains(strings.Split(ms.IPIEvents(), " + "), ev) {
				sum += n
			}
		}
		check("wake IPIs", ours.WakeIPIs, sum)
	} else {
		t.Logf("wake IPIs not counted here: %s", ours.WakeIPIsUnavailable)
	}
}

// perfFilteredFutex is the key of the filtered futex counter in
// perfStat.stop's counts: the first syscalls:sys_enter_futex line, the
// one given with --filter before the wildcard.
const perfFilteredFutex = "syscalls:sys_enter_futex (filtered)"

// perfStat is a perf stat process whose counters start disabled (-D -1)
// and are switched through its control pipe.
type perfStat struct {
	cmd      *exec.Cmd
	ctl      io.WriteCloser
	ack      *bufio.Reader
	out      strings.Builder
	ackClose io.Closer
}

// startPerf starts perf stat with args, its counters disabled.
func startPerf(t *testing.T, perfBin string, args ...string) *perfStat {
	t.Helper()
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &perfStat{ctl: ctlW, ack: bufio.NewReader(ackR), ackClose: ackR}
	p.cmd = exec.Command(perfBin, append([]string{"stat", "-x", ",", "-D", "-1", "--control", "fd:3,4"}, args...)...)
	p.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	p.cmd.Stderr = &p.out // perf stat writes its counts to standard error
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlR.Close()
	ackW.Close()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// control sends perf a command ("enable", "disable") and waits for its
// acknowledgement, when its counters are switched. A nil p does nothing.
func (p *perfStat) control(t *testing.T, cmd string) {
	if p == nil {
		return
	}
	if _, err := fmt.Fprintln(p.ctl, cmd); err != nil {
		t.Errorf("perf control %s: %v", cmd, err)
		return
	}
	// perf writes "ack\n" and its C string's NUL.
	if line, err := p.ack.ReadString('\n'); err != nil || strings.Trim(line, "\x00") != "ack\n" {
		t.Errorf("perf control %s: ack %q, %v", cmd, line, err)
	}
}

// stop interrupts perf, waits for it (closing thousands of tracepoint
// counters takes it many seconds) and returns its counts by event; the
// first of two lines of one event is perfFilteredFutex's.
func (p *perfStat) stop(t *testing.T) map[string]uint64 {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("perf stat did not exit within 3 minutes of SIGINT")
	}
	p.ctl.Close()
	p.ackClose.Close()
	counts := map[string]uint64{}
	for _, line := range strings.Split(p.out.String(), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || !strings.Contains(f[2], ":") || strings.HasPrefix(f[0], "<") {
			continue // not a count ("<not counted>": never enabled, so 0)
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			t.Fatalf("perf stat: %q: %v (the output: %s)", line, err, p.out.String())
		}
		ev := f[2]
		if _, seen := counts[ev]; !seen && ev == "syscalls:sys_enter_futex" {
			if _, filtered := counts[perfFilteredFutex]; !filtered {
				ev = perfFilteredFutex
			}
		}
		counts[ev] += n
	}
	if len(counts) == 0 {
		t.Fatalf("perf stat printed no counts: %s", p.out.String())
	}
	return counts
}
