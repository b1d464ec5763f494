package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"concbench/internal/cpuset"
	"concbench/models"
	"concbench/wire"
)

// Timeouts of the server process's life cycle (variables for tests).
var (
	startTimeout   = 30 * time.Second // for the address line (calibration runs first)
	controlTimeout = 10 * time.Second // for a control-channel answer
	probeTimeout   = 5 * time.Second  // for the readiness probe's response
	quitTimeout    = 5 * time.Second  // after "quit", before SIGTERM
	termTimeout    = 2 * time.Second  // after SIGTERM, before SIGKILL
	pointGrace     = time.Minute      // a point's watchdog, beyond its schedule and timeouts
)

// stderrLines is how many lines of a server's stderr are kept for failure
// reports.
const stderrLines = 20

// proc is a server process the harness started: its pid, the tail of
// its stderr, and its end. Both server drivers (server: concbench serve;
// nginxServer: nginx) are one.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	stderr *tail
	done   chan struct{} // closed when the process has exited and been reaped
	// waitErr is cmd.Wait's result, valid after done is closed.
	waitErr error
}

// spawn starts cmd from sp's thread in a process group of its own, with
// its stderr kept in a tail; pdeath is the signal the kernel sends it if
// the harness dies. The caller reaps it (reap), once it has taken what
// it reads from the process's other pipes.
func spawn(sp *spawner, cmd *exec.Cmd, pdeath syscall.Signal) (*proc, error) {
	cmd.SysProcAttr = sysProcAttr(pdeath)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	p := &proc{cmd: cmd, stderr: &tail{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := sp.start(cmd); err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	return p, nil
}

// reap waits for the process to end and records how it ended.
func (p *proc) reap() {
	p.waitErr = p.cmd.Wait()
	close(p.done)
}

// end ends the process: ask is the polite request to quit (nil: none);
// if it has not ended quitTimeout later it is sent SIGTERM, and
// termTimeout after that its whole process group SIGKILL. It returns how
// the end escalated, "" if the process ended when asked.
func (p *proc) end(ask func()) string {
	if ask != nil && !p.exited() {
		ask()
	}
	wait := func(d time.Duration) bool {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-p.done:
			return true
		case <-timer.C:
			return false
		}
	}
	if wait(quitTimeout) {
		return ""
	}
	escalated := fmt.Sprintf("it did not quit within %v and was sent SIGTERM", quitTimeout)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if !wait(termTimeout) {
		escalated += fmt.Sprintf(", then SIGKILL after %v", termTimeout)
		p.killGroup()
		<-p.done
	}
	return escalated
}

// killGroup sends SIGKILL to the process's group (spawn made it the
// group's leader): nginx's workers die with their master.
func (p *proc) killGroup() {
	if err := syscall.Kill(-p.pid, syscall.SIGKILL); err != nil {
		p.cmd.Process.Kill()
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// server is one "concbench serve" process: started, readiness-checked,
// queried over its control channel (stdin/stdout) and stopped.
type server struct {
	*proc
	addr     string
	protocol string // what it serves
	info     models.Info
	stdin    io.WriteCloser
	lines    chan string // stdout lines after the address; closed at EOF
}

// spawner starts processes from one locked OS thread that lives as long
// as the run, because Linux delivers a child's parent-death signal when
// the thread that forked it exits, not the process: a server forked from
// an ordinary goroutine's thread would be killed when that thread happened
// to be a locked load-generator worker's and exited with it.
type spawner struct {
	reqs chan spawnReq
	quit chan struct{}
	wg   sync.WaitGroup
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), quit: make(chan struct{})}
	s.wg.Go(func() {
		// Never unlocked: the thread exits with the goroutine, and only
		// then do its children get their parent-death signal.
		runtime.LockOSThread()
		for {
			select {
			case r := <-s.reqs:
				r.done <- r.cmd.Start()
			case <-s.quit:
				return
			}
		}
	})
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}

func (s *spawner) close() {
	close(s.quit)
	s.wg.Wait()
}

// tail keeps the last lines written to it (a server's stderr).
type tail struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			if len(t.partial) > 4096 { // a runaway line: keep its end
				t.partial = t.partial[len(t.partial)-4096:]
			}
			break
		}
		t.partial = append(t.partial, p[:i]...)
		t.lines = append(t.lines, string(t.partial))
		if len(t.lines) > stderrLines {
			t.lines = t.lines[1:]
		}
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// String returns the kept lines, the unterminated last one included.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.lines
	if len(t.partial) > 0 {
		ls = append(ls[:len(ls):len(ls)], string(t.partial))
	}
	return strings.Join(ls, "\n")
}

