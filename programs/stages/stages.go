package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"concbench/harness"
	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
	"concbench/loadgen"
	"concbench/programs/internal/override"
	"concbench/programs/serverconf"
)

// Config is a stages run's settings ("concbench stages"'s flags).
type Config struct {
	// ServerBinary is the concbench that serves; "": this executable.
	ServerBinary string
	// Configs are the configurations measured, in turn in every round;
	// nil: harness.LeanConfigs (nginx and the models beside it).
	Configs []harness.Config
	// ServerCPUs and LoadCPUs are where the server and the generator are
	// pinned; both empty: the first CPU of this process's server half
	// (serverconf.SplitCPUs) and the other half.
	ServerCPUs, LoadCPUs string
	// Quota is the servers' CPU quota in CPUs (harness.NewCPUQuota); 0:
	// none. The default is the lean profile's, so that every server's
	// rate is set by its own CPU, not by the generator's.
	Quota float64
	// Conns are the generator's connections, each with one request in
	// flight (closed loop); no work per request, HTTP.
	Conns int
	// Warmup and Duration are each measurement's warm-up and window.
	Warmup, Duration time.Duration
	// Rounds is how many times each configuration is measured, the
	// configurations in turn (reversed in every other round).
	Rounds int
	// Freq is perf record's sampling frequency (per second and thread).
	Freq int
	// Perf is the perf executable; "": perf from PATH.
	Perf string
	// Dir is where nginx's files and perf's data go (perf-ROUND-CONFIG.data,
	// kept for perf report); "": a temporary folder, removed at the end.
	Dir string
	// Module is the Go module whose packages are the server's own code:
	// each is a stage of its own.
	Module string
	// Before, if set, is another concbench executable (an earlier
	// commit's build): every model configuration is measured with it as
	// well, in a column of its own beside the configuration's, with the
	// GOMAXPROCS that binary chooses itself — before and after in one
	// run.
	Before string
}

// beforeSuffix names a configuration's column served by Config.Before.
const beforeSuffix = " (before)"

// Default returns the defaults of every setting.
func Default() Config {
	return Config{Quota: harness.LeanQuota, Conns: 64, Warmup: time.Second, Duration: 3 * time.Second, Rounds: 3,
		Freq: 4999, Module: "concbench"}
}

// Configs returns the configurations list names (comma-separated, by
// name or model), looked up in harness.LeanConfigs, then every
// configuration; empty: LeanConfigs.
func Configs(list string) ([]harness.Config, error) {
	def := harness.LeanConfigs()
	if list == "" {
		return def, nil
	}
	cs, err := override.From(list, def, harness.AllConfigs())
	if err != nil {
		return nil, fmt.Errorf("stages: %w", err)
	}
	return cs, nil
}

