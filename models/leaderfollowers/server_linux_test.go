package leaderfollowers

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/modeltest"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

// anyPriorities returns nice values for n threads that any process may set
// (none below the process's own: under nice(1) that is above 0), spread
// over base..19 so that priority order differs from lifo and fifo.
func anyPriorities(n int) []int {
	base, err := niceOf(unix.Gettid())
	if err != nil {
		base = 0
	}
	p := make([]int, n)
	for i := range p {
		p[i] = base + []int{6, 0, 12, 3, 19, 9}[i%6]*(19-base)/19
	}
	return p
}

// TestLeaderCheckUnderLoad drives every promotion order with many
// connections of pipelined requests and checks that there was never more
// than one leader, and that the per-thread counters add up: every event was
// preceded by exactly one promotion, which found a follower or not.
func TestLeaderCheckUnderLoad(t *testing.T) {
	const threads, conns, rounds, depth = 4, 64, 30, 8
	type variant struct {
		order Promotion
		deact Deactivation
	}
	var variants []variant
	for _, order := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		variants = append(variants, variant{order, User})
	}
	variants = append(variants, variant{LIFO, Kernel}, variant{OSVacant, Kernel})
	for _, v := range variants {
		order := v.order
		name, variant := "promotion="+order.String(), "promotion="+order.String()
		if v.deact != User {
			name += "/deactivation=" + v.deact.String()
			variant += " deactivation=" + v.deact.String()
		}
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, threads)
			opts := Options{Promotion: order, Deactivation: v.deact}
			if order == Priority {
				opts.Priorities = anyPriorities(threads)
			}
			srv := startTest(t, cfg, opts, hooks{})
			if err := load(srv.Addr().String(), cfg.Codec, conns, rounds, depth); err != nil {
				t.Fatal(err)
			}
			checkOneLeader(t, srv)
			if srv.inv.turns.Load() == 0 {
				t.Fatal("the leader check saw no leadership turn")
			}
			// The promoted thread counts its promotion when it wakes:
			// wait for the last one.
			var st models.Stats
			modeltest.WaitFor(t, "promotions + promotions without follower + vacancy rejoins = events", func() bool {
				st = srv.Stats()
				var events, promotions uint64
				for _, th := range st.PerThread {
					events += th.Events
					promotions += th.Promotions
				}
				// os-vacant: a vacant role a rejoining thread took is a
				// promotion no follower counted.
				return promotions+st.Counters["no_follower_promotions"]+st.Counters["vacancy_rejoins"] == events
			})
			if st.Model != "leaderfollowers" || st.Variant != variant || st.Threads != threads {
				t.Errorf("stats identify %q %q threads=%d", st.Model, st.Variant, st.Threads)
			}
			if want := uint64(conns * rounds * depth); st.Requests != want {
				t.Errorf("%d requests counted, %d sent", st.Requests, want)
			}
			if len(st.PerThread) != threads {
				t.Fatalf("%d per-thread entries for %d threads", len(st.PerThread), threads)
			}
			var requests, events uint64
			for i, th := range st.PerThread {
				if th.TID == 0 || th.Role != "pool" {
					t.Errorf("thread %d: tid %d role %q", i, th.TID, th.Role)
				}
				requests += th.Requests
				events += th.Events
				t.Logf("thread %d: %6d events %7d requests %6d promotions", i, th.Events, th.Requests, th.Promotions)
			}
			t.Logf("counters %v", st.Counters)
			if requests != st.Requests {
				t.Errorf("per-thread requests sum to %d, total %d", requests, st.Requests)
			}
			if st.Counters["accept_batches"] == 0 || st.ConnsAccepted != conns {
				t.Errorf("%d connections accepted in %d batches, %d opened", st.ConnsAccepted, st.Counters["accept_batches"], conns)
			}
		})
	}
}

