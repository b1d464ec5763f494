package harness

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
	"concbench/wire"
)

// nginxServer is real nginx run by the harness (NginxModel): its master
// process in the foreground (a proc), its worker processes, and what the
// harness reads of them at a window's edges instead of a control
// channel: requests from stub_status; CPU time, context switches and
// memory from /proc over the master and the workers; per worker, the
// responses it wrote (/proc/<pid>/io's write calls) and, at the window's
// end, the connections it holds (/proc/net/tcp's sockets on the listening
// port, found among its descriptors).
type nginxServer struct {
	*proc
	info    models.Info
	version string // "nginx/1.22.1"
	status  string // the stub_status server's host:port
	port    int    // the measured server's port
	workers []int  // the worker processes' pids, as started
	// statusReads counts the harness's own stub_status requests, each a
	// connection and a request that nginx counts: subtracted.
	statusReads uint64
	// skew is how long the status page took at the window's start and
	// end: requests nginx served between its write counts and its page,
	// which amend allows for.
	skew [2]time.Duration
}

var _ target = (*nginxServer)(nil)

func (n *nginxServer) process() *proc        { return n.proc }
func (n *nginxServer) address() string       { return n.info.Addr }
func (n *nginxServer) describe() models.Info { return n.info }
func (n *nginxServer) pids() []int           { return append([]int{n.pid}, n.workers...) }

// serverHost is the host a real server (nginx, asio) listens on: that
// of Options.ServerAddr, or the loopback address. Its port is its own.
func (r *runner) serverHost() string {
	if r.opt.ServerAddr != "" {
		if h, _, err := net.SplitHostPort(r.opt.ServerAddr); err == nil && h != "" {
			return h
		}
	}
	return "127.0.0.1"
}

// startNginx starts nginx for rc's point p (recording in p why not, as
// for a concbench server that does not start): its configuration file,
// pid and error log in the run folder's nginx/ folder.
func (r *runner) startNginx(rc *runConfig, p *results.Point) target {
	host := r.serverHost()
	cpus, _ := cpuset.Parse(rc.cpus) // validated
	// Absolute: nginx takes relative paths from its prefix.
	dir, err := filepath.Abs(filepath.Join(r.dir, "nginx"))
	if err != nil {
		r.notStarted(rc, p, fmt.Errorf("%w: nginx: %v", ErrNotStarted, err))
		return nil
	}
	c := &nginxConf{
		Name: rc.name, Workers: max(rc.size.Threads, 1), CPUs: cpus, Conns: rc.wl.Conns,
		Dir: dir, Base: strings.ReplaceAll(rc.name, "/", "_"),
	}
	n, err := startNginx(r.sp, c, host, rc.cfg.Args)
	if err != nil {
		r.notStarted(rc, p, err)
		return nil
	}
	return r.serving(rc, p, n)
}

// startNginx writes c's configuration (its listening ports chosen now:
// host for the measured server, loopback for stub_status) and starts
// nginx from sp with it, its master on c's CPUs; it returns once nginx
// has started its workers and answered a probe request. Its errors wrap
// ErrNotStarted.
func startNginx(sp *spawner, c *nginxConf, host string, args []string) (*nginxServer, error) {
	bin, err := lookNginx()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	if c.Mode, err = nginxMode(args); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	ports, err := freePorts("127.0.0.1", 2)
	if err == nil && host != "127.0.0.1" {
		var p []int
		p, err = freePorts(host, 1)
		if err == nil {
			ports[0] = p[0]
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: nginx: a free port: %v", ErrNotStarted, err)
	}
	c.Listen, c.Status = net.JoinHostPort(host, strconv.Itoa(ports[0])), net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	conf := filepath.Join(c.Dir, c.Base+".conf")
	var buf bytes.Buffer
	if err := writeNginxConf(&buf, c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	if err := os.MkdirAll(filepath.Join(c.Dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("%w: nginx: %v", ErrNotStarted, err)
	}
	if err := results.WriteFile(conf, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("%w: nginx: %v", ErrNotStarted, err)
	}
	version := nginxVersion(bin)
	pr, err := spawn(sp, exec.Command(bin, "-p", c.Dir, "-c", conf), syscall.SIGTERM)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotStarted, bin, err)
	}
	go pr.reap()
	n := &nginxServer{proc: pr, version: version, status: c.Status, port: ports[0]}
	if err := n.ready(c); err != nil {
		n.end(func() { n.cmd.Process.Signal(syscall.SIGTERM) })
		n.killGroup()
		return nil, fmt.Errorf("%w: nginx (%s): %v; stderr: %s; its error log: %s", ErrNotStarted, conf, err, n.stderr.String(),
			filepath.Join(c.Dir, c.Base+".error.log"))
	}
	return n, nil
}

// nginxVersion returns "nginx/1.22.1" from bin -v, or "nginx" if it says
// nothing of the kind.
func nginxVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	if _, v, ok := strings.Cut(strings.TrimSpace(string(out)), "nginx version: "); ok && v != "" {
		return v
	}
	return "nginx"
}