// Check checks c's settings and returns c with its defaults filled in.
func (c Config) Check() (Config, error) {
	switch {
	case c.Conns < 1 || c.Conns > loadgen.MaxConns:
		return c, fmt.Errorf("stages: --conns %d out of range (accepted: 1..%d)", c.Conns, loadgen.MaxConns)
	case c.Warmup < loadgen.MinWarmup:
		return c, fmt.Errorf("stages: --warmup %v out of range (accepted: %v or more)", c.Warmup, loadgen.MinWarmup)
	case c.Duration < 100*time.Millisecond:
		return c, fmt.Errorf("stages: --duration %v out of range (accepted: 100ms or more)", c.Duration)
	case c.Rounds < 1:
		return c, fmt.Errorf("stages: --rounds %d out of range (accepted: 1 or more)", c.Rounds)
	case c.Freq < 1 || c.Freq > 100_000:
		return c, fmt.Errorf("stages: --freq %d out of range (accepted: 1..100000)", c.Freq)
	case c.Quota < 0 || c.Quota > 1024:
		return c, fmt.Errorf("stages: --quota %g out of range (accepted: 0 for none, or a share of CPUs up to 1024)", c.Quota)
	case c.Module == "":
		return c, errors.New("stages: the module whose packages are the server's code is empty")
	}
	if c.ServerCPUs == "" && c.LoadCPUs == "" {
		srv, load := serverconf.SplitCPUs()
		if set, err := cpuset.Parse(srv); err == nil && len(set) > 0 {
			srv = cpuset.Set{set[0]}.String()
		}
		c.ServerCPUs, c.LoadCPUs = srv, load
	}
	for _, s := range []struct{ name, v string }{{"server-cpus", c.ServerCPUs}, {"load-cpus", c.LoadCPUs}} {
		if _, err := cpuset.Parse(s.v); err != nil {
			return c, fmt.Errorf("stages: --%s: %w", s.name, err)
		}
	}
	if c.Configs == nil {
		c.Configs = harness.LeanConfigs()
	}
	if c.Before != "" && !slices.ContainsFunc(c.Configs, func(hc harness.Config) bool { return strings.HasSuffix(hc.Name, beforeSuffix) }) {
		if _, err := os.Stat(c.Before); err != nil {
			return c, fmt.Errorf("stages: --before: %w", err)
		}
		var cs []harness.Config
		for _, hc := range c.Configs {
			cs = append(cs, hc)
			if hc.Model != harness.NginxModel && hc.Model != harness.AsioModel {
				b := hc
				b.Name, b.ServerBinary, b.GOMAXPROCS = hc.Name+beforeSuffix, c.Before, 0
				cs = append(cs, b)
			}
		}
		c.Configs = cs
	}
	var err error
	if c.ServerBinary, err = serverconf.Executable(c.ServerBinary); err != nil {
		return c, fmt.Errorf("stages: %w", err)
	}
	return c, nil
}

// thread is one thread's scheduler counters over a window.
type thread struct {
	tid    int
	pid    int
	runNs  int64
	slices int64 // times put on a CPU: its context switches in
}

// measurement is one configuration's measurement in one round.
type measurement struct {
	name        string
	round       int
	unavailable string // why it did not run (no nginx, no io_uring)
	failure     string // why it failed
	rate        float64
	requests    int64
	valid       bool
	reasons     []string
	server      int // the server's threads: the busiest ones
	threads     []thread
	samples     map[string]int64 // by stage
	total       int64            // samples in all
	noStages    string           // why there are no samples
	perfCPU     time.Duration    // perf record's own CPU time, its start included
}

// cpuNs returns the CPU time of the server threads (server true) or of
// the others.
func (m *measurement) cpuNs(server bool) (ns, switches int64) {
	for i, t := range m.threads {
		if (i < m.server) == server {
			ns, switches = ns+t.runNs, switches+t.slices
		}
	}
	return ns, switches
}

// Run measures every configuration of c in turn, c.Rounds times, and
// prints a progress line per measurement and the table at the end.
func Run(ctx context.Context, c Config, stdout, _ io.Writer) error {
	c, err := c.Check()
	if err != nil {
		return err
	}
	perf, perfWhy := c.perfExecutable()
	dir := c.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "concbench-stages-"); err != nil {
			return fmt.Errorf("stages: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("stages: %w", err)
	}
	var quota *harness.CPUQuota
	if c.Quota > 0 {
		if quota, err = harness.NewCPUQuota(c.Quota); err != nil {
			return fmt.Errorf("stages: --quota %g (0: none): %w", c.Quota, err)
		}
		defer quota.Close()
	}
	restore, err := serverconf.PinLoad(c.LoadCPUs)
	if err != nil {
		return fmt.Errorf("stages: --load-cpus %s: %w", c.LoadCPUs, err)
	}
	defer restore()
	fmt.Fprintf(stdout, "stages: %d configurations, %d round(s) of %v after %v; server CPUs %s, load CPUs %s; closed loop, %d connections, HTTP, no work\n",
		len(c.Configs), c.Rounds, c.Duration, c.Warmup, orAll(c.ServerCPUs), orAll(c.LoadCPUs), c.Conns)
	if quota != nil {
		fmt.Fprintf(stdout, "  CPU quota: %s\n", quota)
	}
	for _, b := range []struct{ what, bin string }{{"server", c.ServerBinary}, {"before", c.Before}} {
		if b.bin != "" {
			fmt.Fprintf(stdout, "  %s: %s, %s\n", b.what, b.bin, version(b.bin))
		}
	}
	if perf == "" {
		fmt.Fprintf(stdout, "  no stage split: %s\n", perfWhy)
	} else {
		fmt.Fprintf(stdout, "  stages: %s record -F %d over each window\n", perf, c.Freq)
	}
	byConfig := make([][]*measurement, len(c.Configs))
	for round := range c.Rounds {
		order := make([]int, len(c.Configs))
		for i := range order {
			order[i] = i
		}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			if ctx.Err() != nil {
				return fmt.Errorf("stages: interrupted: %w", ctx.Err())
			}
			m := c.measure(ctx, c.Configs[i], quota, perf, perfWhy, filepath.Join(dir, fmt.Sprintf("perf-%d-%d.data", round, i)), dir)
			m.round = round
			fmt.Fprintf(stdout, "round %d: %s\n", round+1, m.note())
			byConfig[i] = append(byConfig[i], m)
		}
	}
	writeTable(stdout, c.Configs, byConfig)
	return nil
}

