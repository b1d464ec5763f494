package harness

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"concbench/internal/testenv"
	"concbench/results"
	"concbench/wire"
)

// TestServerLifeCycle starts a real server, checks readiness, the control
// channel and the process group, and stops it cleanly.
func TestServerLifeCycle(t *testing.T) {
	testenv.EndToEnd(t)
	sp := newSpawner()
	defer sp.close()
	w := Workload{}
	w.Protocol, w.Conns = "binary", 4
	srv, err := startServer(sp, serverBinary, serveArgsOf(&Config{Model: "netpoll"}, &w, ""), "binary")
	if err != nil {
		t.Fatal(err)
	}
	if srv.info.PID != srv.pid || srv.info.Model != "netpoll" || srv.info.Protocol != "binary" || srv.addr != srv.info.Addr {
		t.Errorf("server %d at %s, info %+v", srv.pid, srv.addr, srv.info)
	}
	snap, err := srv.snapshot()
	if err != nil || snap.Stats.Requests != 1 { // the readiness probe
		t.Errorf("snapshot = %+v, %v; want the probe's 1 request", snap, err)
	}
	if _, err := srv.control("dance"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("an unknown control command: %v", err)
	}
	if pgid, err := unix.Getpgid(srv.pid); err != nil || pgid != srv.pid {
		t.Errorf("server pid %d in process group %d (%v); want its own", srv.pid, pgid, err)
	}
	if err := srv.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if !srv.exited() {
		t.Error("the server is still running after stop")
	}
}

// TestServerStartFailures checks that a server that cannot start reports
// why: serve's own message, or the exec error.
func TestServerStartFailures(t *testing.T) {
	testenv.EndToEnd(t)
	sp := newSpawner()
	defer sp.close()
	w := Workload{}
	w.Protocol = "http"
	for _, tc := range []struct {
		name string
		bin  string
		args []string
		want string
	}{
		{name: "unknown model", bin: serverBinary, args: serveArgsOf(&Config{Model: "nosuch"}, &w, ""), want: `exit status 1); stderr: concbench: serve: unknown model "nosuch"`},
		{name: "bad model flag", bin: serverBinary, args: serveArgsOf(&Config{Model: "leaderfollowers", Args: []string{"--promotion", "random"}}, &w, ""), want: "random"},
		{name: "no binary", bin: "/nonexistent/concbench", want: "/nonexistent/concbench"},
		{name: "not a server", bin: "/bin/sh", args: []string{"-c", "echo 127.0.0.1:1; exec cat >/dev/null"}, want: "info: control \"info\": the server closed its output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := startServer(sp, tc.bin, tc.args, "http")
			if !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("startServer = %v; want ErrNotStarted containing %q", err, tc.want)
			}
		})
	}
}

// TestServerStopEscalates checks that a server that ignores quit and
// SIGTERM is killed, and that stop says so.
func TestServerStopEscalates(t *testing.T) {
	testenv.EndToEnd(t)
	q, term := quitTimeout, termTimeout
	quitTimeout, termTimeout = 50*time.Millisecond, 50*time.Millisecond
	defer func() { quitTimeout, termTimeout = q, term }()
	sp := newSpawner()
	defer sp.close()
	// A process that ignores SIGTERM and quit: not a server, so build the
	// server value by hand as startServer would.
	// It says when it ignores SIGTERM: a signal before the trap would
	// end it at once, on a machine slow to run the shell.
	cmd := exec.Command("/bin/sh", "-c", `trap "" TERM; echo ignoring; exec sleep 1000`)
	s := &server{lines: make(chan string, 1)}
	s.stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var err error
	if s.proc, err = spawn(sp, cmd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ignoring\n" {
		t.Fatalf("the shell said %q (%v), want it ignoring SIGTERM", line, err)
	}
	go func() {
		stdout.Read(make([]byte, 1)) // EOF at exit
		s.reap()
	}()
	err = s.stop()
	if err == nil || !strings.Contains(err.Error(), "sent SIGTERM, then SIGKILL") || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("stop = %v; want it to report SIGTERM, then SIGKILL", err)
	}
}

