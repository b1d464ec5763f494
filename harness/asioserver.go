package harness

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
	"concbench/models"
	"concbench/results"
)

// asioServer is real asio run by the harness (AsioModel):
// bin/asio-server, one process whose io_context threads serve, started
// and stopped as a concbench server is (a server: its stdin the control
// channel, "quit" or the end of stdin to stop) but read as nginx is: its
// requests, connections and requests per thread from its own counters
// ("stats"), its CPU time, context switches and memory from /proc over
// its threads, where the harness reads every server's.
type asioServer struct {
	*server
	version string // "asio/1.22.1"
}

var _ target = (*asioServer)(nil)

// startAsio starts real asio for rc's point p (recording in p why not,
// as for a concbench server that does not start).
func (r *runner) startAsio(rc *runConfig, p *results.Point) target {
	cpus, _ := cpuset.Parse(rc.cpus) // validated
	a, err := startAsio(r.sp, max(rc.size.Threads, 1), cpus, r.serverHost(), rc.wl.Protocol)
	if err != nil {
		r.notStarted(rc, p, err)
		return nil
	}
	return r.serving(rc, p, a)
}

// startAsio starts the asio server from sp with threads io_context
// threads listening on host (its port the kernel's choice, which it
// prints), pins every thread to cpus (none: unpinned), and returns once
// it has answered a probe request. Its errors wrap ErrNotStarted.
func startAsio(sp *spawner, threads int, cpus cpuset.Set, host, protocol string) (*asioServer, error) {
	if protocol != "http" {
		return nil, fmt.Errorf("%w: asio: the asio server speaks the HTTP dialect only, not %q", ErrNotStarted, protocol)
	}
	bin, err := lookAsio()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	// Port 0: the server binds and says where, so no port is chosen
	// here and then taken by another process before the server binds
	// it (freePorts' race).
	name := "asio (" + bin + "):"
	s, line, err := launch(sp, exec.Command(bin, strconv.Itoa(threads), host, "0"), protocol, name)
	if err != nil {
		return nil, err
	}
	a := &asioServer{server: s}
	fail := func(format string, args ...any) (*asioServer, error) {
		return nil, s.failed(name, format, args...)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "listening" {
		return fail("unexpected first line %.200q", line)
	}
	s.addr, a.version = f[1], f[2]
	// Every io_context thread runs before the line is printed: pinning
	// them all now pins the server (cpuset.Pin).
	if len(cpus) > 0 {
		if err := cpuset.Pin(s.pid, cpus); err != nil {
			return fail("pin its threads to CPUs %s: %v", cpus, err)
		}
	}
	if err := probeStatus(s.addr, protocol); err != nil {
		return fail("readiness probe: %v", err)
	}
	snap, err := a.read(edgeBegin)
	if err != nil {
		return fail("%v", err)
	}
	if n := len(snap.Stats.PerThread); n != threads {
		return fail("it runs %d io_context threads, not %d", n, threads)
	}
	s.info = models.Info{
		Model: AsioModel, Protocol: protocol, Addr: s.addr, Threads: threads,
		NumCPU: runtime.NumCPU(), CPUs: workerCPUs(s.pid), PID: s.pid,
	}
	return a, nil
}

// read reads asio at a window's edge in the form of a concbench
// snapshot: its requests, connections accepted and requests per
// io_context thread (role "pool"), then its CPU time, context switches
// (summed over its threads) and resident memory from /proc.
func (a *asioServer) read(edge) (*models.Snapshot, error) {
	b, err := a.control("stats")
	if err != nil {
		return nil, fmt.Errorf("asio: %w", err)
	}
	accepted, threads, err := parseAsioStats(string(b))
	if err != nil {
		return nil, err
	}
	snap := &models.Snapshot{TimeUnixNs: time.Now().UnixNano()}
	ticksUser, ticksSys, rss, err := procStat(a.pid)
	if err != nil {
		return nil, err
	}
	t, err := sysstat.ReadTasks(a.pid)
	if err != nil {
		return nil, fmt.Errorf("asio: process %d: %w", a.pid, err)
	}
	snap.RSSBytes = rss
	snap.Rusage.Voluntary, snap.Rusage.Involuntary = t.Voluntary, t.Involuntary
	snap.Rusage.UserNs, snap.Rusage.SystemNs = splitCPU(t.RunNs, t.SchedStat, ticksUser, ticksSys)
	snap.Stats = models.Stats{Model: AsioModel, Threads: len(threads), ConnsAccepted: accepted, PerThread: threads}
	for _, th := range threads {
		snap.Stats.Requests += th.Requests
	}
	return snap, nil
}

// parseAsioStats parses the asio server's answer to "stats":
//
//	stats ACCEPTED TID:REQUESTS TID:REQUESTS ...
//
// the connections it accepted and, per io_context thread, its thread id
// and the requests it answered (realservers/asio/server.cpp; must
// match).
func parseAsioStats(line string) (accepted uint64, threads []models.ThreadStats, err error) {
	bad := fmt.Errorf("asio: stats: unexpected answer %.200q", line)
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "stats" {
		return 0, nil, bad
	}
	if accepted, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return 0, nil, bad
	}
	for _, pair := range f[2:] {
		tid, reqs, ok := strings.Cut(pair, ":")
		id, err1 := strconv.Atoi(tid)
		n, err2 := strconv.ParseUint(reqs, 10, 64)
		if !ok || err1 != nil || err2 != nil || id <= 0 {
			return 0, nil, bad
		}
		threads = append(threads, models.ThreadStats{TID: id, Role: "pool", Requests: n})
	}
	return accepted, threads, nil
}

// amend names asio in the cost: it is no Go program (no Go threads, no
// Go heap).
func (a *asioServer) amend(c *results.ServerCost) []string {
	c.Foreign = a.version
	c.GoThreads = 0
	return nil
}