// serveArgs returns the serve command line of rc: its model and
// protocol, pinned to its CPUs (none: unpinned), with its size's flags
// and its own.
func serveArgs(rc *runConfig) []string {
	args := []string{"serve", "--model", rc.cfg.Model, "--protocol", rc.wl.Protocol}
	if rc.cpus != "" {
		args = append(args, "--cpus", rc.cpus)
	}
	if n := rc.size.Threads; n > 0 {
		args = append(args, "--threads", strconv.Itoa(n))
	}
	if n := rc.size.GOMAXPROCS; n > 0 {
		args = append(args, "--gomaxprocs", strconv.Itoa(n))
	}
	args = append(args, rc.size.Args...)
	return append(args, rc.cfg.Args...)
}

// backendArgs returns the serve command line of a chain's back end,
// pinned to cpus (empty: unpinned).
func backendArgs(b *Backend, cpus string) []string {
	args := []string{"serve", "--model", b.Model, "--protocol", "binary"}
	if cpus != "" {
		args = append(args, "--cpus", cpus)
	}
	return append(args, b.Args...)
}

// startChain starts the server of args, serving protocol; for a chain
// (b not nil), the back end of backArgs first, and the server told its
// address (--backend). If the server does not start, the error says so
// and the back end, if it started, is returned running, for the caller
// to stop its own way.
func startChain(sp *spawner, bin string, args []string, b *Backend, backArgs []string, protocol string) (srv, back *server, err error) {
	if b != nil {
		// A chain: the back end first, then the front end told its address.
		if back, err = startServer(sp, bin, backArgs, "binary"); err != nil {
			return nil, nil, fmt.Errorf("back end %s: %w", b.Model, err)
		}
		args = append(slices.Clip(args), "--backend", back.addr)
	}
	srv, err = startServer(sp, bin, args, protocol)
	return srv, back, err
}

// ErrNotStarted is wrapped by the errors of StartServer and StartConfig
// (and the harness's own starts) when the server never became ready, as
// opposed to failing a later request: where it never ran, the model is
// unavailable on this machine or in this binary, for the reason the error
// carries (the Proactor without io_uring).
var ErrNotStarted = errors.New("server did not start")

// startServer starts bin with args and waits until it is ready: it has
// printed its address, answered "info", and served one probe request
// over protocol. The error wraps ErrNotStarted and carries the tail of the
// server's stderr (its own reason, e.g. "io_uring_setup: operation not
// permitted").
func startServer(sp *spawner, bin string, args []string, protocol string) (*server, error) {
	s, line, err := launch(sp, exec.Command(bin, args...), protocol, "serve")
	if err != nil {
		return nil, err
	}
	s.addr = strings.TrimSpace(line)
	b, err := s.control("info")
	if err != nil {
		return nil, s.failed("", "info: %v", err)
	}
	if err := json.Unmarshal(b, &s.info); err != nil {
		return nil, s.failed("", "info: %v in %q", err, b)
	}
	if err := probe(s.addr, protocol); err != nil {
		return nil, s.failed("", "readiness probe: %v", err)
	}
	return s, nil
}

// launch starts cmd from sp as a server speaking protocol, its stdin the
// control channel and its stdout read line by line, and returns it with
// the first line it printed: where it listens. name, if not empty,
// prefixes its errors, which wrap ErrNotStarted.
func launch(sp *spawner, cmd *exec.Cmd, protocol, name string) (*server, string, error) {
	s := &server{protocol: protocol, lines: make(chan string, 64)}
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	if s.proc, err = spawn(sp, cmd, syscall.SIGKILL); err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", ErrNotStarted, cmd.Path, err)
	}
	go s.readLines(stdout)
	line, err := s.nextLine(startTimeout)
	switch {
	case errors.Is(err, errOutputClosed):
		<-s.done
		return nil, "", s.failed(name, "exited before listening (%s)", exitText(s.waitErr))
	case err != nil:
		return nil, "", s.failed(name, "no address line within %v", startTimeout)
	}
	return s, line, nil
}

// failed kills s, which did not start, and returns why: the message,
// prefixed by name if not empty, with whatever s wrote on stderr.
func (s *server) failed(name, format string, args ...any) error {
	s.kill()
	msg := fmt.Sprintf(format, args...)
	if name != "" {
		msg = name + " " + msg
	}
	if t := s.stderr.String(); t != "" {
		msg += "; stderr: " + t
	}
	return fmt.Errorf("%w: %s", ErrNotStarted, msg)
}