// version is the first line of bin's "version": the commit it was
// built from.
func version(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return fmt.Sprintf("version unknown (%v)", err)
	}
	return serverconf.FirstLine(string(out))
}

// perfExecutable returns perf's path, or why there is none.
func (c *Config) perfExecutable() (string, string) {
	name := cmpOr(c.Perf, "perf")
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Sprintf("%s not found (%v): install it (Debian: apt-get install linux-perf) or name it with --perf", name, err)
	}
	return p, ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// measure starts configuration hc's server, runs the load and measures
// it over the window: each thread's CPU time and switches, and perf's
// samples by stage.
func (c *Config) measure(ctx context.Context, hc harness.Config, quota *harness.CPUQuota, perf, perfWhy, data, dir string) *measurement {
	m := &measurement{name: hc.Name, noStages: perfWhy}
	w := harness.DefaultWorkload()
	w.CPU, w.Conns = "0", c.Conns
	wl := harness.Workload{Name: "zero", Workload: w}
	srv, size, err := harness.StartTarget(cmpOr(hc.ServerBinary, c.ServerBinary), dir, hc, wl, c.ServerCPUs)
	if err != nil {
		if errors.Is(err, harness.ErrNotStarted) {
			m.unavailable = serverconf.FirstLine(err.Error())
		} else {
			m.failure = serverconf.FirstLine(err.Error())
		}
		return m
	}
	stop := func() {
		if err := srv.Stop(); err != nil && m.failure == "" {
			m.failure = serverconf.FirstLine(err.Error())
		}
	}
	defer stop()
	if quota != nil {
		if err := quota.Place(srv.Pids()); err != nil {
			m.failure = err.Error()
			return m
		}
	}
	m.server = max(size.Threads, 1)
	lc, err := wl.LoadConfig()
	if err != nil {
		m.failure = err.Error()
		return m
	}
	lc.Addr, lc.Closed, lc.Rate, lc.Outstanding = srv.Addr(), true, 0, 1
	lc.Warmup, lc.Duration = c.Warmup, c.Duration
	lc.Verify = loadgen.VerifyFull
	if hc.Model == harness.NginxModel || hc.Model == harness.AsioModel {
		lc.Verify = loadgen.VerifyAuto // they echo no request id or checksum
	}
	if load, err := cpuset.Parse(c.LoadCPUs); err == nil && len(load) > 0 {
		lc.Workers, lc.WorkerCPUs = loadgen.Placement(load, c.Conns)
	}
	var (
		rec      *recording
		attached map[int]thread // the threads there before perf started: those it samples
	)
	if perf != "" {
		if attached, err = readThreads(srv.Pids()); err != nil {
			m.noStages = err.Error()
		} else if rec, err = startRecord(perf, c.Freq, srv.Pids(), data); err != nil {
			m.noStages, rec = err.Error(), nil
		}
	}
	var (
		before   map[int]thread
		enabled  bool
		edgeErrs []error
	)
	lc.OnWindow = func(start bool) {
		threads, err := readThreads(srv.Pids())
		if err != nil {
			edgeErrs = append(edgeErrs, err)
			return
		}
		if start {
			before = threads
			if rec != nil {
				if err := rec.control("enable"); err != nil {
					m.noStages = err.Error()
				} else {
					enabled = true
				}
			}
			return
		}
		if enabled {
			// The threads are read first: perf's disabling is outside the
			// window, as its enabling was.
			defer func() {
				if err := rec.control("disable"); err != nil {
					m.noStages, enabled = err.Error(), false
				}
			}()
		}
		m.threads = deltas(before, threads)
	}
	r, err := loadgen.Run(ctx, lc)
	if rec != nil {
		if serr := rec.stop(); serr != nil {
			m.noStages, enabled = serr.Error(), false
		}
		if ps := rec.cmd.ProcessState; ps != nil {
			m.perfCPU = ps.UserTime() + ps.SystemTime()
		}
		if why := unsampled(attached, m.threads); enabled && why != "" {
			m.noStages, enabled = why, false
		}
		if !enabled {
			rec = nil
		}
	}
	switch {
	case r == nil:
		m.failure = fmt.Sprintf("the load: %v", err)
		return m
	case len(edgeErrs) > 0:
		m.failure = fmt.Sprintf("reading the server's threads: %v", errors.Join(edgeErrs...))
		return m
	case m.threads == nil:
		m.failure = "the load ended before its window did"
		return m
	}
	m.rate, m.requests, m.valid, m.reasons = r.AchievedRatePerS, r.Requests.Completed, r.Valid, r.Reasons
	if rec != nil {
		m.samples, m.total, err = stagesOf(perf, data, c.Module)
		if err != nil {
			m.noStages = err.Error()
		} else {
			m.noStages = ""
		}
		if c.Dir == "" {
			os.Remove(data)
		}
	}
	return m
}