// TestLeaderCheckDetectsBrokenPromotion breaks promotion on purpose (a
// leader promotes its successor before it has an event) and checks that the
// leader check reports two leaders. The server still serves correctly —
// EPOLLONESHOT keeps handles from being dispatched twice (the owner word
// does with User deactivation: the next test) — which is why the
// invariant needs its own check.
func TestLeaderCheckDetectsBrokenPromotion(t *testing.T) {
	cfg := testConfig(t, 4)
	srv := startTest(t, cfg, Options{Deactivation: Kernel}, hooks{promoteEarly: true})
	if err := load(srv.Addr().String(), cfg.Codec, 8, 10, 4); err != nil {
		t.Fatal(err)
	}
	modeltest.WaitFor(t, "the leader check sees two leaders", func() bool { return srv.inv.violations.Load() > 0 })
	t.Logf("%d of %d turns began while another thread led; at most %d leaders at once",
		srv.inv.violations.Load(), srv.inv.turns.Load(), srv.inv.maxActing.Load())
}

// TestUserDeactivationUnderBrokenPromotion breaks promotion on purpose, so
// that two threads wait on the handle set at once, with User deactivation:
// the owner word alone must keep a connection from being processed by two
// threads at once (the conformance client checks every response).
func TestUserDeactivationUnderBrokenPromotion(t *testing.T) {
	cfg := testConfig(t, 4)
	srv := startTest(t, cfg, Options{Deactivation: User}, hooks{promoteEarly: true})
	const conns, rounds, depth = 16, 20, 8
	if err := load(srv.Addr().String(), cfg.Codec, conns, rounds, depth); err != nil {
		t.Fatal(err)
	}
	if st := srv.Stats(); st.Requests != conns*rounds*depth {
		t.Errorf("%d requests counted, %d sent", st.Requests, conns*rounds*depth)
	}
	modeltest.WaitFor(t, "the leader check sees two leaders", func() bool { return srv.inv.violations.Load() > 0 })
}