// readLines passes the lines of the server's stdout to s.lines until
// EOF, then closes it and reaps the process.
func (s *server) readLines(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // a snapshot line grows with the thread count
	for sc.Scan() {
		select {
		case s.lines <- sc.Text():
		default:
			// Nobody asked for this line (the harness sends one
			// command at a time and treats a timed-out one as a
			// broken server): dropping it keeps stdout drained.
		}
	}
	close(s.lines)
	// Only after EOF: Wait closes the pipe, which would lose unread
	// output.
	s.reap()
}

// exitText describes a process's end from cmd.Wait's error.
func exitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	}
	return err.Error()
}

// control sends one control-channel command and returns its one-line
// answer.
func (s *server) control(cmd string) ([]byte, error) {
	if s.exited() {
		return nil, fmt.Errorf("control %q: the server has exited (%s)", cmd, exitText(s.waitErr))
	}
	if _, err := io.WriteString(s.stdin, cmd+"\n"); err != nil {
		return nil, fmt.Errorf("control %q: %w", cmd, err)
	}
	line, err := s.nextLine(controlTimeout)
	switch {
	case errors.Is(err, errOutputClosed):
		return nil, fmt.Errorf("control %q: the server closed its output", cmd)
	case err != nil:
		return nil, fmt.Errorf("control %q: no answer within %v", cmd, controlTimeout)
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(line), &e) == nil && e.Error != "" {
		return nil, fmt.Errorf("control %q: %s", cmd, e.Error)
	}
	return []byte(line), nil
}

// errOutputClosed and errNoLine are why nextLine returned no line.
var (
	errOutputClosed = errors.New("the server closed its output")
	errNoLine       = errors.New("no line in time")
)

// nextLine waits up to timeout for the server's next line of output:
// the start waits so for the address line, control for each answer. Its
// error is errOutputClosed when the output ended first (the server
// exited), errNoLine when no line came in time.
func (s *server) nextLine(timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-s.lines:
		if !ok {
			return "", errOutputClosed
		}
		return line, nil
	case <-timer.C:
		return "", errNoLine
	}
}

// snapshot takes a control-channel snapshot (without the costly per-task
// sums: the harness reads those itself, see taskStats).
func (s *server) snapshot() (*models.Snapshot, error) {
	b, err := s.control("snapshot")
	if err != nil {
		return nil, err
	}
	var snap models.Snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, fmt.Errorf("snapshot: %v in %.200q", err, b)
	}
	return &snap, nil
}

// stop asks the server to quit, then escalates to SIGTERM and SIGKILL;
// it returns an error describing an unclean end (a non-zero exit, a
// signal, or a server that needed one), with the stderr tail.
func (s *server) stop() error {
	escalated := s.end(func() { io.WriteString(s.stdin, "quit\n") })
	s.stdin.Close()
	if s.waitErr != nil || escalated != "" {
		if escalated == "" {
			escalated = "it quit"
		}
		return fmt.Errorf("server %s (pid %d) ended badly: %s; %s; stderr: %s", s.info.Model, s.pid, escalated, exitText(s.waitErr), s.stderr.String())
	}
	return nil
}

// kill ends the process at once and reaps it.
func (s *server) kill() {
	s.killGroup()
	s.stdin.Close()
	<-s.done
}

// Server is a running "concbench serve" process for a command that drives
// a server itself (concbench priority, hostile): the harness's own server
// driver — readiness check, control channel, escalating stop — behind a
// small API. Its methods are not safe for concurrent use: the control
// channel carries one command at a time.
type Server struct {
	srv  *server
	back *server  // a chain's back end (StartConfig), or nil
	sp   *spawner // the locked thread srv was forked from; closed by Stop
}

// StartServer starts bin with args (a "serve" command line: "serve",
// "--model", …) and waits until the server is ready: it has printed its
// address, answered "info", and served one verified probe request over
// protocol ("http" or "binary", the --protocol it was given). It is forked
// from a locked OS thread of its own that lives until Stop (see spawner),
// in its own process group, and is killed if this process dies. A
// server that does not start is reaped, and the error carries the tail
// of its stderr (its own reason).
func StartServer(bin string, args []string, protocol string) (*Server, error) {
	sp := newSpawner()
	srv, err := startServer(sp, bin, args, protocol)
	if err != nil {
		sp.close()
		return nil, err
	}
	return &Server{srv: srv, sp: sp}, nil
}

// Addr is the address the server listens on, as it printed it.
func (s *Server) Addr() string { return s.srv.addr }

// PID is the server's process id.
func (s *Server) PID() int { return s.srv.pid }

// Info is the server's answer to "info": its model, variant, threads,
// CPUs and limits.
func (s *Server) Info() models.Info { return s.srv.info }