// maxUnsampled is the most of a window's CPU time that threads perf does
// not sample may have before the stages are left out.
const maxUnsampled = 0.05

// unsampled says why the stages would misstate the window, or "": perf
// record -p samples the threads that existed when it started, and a
// server that started threads since (the Go runtime does, on demand) ran
// part of the window unseen. window is the window's threads, attached
// those perf was started on.
func unsampled(attached map[int]thread, window []thread) string {
	var all, unseen int64
	n := 0
	for _, t := range window {
		all += t.runNs
		if _, ok := attached[t.tid]; !ok {
			unseen += t.runNs
			n++
		}
	}
	if all <= 0 || float64(unseen) <= maxUnsampled*float64(all) {
		return ""
	}
	return fmt.Sprintf("%d of the server's threads started after perf record did and ran %.0f %% of the window's CPU time unsampled (perf record samples the threads there when it starts, before the warm-up): no stages for this measurement",
		n, 100*float64(unseen)/float64(all))
}

// note is the measurement's progress line.
func (m *measurement) note() string {
	switch {
	case m.unavailable != "":
		return m.name + ": unavailable: " + m.unavailable
	case m.failure != "":
		return m.name + ": FAILED: " + m.failure
	}
	cpu, sw := m.cpuNs(true)
	ocpu, osw := m.cpuNs(false)
	per := float64(max(m.requests, 1))
	s := fmt.Sprintf("%s: %.0f req/s, CPU %.2f µs/req (server threads %.2f, others %.2f), switches/req %.4f (server threads) %.4f (others)",
		m.name, m.rate, float64(cpu+ocpu)/per/1e3, float64(cpu)/per/1e3, float64(ocpu)/per/1e3, float64(sw)/per, float64(osw)/per)
	if m.total > 0 {
		s += fmt.Sprintf(", %d samples (perf's own CPU %v)", m.total, m.perfCPU.Round(time.Millisecond))
	} else {
		s += "; no stages: " + m.noStages
	}
	if !m.valid {
		s += "; INVALID: " + strings.Join(m.reasons, "; ")
	}
	return s
}

// readThreads reads every thread of the processes pids.
func readThreads(pids []int) (map[int]thread, error) {
	out := map[int]thread{}
	for _, pid := range pids {
		ts, err := sysstat.SchedByThread(pid)
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		for tid, s := range ts {
			out[tid] = thread{tid: tid, pid: pid, runNs: s.RunNs, slices: s.Slices}
		}
	}
	return out, nil
}