// TestUserReactivate checks reactivate_handle with User deactivation on a
// connected socket in a handle set: a quiet release re-arms nothing (an
// edge-triggered handle whose edge was taken reports nothing more), while
// a release after an event was passed over, or with input left unread,
// re-arms it so that the kernel reports it again.
func TestUserReactivate(t *testing.T) {
	set, err := handleset.New()
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	cfg := testConfig(t, 1)
	c := &conn{s: &Server{opts: Options{Deactivation: User}}, ln: &lane{set: set}, sess: connio.NewSession(&cfg)}
	if err := set.Register(fds[0], userEvents, c); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(fds[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	w := set.NewWaiter(4)
	reported := func() bool {
		evs, err := w.Wait(0)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs) > 0
	}
	if !reported() {
		t.Fatal("the registration reported nothing")
	}
	for _, tc := range []struct {
		name   string
		own    uint32
		ready  handleset.Events
		ev     handleset.Events
		rearms bool
	}{
		{"quiet", ownOwned, handleset.Readable, handleset.Readable | handleset.OneShot, false},
		{"passed-over", ownOwned | ownMarked, handleset.Readable, handleset.Readable | handleset.OneShot, true},
		{"output-waits", ownOwned, handleset.Readable, handleset.Readable | handleset.Writable | handleset.OneShot, true},
		{"hang-up", ownOwned, handleset.Readable | handleset.HangUp, handleset.Readable | handleset.OneShot, true},
		{"quiet-again", ownOwned, handleset.Readable, handleset.Readable | handleset.OneShot, false},
	} {
		if !c.claim() {
			t.Fatalf("%s: the free connection could not be claimed", tc.name)
		}
		if c.claim() {
			t.Fatalf("%s: an owned connection was claimed again", tc.name)
		}
		if got := c.own.Load(); got != ownOwned|ownMarked {
			t.Fatalf("%s: owner word %d after a passed-over event, want %d", tc.name, got, ownOwned|ownMarked)
		}
		c.own.Store(tc.own)
		c.reactivateUser(fds[0], tc.ready, tc.ev)
		if got := c.own.Load(); got != 0 {
			t.Fatalf("%s: owner word %d after reactivating, want 0", tc.name, got)
		}
		if got := reported(); got != tc.rearms {
			t.Errorf("%s: reported again %v, want %v", tc.name, got, tc.rearms)
		}
	}
	// Suspended (interest 0): the handle stays deactivated.
	c.claim()
	c.reactivateUser(fds[0], handleset.Readable, 0)
	if c.claim() {
		t.Error("a suspended connection was released")
	}
}

// niceOf reads a thread's nice value from /proc/self/task/<tid>/stat (field
// 19, the 17th after the parenthesized command name).
func niceOf(tid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 17 {
		return 0, fmt.Errorf("short stat line %q", s)
	}
	return strconv.Atoi(f[16])
}

// TestPrioritiesApplied checks that each pool thread runs at its nice
// value, and that the other threads of the process are not changed.
func TestPrioritiesApplied(t *testing.T) {
	const threads = 4
	own, err := niceOf(unix.Gettid()) // 0, or what nice(1) gave the test
	if err != nil {
		t.Fatal(err)
	}
	prios := rootPriorities(threads)
	srv, err := Start(testConfig(t, threads), Options{Promotion: Priority, Priorities: prios})
	if errors.Is(err, ErrPriorityNotPermitted) {
		t.Logf("nice values below the process's refused (%v); checking the others", err)
		prios = anyPriorities(threads)
		srv, err = Start(testConfig(t, threads), Options{Promotion: Priority, Priorities: prios})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for i, th := range srv.Stats().PerThread {
		nice, err := niceOf(th.TID)
		if err != nil {
			t.Fatal(err)
		}
		if nice != prios[i] {
			t.Errorf("thread %d (tid %d): nice %d, want %d", i, th.TID, nice, prios[i])
		}
	}
	if nice, err := niceOf(unix.Gettid()); err != nil || nice != own {
		t.Errorf("the test's own thread: nice %d (%v), want %d: priorities leaked", nice, err, own)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name    string
		threads int
		opts    Options
		want    string // a substring of the error
	}{
		{name: "unknown-order", threads: 2, opts: Options{Promotion: 9}, want: "invalid promotion order 9"},
		{name: "priorities-without-priority", threads: 2, opts: Options{Promotion: FIFO, Priorities: []int{0, 1}}, want: "only by promotion=priority"},
		{name: "priority-without-priorities", threads: 3, opts: Options{Promotion: Priority}, want: "got 0 for 3 threads"},
		{name: "priorities-for-default-threads", threads: 0, opts: Options{Promotion: Priority, Priorities: []int{1}}, want: "got 1 for 4 threads"},
		{name: "nice-too-low", threads: 2, opts: Options{Promotion: Priority, Priorities: []int{0, -21}}, want: "thread 1 is nice -21, out of range"},
		{name: "nice-too-high", threads: 1, opts: Options{Promotion: Priority, Priorities: []int{20}}, want: "nice 20, out of range (accepted: -20..19"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := Start(testConfig(t, tc.threads), tc.opts)
			if err == nil {
				srv.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, p := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		got, err := ParsePromotion(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePromotion(%q) = %v, %v", p, got, err)
		}
		var u Promotion
		b, err := p.MarshalText()
		if err != nil || u.UnmarshalText(b) != nil || u != p {
			t.Errorf("text round trip of %v: %q, %v → %v", p, b, err, u)
		}
	}
	if _, err := ParsePromotion("random"); err == nil || !strings.Contains(err.Error(), "lifo, fifo, priority, os") {
		t.Errorf("ParsePromotion(random): %v", err)
	}
	prios, err := ParsePriorities(" -5, 0,19 ")
	if err != nil || fmt.Sprint(prios) != "[-5 0 19]" {
		t.Errorf("ParsePriorities: %v, %v", prios, err)
	}
	if prios, err := ParsePriorities(""); prios != nil || err != nil {
		t.Errorf("ParsePriorities(empty): %v, %v", prios, err)
	}
	if _, err := ParsePriorities("1,x"); err == nil {
		t.Error("ParsePriorities(1,x) succeeded")
	}
}

// TestCloseWhileEveryThreadBusy closes a server whose every thread is
// processing a blocking request (no leader, no follower), with idle
// connections open: Close waits for the requests, and every thread exits
// and every connection is closed.
func TestCloseWhileEveryThreadBusy(t *testing.T) {
	const threads = 2
	cfg := testConfig(t, threads)
	srv, err := Start(cfg, Options{Promotion: FIFO})
	if err != nil {
		t.Fatal(err)
	}
	tids := threadIDs(srv)
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for i := range 4 + threads { // idle, then busy
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if i < 4 {
			continue
		}
		req := &wire.Request{ID: uint64(i - 4), Op: wire.OpWork, Block: time.Second}
		if _, err := c.Write(cfg.Codec.AppendRequest(nil, req)); err != nil {
			t.Fatal(err)
		}
	}
	modeltest.WaitFor(t, "every connection is accepted and every thread is processing", func() bool {
		st := srv.Stats()
		var requests uint64
		for _, th := range st.PerThread {
			requests += th.Requests
		}
		return st.ConnsAccepted == uint64(len(clients)) && !srv.pool.hasLeader() && srv.pool.followers() == 0 && requests == 0
	})
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	modeltest.WaitFor(t, "every pool thread has exited", func() bool { return !anyAlive(tids) })
	st := srv.Stats()
	if st.ConnsClosed != st.ConnsAccepted || st.Counters["open_conns"] != 0 {
		t.Errorf("%d of %d connections closed, %d open", st.ConnsClosed, st.ConnsAccepted, st.Counters["open_conns"])
	}
	for i, c := range clients {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("client %d: %v, want end of stream", i, err)
		}
	}
}

// childEnv names the helper a re-executed test binary runs.
const childEnv = "LEADERFOLLOWERS_TEST_CHILD"

// runChild runs the test named test in a new process of this test binary
// (binary, or os.Args[0] if empty) with childEnv=helper, and fails t with
// its output if it does not pass.
func runChild(t *testing.T, binary, test, helper string, attr *syscall.SysProcAttr) {
	t.Helper()
	if binary == "" {
		binary = os.Args[0]
	}
	cmd := exec.Command(binary, "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+helper)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s in a subprocess: %v\n%s", test, err, out)
	}
	t.Logf("%s", out)
}

// TestAcceptBackoffEMFILE runs TestEMFILEChild in a subprocess, since it
// lowers the process's descriptor limit.
func TestAcceptBackoffEMFILE(t *testing.T) {
	runChild(t, "", "TestEMFILEChild", "emfile", nil)
}

// minBackoffTime is the least time in which k accepts can fail: between
// consecutive failures the listener stays deactivated for the backoff,
// which starts at connio.MinAcceptBackoff and doubles up to
// connio.MaxAcceptBackoff.
func minBackoffTime(k uint64) time.Duration {
	var total time.Duration
	var b connio.AcceptBackoff
	for i := uint64(1); i < k; i++ {
		total += b.Next()
	}
	return total
}

// TestEMFILEChild makes the server's accept fail with a real EMFILE: it
// lowers RLIMIT_NOFILE and fills every free descriptor number but one, which
// the client's socket takes. It checks that the listener backs off (the
// number of failed accepts is bounded by the time elapsed), that the pool
// keeps serving an open connection meanwhile, and that accepting resumes
// once a descriptor is free.
func TestEMFILEChild(t *testing.T) {
	if os.Getenv(childEnv) != "emfile" {
		t.Skip("helper of TestAcceptBackoffEMFILE; runs only in its subprocess")
	}
	cfg := testConfig(t, 2)
	srv, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().String()
	req := []*wire.Request{{ID: 1, Op: wire.OpWork, Size: 10}}
	c1, err := modeltest.Dial(addr, cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if err := c1.RoundTrip(req...); err != nil {
		t.Fatal(err)
	}

	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	maxfd := 0
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			maxfd = max(maxfd, n)
		}
	}
	lim := unix.Rlimit{Cur: uint64(maxfd) + 16, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	var fillers []int
	defer func() {
		for _, fd := range fillers {
			unix.Close(fd)
		}
	}()
	for {
		fd, err := unix.Dup(2)
		if err == unix.EMFILE {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fillers = append(fillers, fd)
	}
	free := func() {
		unix.Close(fillers[len(fillers)-1])
		fillers = fillers[:len(fillers)-1]
	}
	free() // for the client's socket

	t0 := time.Now()
	c2, err := modeltest.Dial(addr, cfg.Codec) // the server cannot accept it
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	const fails = 5
	var k uint64
	modeltest.WaitFor(t, fmt.Sprintf("%d accepts failed", fails), func() bool {
		k = srv.Stats().Errors[models.ErrAcceptBackoff]
		return k >= fails
	})
	elapsed := time.Since(t0)
	if need := minBackoffTime(k); elapsed < need {
		t.Fatalf("%d accepts failed in %v; backing off needs at least %v for that many: the listener is not backing off", k, elapsed, need)
	}
	t.Logf("%d accepts failed with EMFILE in %v (backoff allows at most that many in at least %v)", k, elapsed, minBackoffTime(k))
	if err := c1.RoundTrip(req...); err != nil {
		t.Fatalf("the open connection during the backoff: %v", err)
	}

	free() // for the server's socket
	if err := c2.RoundTrip(req...); err != nil {
		t.Fatalf("the connection waiting in the backlog after the shortage: %v", err)
	}
	st := srv.Stats()
	if st.ConnsAccepted != 2 || st.Counters["accept_retries"] == 0 {
		t.Errorf("%d connections accepted (want 2), %d retries", st.ConnsAccepted, st.Counters["accept_retries"])
	}
}

// TestPriorityRefusedUnprivileged checks that Start refuses, with an
// explanation, priorities the process may not set: as root it runs
// TestPriorityChild in a subprocess as the unprivileged user nobody.
func TestPriorityRefusedUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		priorityChild(t)
		return
	}
	// The test binary lives in a directory only root may enter; copy it
	// where nobody may run it.
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "lf.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	runChild(t, exe, "TestPriorityChild", "priority", &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: nobody, Gid: nobody},
	})
}