// Snapshot takes a control-channel snapshot: rusage over all the
// server's threads, allocations, RSS and the model's counters (without
// the per-task sums, which cost the server CPU time per thread).
func (s *Server) Snapshot() (*models.Snapshot, error) { return s.srv.snapshot() }

// Stop asks the server to quit, escalating to SIGTERM after 5 s and
// SIGKILL 2 s later, waits for it — then, likewise, for a chain's back
// end — and releases its thread. The error describes an unclean end (a
// non-zero exit, a signal, or a server that needed one), with the tail
// of its stderr. Stop may be called once.
func (s *Server) Stop() error {
	err := s.srv.stop()
	if s.back != nil {
		if berr := s.back.stop(); berr != nil {
			err = errors.Join(err, fmt.Errorf("back end: %w", berr))
		}
	}
	s.sp.close()
	return err
}

// Do sends req to the server on a connection of its own, in the protocol
// it serves, and returns the response, verified (wire.Verify), whatever
// its status; its payload is its own. It is how a command asks a server
// something besides its load: a ledger's total (concbench soak).
func (s *Server) Do(req wire.Request) (wire.Response, error) {
	return roundTrip(s.srv.addr, s.srv.protocol, req)
}

// StartConfig starts configuration c's server as a run does — for a
// chain (Config.Backend), its back end first, serving binary on
// loopback — sized for workload w on the CPUs cpus (a CPU list; empty:
// unpinned, sized for this process's CPUs), serving w's protocol, with
// extra serve flags after its own (given to a chain's back end too: the
// service's flags, such as --accounts, reach the ledger wherever it
// is). It is how a command that drives configurations itself (concbench
// soak) starts them; Size is what the server runs with, and Stop stops
// both servers of a chain.
func StartConfig(bin string, c Config, w Workload, cpus string, extra []string) (*Server, Size, error) {
	n := 0
	if cpus != "" {
		set, err := cpuset.Parse(cpus)
		if err != nil {
			return nil, Size{}, fmt.Errorf("harness: %w", err)
		}
		n = len(set)
	} else if cur, err := cpuset.Current(); err == nil {
		n = len(cur)
	}
	size := c.size(&w, n)
	if size.Err != "" {
		return nil, size, fmt.Errorf("harness: configuration %q: %s", c.Name, size.Err)
	}
	args := append(serveArgs(&runConfig{cfg: c, wl: w, size: size, cpus: cpus}), extra...)
	var backArgs []string
	if c.Backend != nil {
		backArgs = append(backendArgs(c.Backend, cpus), extra...)
	}
	sp := newSpawner()
	srv, back, err := startChain(sp, bin, args, c.Backend, backArgs, w.Protocol)
	if err != nil {
		if back != nil {
			back.stop()
		}
		sp.close()
		return nil, size, err
	}
	return &Server{srv: srv, back: back, sp: sp}, size, nil
}

// probe sends one OpWork request to addr and checks its response.
func probe(addr, protocol string) error {
	return probeWith(addr, protocol, func(req *wire.Request, resp *wire.Response) error {
		if resp.Status != wire.StatusOK {
			return fmt.Errorf("response status %s", resp.Status)
		}
		return wire.Verify(req, resp)
	})
}

// probeWith sends one OpWork request to addr and returns what check says
// of its response.
func probeWith(addr, protocol string, check func(req *wire.Request, resp *wire.Response) error) error {
	req := wire.Request{ID: 1, Op: wire.OpWork, Size: 16}
	resp, err := exchange(addr, protocol, req)
	if err != nil {
		return err
	}
	return check(&req, &resp)
}

// roundTrip sends req to addr over protocol on a new connection and
// returns its response, verified (wire.Verify); the exchange may take
// probeTimeout.
func roundTrip(addr, protocol string, req wire.Request) (wire.Response, error) {
	resp, err := exchange(addr, protocol, req)
	if err != nil {
		return resp, err
	}
	return resp, wire.Verify(&req, &resp)
}

// exchange sends req to addr over protocol on a new connection and
// returns its response, unverified, with its payload copied; the
// exchange may take probeTimeout.
func exchange(addr, protocol string, req wire.Request) (wire.Response, error) {
	codec, err := wire.New(protocol, wire.Limits{})
	if err != nil {
		return wire.Response{}, err
	}
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return wire.Response{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := conn.Write(codec.AppendRequest(nil, &req)); err != nil {
		return wire.Response{}, err
	}
	buf := make([]byte, 0, 4096)
	for {
		var resp wire.Response
		n, err := codec.DecodeResponse(buf, &resp)
		if err != nil {
			return resp, fmt.Errorf("response: %w", err)
		}
		if n > 0 {
			resp.Payload = slices.Clone(resp.Payload)
			return resp, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return wire.Response{}, err
		}
	}
}