// ready waits until nginx answers on its status port with all of c's
// workers started, pins the master to c's CPUs (the workers pin
// themselves, worker_cpu_affinity), probes /work, and fills n's Info.
func (n *nginxServer) ready(c *nginxConf) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		_, serr := getNginxStatus(n.status)
		ws, werr := childrenOf(n.pid)
		if serr == nil && werr == nil && len(ws) >= c.Workers {
			n.workers = ws
			n.statusReads++
			break
		}
		if serr == nil {
			n.statusReads++
		}
		select {
		case <-n.done:
			return fmt.Errorf("it exited before serving (%s)", exitText(n.waitErr))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving with %d workers within %v (status: %v; workers: %v)", c.Workers, startTimeout, serr, werr)
		}
	}
	if len(c.CPUs) > 0 {
		if err := cpuset.Pin(n.pid, c.CPUs); err != nil {
			return fmt.Errorf("pin the master to CPUs %s: %w", c.CPUs, err)
		}
	}
	if err := probeStatus(c.Listen, "http"); err != nil {
		return fmt.Errorf("readiness probe: %w", err)
	}
	n.info = models.Info{
		Model: NginxModel, Variant: "accept=" + c.Mode, Protocol: "http", Addr: c.Listen,
		Threads: len(n.workers), NumCPU: runtime.NumCPU(), CPUs: workerCPUs(n.workers[0]), PID: n.pid,
		MaxFDs: uint64(c.NoFile()),
	}
	return nil
}

// probeStatus sends one OpWork request to addr and checks that it is
// answered with status ok (a foreign server echoes no id).
func probeStatus(addr, protocol string) error {
	return probeWith(addr, protocol, func(_ *wire.Request, resp *wire.Response) error {
		if resp.Status != wire.StatusOK {
			return fmt.Errorf("response status %s", resp.Status)
		}
		return nil
	})
}