func TestPriorityChild(t *testing.T) {
	if os.Getenv(childEnv) != "priority" {
		t.Skip("helper of TestPriorityRefusedUnprivileged; runs only in its subprocess")
	}
	priorityChild(t)
}

// priorityChild runs in an unprivileged process: a nice value below the
// process's is refused with ErrPriorityNotPermitted and advice that names
// the process's; higher ones work.
func priorityChild(t *testing.T) {
	cfg := testConfig(t, 2)
	own, err := niceOf(unix.Gettid()) // 0, or what nice(1) gave the test
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(cfg, Options{Promotion: Priority, Priorities: []int{own, max(own-5, -20)}})
	if err == nil {
		srv.Close()
		t.Skip("this process may lower nice values (CAP_SYS_NICE or RLIMIT_NICE)")
	}
	if !errors.Is(err, ErrPriorityNotPermitted) {
		t.Fatalf("error %v does not wrap ErrPriorityNotPermitted", err)
	}
	for _, advice := range []string{"pool thread 1", "setpriority", "root", "CAP_SYS_NICE",
		fmt.Sprintf("nice values no lower than the process's (%d)", own)} {
		if !strings.Contains(err.Error(), advice) {
			t.Errorf("error %q does not mention %q", err, advice)
		}
	}
	t.Logf("refused as expected: %v", err)
	srv, err = Start(cfg, Options{Promotion: Priority, Priorities: []int{min(own+3, 19), min(own+7, 19)}})
	if err != nil {
		t.Fatalf("nice values above the process's: %v", err)
	}
	defer srv.Close()
	c, err := modeltest.Dial(srv.Addr().String(), cfg.Codec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.RoundTrip(&wire.Request{ID: 1, Op: wire.OpWork, Size: 10}); err != nil {
		t.Fatal(err)
	}
}