// deltas returns each thread's counters between readings a and b
// (threads in both), busiest first.
func deltas(a, b map[int]thread) []thread {
	var out []thread
	for tid, t := range b {
		if s, ok := a[tid]; ok {
			out = append(out, thread{tid: tid, pid: t.pid, runNs: t.runNs - s.runNs, slices: t.slices - s.slices})
		}
	}
	slices.SortFunc(out, func(x, y thread) int {
		if x.runNs != y.runNs {
			return int(y.runNs - x.runNs)
		}
		return x.tid - y.tid
	})
	return out
}

// recording is a perf record started with its events disabled, enabled
// and disabled over the window through its control FIFO: perf's start
// (reading every mapping of the server's threads) costs a few hundred
// milliseconds of CPU, which inside the window would take the
// generator's CPU.
type recording struct {
	cmd      *exec.Cmd
	stderr   bytes.Buffer
	ctl, ack *os.File
}

// startRecord starts perf recording every thread of pids at freq
// samples a second into data, its events disabled; its control FIFOs
// are made beside data.
func startRecord(perf string, freq int, pids []int, data string) (*recording, error) {
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	r := &recording{}
	ctl, ack := data+".ctl", data+".ack"
	for _, f := range []string{ctl, ack} {
		os.Remove(f)
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return nil, fmt.Errorf("perf's control FIFO: %v", err)
		}
	}
	var err error
	// Read and write: opening a FIFO so does not wait for its other end.
	if r.ctl, err = os.OpenFile(ctl, os.O_RDWR, 0); err == nil {
		r.ack, err = os.OpenFile(ack, os.O_RDWR, 0)
	}
	if err != nil {
		r.close()
		return nil, fmt.Errorf("perf's control FIFO: %v", err)
	}
	r.cmd = exec.Command(perf, "record", "-q", "-F", strconv.Itoa(freq), "-p", strings.Join(ps, ","), "-o", data,
		"-D", "-1", "--control", "fifo:"+ctl+","+ack)
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		r.close()
		return nil, fmt.Errorf("%s record: %v", perf, err)
	}
	return r, nil
}

// ackWait bounds the wait for perf's answer to a control command.
const ackWait = 10 * time.Second

// control sends perf a command ("enable", "disable") and waits for its
// acknowledgement.
func (r *recording) control(cmd string) error {
	if _, err := r.ctl.WriteString(cmd + "\n"); err != nil {
		return fmt.Errorf("perf record: %s: %v", cmd, err)
	}
	r.ack.SetReadDeadline(time.Now().Add(ackWait))
	buf := make([]byte, 16)
	n, err := r.ack.Read(buf)
	if err != nil {
		return fmt.Errorf("perf record: %s: no acknowledgement: %v; %s", cmd, err, serverconf.FirstLine(r.stderr.String()))
	}
	if got := strings.Trim(string(buf[:n]), "\x00\n "); got != "ack" {
		return fmt.Errorf("perf record: %s: answered %q", cmd, got)
	}
	return nil
}

// stop ends the recording and waits for perf to write its data.
func (r *recording) stop() error {
	defer r.close()
	r.cmd.Process.Signal(syscall.SIGINT)
	err := r.cmd.Wait()
	// perf record writes its data on SIGINT, then ends by it again.
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("perf record: %v: %s", err, serverconf.FirstLine(r.stderr.String()))
	}
	return nil
}

// close closes the control FIFOs and removes them.
func (r *recording) close() {
	for _, f := range []*os.File{r.ctl, r.ack} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}

// stagesOf reads perf's data file and sums its samples by stage.
func stagesOf(perf, data, module string) (map[string]int64, int64, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(perf, ReportArgs(data)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("perf report: %v: %s", err, serverconf.FirstLine(errb.String()))
	}
	ss, err := ParseReport(&out)
	if err != nil {
		return nil, 0, err
	}
	by, total := map[string]int64{}, int64(0)
	for i := range ss {
		by[ss[i].Stage(module)] += ss[i].Samples
		total += ss[i].Samples
	}
	if total == 0 {
		return nil, 0, errors.New("perf recorded no samples of the server")
	}
	return by, total, nil
}

// orAll names a CPU list, or says there is none.
func orAll(cpus string) string {
	if cpus == "" {
		return "unpinned"
	}
	return cpus
}