// workerCPUs returns the CPUs process pid may run on
// (/proc/<pid>/status, Cpus_allowed_list), "" if unreadable.
func workerCPUs(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// read reads nginx at edge e in the form of a concbench snapshot:
// stub_status's requests and accepted connections (less the harness's
// own), the master's and workers' CPU time, context switches and
// resident memory summed, and a ThreadStats per worker: its pid, its
// responses written and, at the window's end, the connections it holds
// (Accepted: before the load connects a worker holds none of the point's
// connections, so that cost's difference is what it holds at the end).
// It fails if the workers are not those nginx started with: a worker
// that died and was replaced restarted its counters.
func (n *nginxServer) read(e edge) (*models.Snapshot, error) {
	// The responses per worker right before the status page: requests
	// go on while the harness reads, so the two counts that amend
	// compares are read as close together as they can be.
	writes := make([]uint64, len(n.workers))
	for i, pid := range n.workers {
		var err error
		if writes[i], err = writeCalls(pid); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	st, err := getNginxStatus(n.status)
	if err != nil {
		return nil, err
	}
	n.statusReads++
	snap := &models.Snapshot{TimeUnixNs: time.Now().UnixNano()}
	if e != edgeBegin {
		n.skew[e-edgeStart] = time.Since(t0)
	}
	if ws, err := childrenOf(n.pid); err != nil || !slices.Equal(ws, n.workers) {
		return nil, fmt.Errorf("nginx: its workers are %v (%v), not the %v it started with: a worker was replaced and its counters restarted", ws, err, n.workers)
	}
	var conns map[int]uint64
	if e == edgeEnd {
		if conns, err = connsByProcess(n.port, n.workers); err != nil {
			snap.Errors = append(snap.Errors, "connections per worker: "+err.Error())
		}
	}
	var ticksUser, ticksSys int64
	cpuNs, schedstat := int64(0), true
	for _, pid := range n.pids() {
		u, s, rss, err := procStat(pid)
		if err != nil {
			return nil, err
		}
		ticksUser, ticksSys = ticksUser+u, ticksSys+s
		snap.RSSBytes += rss
		t, err := sysstat.ReadTasks(pid)
		if err != nil {
			return nil, fmt.Errorf("nginx: process %d: %w", pid, err)
		}
		snap.Rusage.Voluntary += t.Voluntary
		snap.Rusage.Involuntary += t.Involuntary
		cpuNs += t.RunNs
		schedstat = schedstat && t.SchedStat
	}
	snap.Rusage.UserNs, snap.Rusage.SystemNs = splitCPU(cpuNs, schedstat, ticksUser, ticksSys)
	snap.Stats = models.Stats{
		Model: NginxModel, Variant: n.info.Variant, Threads: len(n.workers),
		Requests: st.Requests - min(st.Requests, n.statusReads), ConnsAccepted: st.Accepts - min(st.Accepts, n.statusReads),
	}
	for i, pid := range n.workers {
		snap.Stats.PerThread = append(snap.Stats.PerThread, models.ThreadStats{TID: pid, Role: "worker", Requests: writes[i], Accepted: conns[pid]})
	}
	return snap, nil
}

// splitCPU returns the user and system CPU time of processes that ran
// runNs in all (schedstat, ns) and were sampled ticksUser and ticksSys
// clock ticks in user and system mode: the total split in the ticks'
// ratio, as the kernel's getrusage splits a task's run time. Without
// schedstat the ticks themselves (10 ms each).
func splitCPU(runNs int64, schedstat bool, ticksUser, ticksSys int64) (user, system int64) {
	const tickNs = int64(time.Second / 100) // USER_HZ on every Linux architecture
	ticks := ticksUser + ticksSys
	switch {
	case !schedstat || runNs == 0:
		return ticksUser * tickNs, ticksSys * tickNs
	case ticks == 0:
		return runNs, 0
	}
	user = int64(math.Round(float64(runNs) * float64(ticksUser) / float64(ticks)))
	return user, runNs - user
}

// amend names nginx in the cost and checks the responses per worker
// against stub_status: each response of the generated configuration is
// one writev(2) (a head and a fixed body), so the workers' write calls
// over the window are its requests, give or take the harness's one
// status request and the requests served while the status page was
// read at each edge (skew, at the window's rate). Where they disagree by
// more than that and 1 % the per-worker requests are not what they
// claim: they are dropped (the balance then has connections only), with
// a warning.
func (n *nginxServer) amend(c *results.ServerCost) []string {
	c.Foreign = n.version
	c.GoThreads = 0
	var writes uint64
	for _, t := range c.PerThread {
		writes += t.Requests
	}
	slack := 0.01*float64(c.Requests) + 2
	if c.WindowNs > 0 {
		slack += float64(c.Requests) / float64(c.WindowNs) * float64(n.skew[0]+n.skew[1])
	}
	if c.Requests == 0 || math.Abs(float64(writes)-float64(c.Requests)) <= slack {
		return nil
	}
	for i := range c.PerThread {
		c.PerThread[i].Requests = 0
	}
	return []string{fmt.Sprintf("nginx's workers wrote %d times in the window, stub_status counts %d requests (%.0f allowed for the status page's own time): a response is not one write here, so requests per worker are not reported", writes, c.Requests, slack)}
}

// stop asks nginx to quit gracefully (SIGQUIT: it closes idle keep-alive
// connections and waits for requests in progress), escalating as for a
// concbench server, the last step to the whole process group.
func (n *nginxServer) stop() error {
	escalated := n.end(func() { n.cmd.Process.Signal(syscall.SIGQUIT) })
	n.killGroup() // workers a master that died left behind
	if n.waitErr != nil || escalated != "" {
		if escalated == "" {
			escalated = "it quit"
		}
		return fmt.Errorf("nginx (pid %d) ended badly: %s; %s; stderr: %s", n.pid, escalated, exitText(n.waitErr), n.stderr.String())
	}
	return nil
}

// release ends the workers of a master that ended by itself.
func (n *nginxServer) release() { n.killGroup() }

// childrenOf returns the pids of process pid's children, ascending:
// /proc/<pid>/task/<pid>/children, where the kernel has it (the master
// forks its workers from its one thread), else the parent field of every
// /proc/<pid>/stat.
func childrenOf(pid int) ([]int, error) {
	p := strconv.Itoa(pid)
	if b, err := os.ReadFile("/proc/" + p + "/task/" + p + "/children"); err == nil {
		var kids []int
		for _, f := range strings.Fields(string(b)) {
			c, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("nginx: /proc/%d/task/%d/children: %q", pid, pid, b)
			}
			kids = append(kids, c)
		}
		slices.Sort(kids)
		return kids, nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited meanwhile
		}
		if f, ok := statFields(b); ok && len(f) > 1 && f[1] == p {
			kids = append(kids, c)
		}
	}
	slices.Sort(kids)
	return kids, nil
}