// TestSpawnerOutlivesCallerThreads checks why servers are forked from the
// spawner's thread: Linux sends a child its parent-death signal when the
// thread that forked it exits. A process forked from a locked goroutine's
// thread dies when that goroutine exits; one forked through the spawner
// from the same goroutine does not.
func TestSpawnerOutlivesCallerThreads(t *testing.T) {
	testenv.EndToEnd(t)
	sp := newSpawner()
	defer sp.close()
	start := func(viaSpawner bool) *exec.Cmd {
		cmd := exec.Command("/bin/sleep", "1000")
		cmd.SysProcAttr = sysProcAttr(syscall.SIGKILL)
		tidc := make(chan int)
		errc := make(chan error, 1)
		go func() {
			// Never unlocked once it is not the main thread: the thread
			// exits with the goroutine (the main thread would not: the
			// runtime keeps it, wedged).
			runtime.LockOSThread()
			for unix.Gettid() == os.Getpid() {
				runtime.UnlockOSThread()
				runtime.Gosched()
				runtime.LockOSThread()
			}
			if viaSpawner {
				errc <- sp.start(cmd)
			} else {
				errc <- cmd.Start()
			}
			tidc <- unix.Gettid()
		}()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		tid := <-tidc
		// Wait until the goroutine's thread is gone.
		for {
			if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); os.IsNotExist(err) {
				break
			}
			runtime.Gosched()
		}
		return cmd
	}

	direct := start(false)
	if err := direct.Wait(); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("a process forked from an exited locked thread ended with %v; want its parent-death signal", err)
	}

	spawned := start(true)
	defer func() { spawned.Process.Kill(); spawned.Wait() }()
	// The death signal is sent while the thread exits, before it leaves
	// /proc: by now the process would be dead or have SIGKILL pending.
	if state := procState(t, spawned.Process.Pid); state != "alive" {
		t.Errorf("the process forked through the spawner died with its caller's thread: %s", state)
	}
}

// procState returns "alive", or what says that process pid is dying or
// dead: its state (zombie) or a pending SIGKILL.
func procState(t *testing.T, pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return "state " + v
			}
		case "SigPnd", "ShdPnd":
			mask, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				t.Fatalf("%s: %q", k, v)
			}
			if mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return "SIGKILL pending"
			}
		}
	}
	return "alive"
}

// TestStartServer checks the exported driver: a ready server's address,
// pid, info and snapshot, a clean stop, and a failed start's reason.
func TestStartServer(t *testing.T) {
	testenv.EndToEnd(t)
	srv, err := StartServer(serverBinary, []string{"serve", "--model", "netpoll", "--protocol", "http"}, "http")
	if err != nil {
		t.Fatal(err)
	}
	if info := srv.Info(); info.PID != srv.PID() || info.Addr != srv.Addr() || info.Model != "netpoll" {
		t.Errorf("server %d at %s, info %+v", srv.PID(), srv.Addr(), info)
	}
	if snap, err := srv.Snapshot(); err != nil || snap.Stats.Requests != 1 { // the readiness probe
		t.Errorf("Snapshot = %+v, %v; want the probe's 1 request", snap, err)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := StartServer(serverBinary, []string{"serve", "--model", "nosuch"}, "http"); err == nil || !strings.Contains(err.Error(), `unknown model "nosuch"`) {
		t.Errorf("StartServer of an unknown model = %v; want serve's reason", err)
	}
}

// TestStartConfig starts a chain configuration as a run does: the back
// end first, the front end in front of it sized for the workload (a P
// per connection, the acceptor's and a spare), each given the extra flags
// (a ledger of 8 accounts of 5, which the total, asked through the
// front end with Do, shows is the back end's), both stopped by Stop.
func TestStartConfig(t *testing.T) {
	testenv.EndToEnd(t)
	c := ChainConfigs()[0]
	w := Workload{Workload: results.Workload{Protocol: "http", Conns: 4, Depth: 1, CPU: "0", Block: "0", Size: "0", Ops: "work=1"}}
	srv, size, err := StartConfig(serverBinary, c, w, "", []string{"--accounts", "8", "--initial-balance", "5"})
	if err != nil {
		t.Fatal(err)
	}
	if size.GOMAXPROCS != 6 || srv.Info().GOMAXPROCS != 6 || srv.Info().Model != "frontend" || srv.back == nil {
		t.Errorf("size %+v, info %+v, back end %v: want a front end with a P per connection + 2, and its back end", size, srv.Info(), srv.back != nil)
	}
	resp, err := srv.Do(wire.Request{ID: 7, Op: wire.OpTotal})
	if err != nil || resp.Status != wire.StatusOK || string(resp.Payload) != "40" {
		t.Errorf("total: %+v, %v; want ok, 40", resp, err)
	}
	back := srv.back
	if err := srv.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !back.exited() {
		t.Error("the back end is still running after Stop")
	}
}