// statFields returns the fields of a /proc/<pid>/stat line after the
// command name (which may hold blanks and parentheses): state first.
func statFields(b []byte) ([]string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// procStat returns process pid's user and system CPU time in clock ticks
// and its resident memory in bytes, from /proc/<pid>/stat.
func procStat(pid int) (user, system, rss int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, fmt.Errorf("nginx: %w", err)
	}
	f, ok := statFields(b)
	// After the name: state(0) … utime(11) stime(12) … rss(21), in pages.
	if !ok || len(f) < 22 {
		return 0, 0, 0, fmt.Errorf("nginx: /proc/%d/stat: malformed %.100q", pid, b)
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	system, err2 := strconv.ParseInt(f[12], 10, 64)
	pages, err3 := strconv.ParseInt(f[21], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, 0, fmt.Errorf("nginx: /proc/%d/stat: %w", pid, err)
	}
	return user, system, pages * int64(os.Getpagesize()), nil
}

// writeCalls returns process pid's write system calls so far
// (/proc/<pid>/io, syscw: write and writev, not send).
func writeCalls(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, fmt.Errorf("nginx: responses per worker: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscw:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("nginx: /proc/%d/io has no syscw", pid)
}

// connsByProcess counts, for each of pids, the established TCP
// connections on local port it holds: the sockets /proc/net/tcp and
// tcp6 list with that local port, matched by inode to the processes'
// descriptors (/proc/<pid>/fd/* → "socket:[inode]").
func connsByProcess(port int, pids []int) (map[int]uint64, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) && f == "/proc/net/tcp6" {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		for _, ino := range established(b, port) {
			inodes[ino] = true
		}
	}
	out := map[int]uint64{}
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			l, err := os.Readlink(dir + "/" + e.Name())
			if err != nil {
				continue // closed meanwhile
			}
			if ino, ok := strings.CutPrefix(l, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
				out[pid]++
			}
		}
	}
	return out, nil
}

// established returns the inodes of the established sockets of a
// /proc/net/tcp (or tcp6) table b whose local port is port.
func established(b []byte, port int) []string {
	hexPort := fmt.Sprintf(":%04X", port)
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
		if i == 0 || len(f) < 10 {
			continue
		}
		if strings.HasSuffix(f[1], hexPort) && f[3] == "01" { // TCP_ESTABLISHED
			out = append(out, f[9])
		}
	}
	return out
}

// verifyFor returns how the load generator checks the responses of
// configuration c's server: nginx and asio echo no request id or
// checksum.
func verifyFor(c *Config) loadgen.VerifyMode {
	if c.Model == NginxModel || c.Model == AsioModel {
		return loadgen.VerifyAuto
	}
	return loadgen.VerifyFull
}
