package leaderfollowers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/internal/enum"
	"concbench/wire"
)

// Lane is one priority lane (TAO's thread-pool lane): a set of threads that
// form a Leader/Followers pool of their own, over a handle set of their own,
// serving the connections whose priority is at least MinPriority and below
// the next lane's.
type Lane struct {
	// MinPriority is the lowest request priority (wire.Request.Priority,
	// 0..255) the lane serves. Lanes are listed in increasing MinPriority,
	// and the first lane's is 0.
	MinPriority int `json:"min_priority"`
	// Threads is the lane's pool size (at least 1).
	Threads int `json:"threads"`
}

// LaneSched is how the threads of the lanes above the lowest are given
// their priority.
type LaneSched int

// The ways of giving a lane's threads their priority.
const (
	// SchedAuto uses SCHED_FIFO where the process may and the kernel's RT
	// throttling bounds it, and nice values otherwise.
	SchedAuto LaneSched = iota
	// SchedFIFO requires SCHED_FIFO: Start fails if it is refused.
	SchedFIFO
	// SchedNice uses nice values only.
	SchedNice
)

// laneSchedNames must match the constants above.
var laneSchedNames = [...]string{SchedAuto: "auto", SchedFIFO: "fifo", SchedNice: "nice"}

// laneScheds is the text form of LaneSched.
var laneScheds = enum.New[LaneSched]("LaneSched", "leaderfollowers", "lane scheduling", laneSchedNames[:])

// String returns the name: auto, fifo or nice.
func (m LaneSched) String() string { return laneScheds.String(m) }

// MarshalText implements encoding.TextMarshaler (for flag.TextVar and JSON).
func (m LaneSched) MarshalText() ([]byte, error) { return laneScheds.MarshalText(m) }

// UnmarshalText implements encoding.TextUnmarshaler: auto, fifo or nice.
func (m *LaneSched) UnmarshalText(b []byte) error { return laneScheds.UnmarshalText(b, m) }

// ParseLanes parses a lane list "MINPRIO:THREADS,…", e.g. "0:2,128:2" (two
// threads for priorities 0..127, two for 128..255). An empty string gives
// nil (no lanes).
func ParseLanes(s string) ([]Lane, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Lane
	for f := range strings.SplitSeq(s, ",") {
		p, n, ok := strings.Cut(strings.TrimSpace(f), ":")
		prio, err1 := strconv.Atoi(p)
		threads, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("leaderfollowers: lane %q: want MINPRIO:THREADS, e.g. 0:2,128:2", f)
		}
		out = append(out, Lane{MinPriority: prio, Threads: threads})
	}
	return out, nil
}

// FormatLanes returns lanes in the syntax ParseLanes reads.
func FormatLanes(lanes []Lane) string {
	parts := make([]string, len(lanes))
	for i, l := range lanes {
		parts[i] = strconv.Itoa(l.MinPriority) + ":" + strconv.Itoa(l.Threads)
	}
	return strings.Join(parts, ",")
}

// validateLanes checks lanes for a pool whose thread count is threads (0:
// not set, the lanes' sum is used) and returns the total.
func validateLanes(lanes []Lane, threads int) (int, error) {
	if len(lanes) == 1 {
		return 0, errors.New("leaderfollowers: lanes: give two or more lanes (one lane is the plain pool)")
	}
	total := 0
	for i, l := range lanes {
		if l.Threads < 1 {
			return 0, fmt.Errorf("leaderfollowers: lane %d has %d threads (want at least 1)", i, l.Threads)
		}
		if l.MinPriority < 0 || l.MinPriority > 255 {
			return 0, fmt.Errorf("leaderfollowers: lane %d: minimum priority %d out of range (accepted: 0..255)", i, l.MinPriority)
		}
		if i == 0 && l.MinPriority != 0 {
			return 0, fmt.Errorf("leaderfollowers: the first lane's minimum priority is %d, want 0 (every priority needs a lane)", l.MinPriority)
		}
		if i > 0 && l.MinPriority <= lanes[i-1].MinPriority {
			return 0, fmt.Errorf("leaderfollowers: lanes must be in increasing minimum priority: lane %d (%d) after %d", i, l.MinPriority, lanes[i-1].MinPriority)
		}
		total += l.Threads
	}
	if threads != 0 && threads != total {
		return 0, fmt.Errorf("leaderfollowers: --threads %d differs from the lanes' %d threads (leave --threads unset with lanes)", threads, total)
	}
	return total, nil
}

// laneOf returns the index of the lane that serves priority prio.
func laneOf(lanes []*lane, prio uint8) int {
	i := 0
	for j, l := range lanes {
		if int(prio) >= l.minPrio {
			i = j
		}
	}
	return i
}

// lane is one Leader/Followers pool of a laned server: its own handle set,
// follower set and threads. A server without lanes has one lane holding
// every thread, the listener and the retry timer.
type lane struct {
	idx     int
	minPrio int
	set     *handleset.Set
	pool    *pool
	inv     leaderCheck // used only when checkLeaders is set
	// ready is the leader role's ready set (Options.Events above one;
	// nil: each leader waits for one event with its own waiter). Only
	// the leader touches it; promotion hands it on with the role.
	ready   *readySet
	first   int // index of its first thread in Server.threads
	nthread int

	// sched records how its threads got their priority (a laneSched
	// decision), set once before Start returns.
	sched string

	conns atomic.Uint64 // connections placed in this lane
}

// RT throttling (sched_rt_runtime_us / sched_rt_period_us): the kernel
// lets SCHED_FIFO and SCHED_RR threads use at most runtime of every period
// on each CPU, leaving the rest to normal threads — among them the Go
// runtime's own (sysmon, GC workers, the threads that run goroutines). A
// runtime of -1 disables the bound.
type rtBudget struct {
	RuntimeUs, PeriodUs int64
	Err                 error // reading it failed
}

// bounded reports whether the kernel bounds real-time threads' CPU time
// below the whole period.
func (b rtBudget) bounded() bool {
	return b.Err == nil && b.RuntimeUs >= 0 && b.RuntimeUs < b.PeriodUs
}

func (b rtBudget) String() string {
	if b.Err != nil {
		return "unknown (" + b.Err.Error() + ")"
	}
	if b.RuntimeUs < 0 {
		return "unbounded (sched_rt_runtime_us -1)"
	}
	return strconv.FormatInt(b.RuntimeUs, 10) + "/" + strconv.FormatInt(b.PeriodUs, 10) + "us"
}

// laneSched decides how a thread of lane idx (≥ 1) gets its priority and
// applies it with setFIFO (sched_setscheduler SCHED_FIFO at rtprio) or
// setNice. It returns the record kept in the server's Variant, e.g.
// "SCHED_FIFO/2" or "nice/-10 (SCHED_FIFO refused: …)", or an error
// wrapping ErrPriorityNotPermitted when no way was permitted (or mode
// SchedFIFO was refused). SCHED_FIFO is tried only with a bounded RT
// budget: without it a busy high lane could starve the Go runtime's own
// threads on its CPU.
func laneSched(mode LaneSched, rtprio, nice int, budget rtBudget, setFIFO, setNice func(int) error) (string, error) {
	why := ""
	if mode != SchedNice {
		if !budget.bounded() {
			why = "SCHED_FIFO not used: RT throttling " + budget.String() + " does not bound real-time threads, which could starve the Go runtime's threads"
		} else if err := setFIFO(rtprio); err != nil {
			why = "SCHED_FIFO refused: " + err.Error()
		} else {
			return "SCHED_FIFO/" + strconv.Itoa(rtprio), nil
		}
		if mode == SchedFIFO {
			return "", fmt.Errorf("%w: lane %s; run as root or with CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ %d), or use --lane-sched nice or auto", ErrPriorityNotPermitted, why, rtprio)
		}
	}
	if err := setNice(nice); err != nil {
		return "", fmt.Errorf("%w: lane nice %d: %w (%s); run as root or with CAP_SYS_NICE", ErrPriorityNotPermitted, nice, err, why)
	}
	rec := "nice/" + strconv.Itoa(nice)
	if why != "" {
		rec += " (" + why + ")"
	}
	return rec, nil
}

// laneNice is the nice value of lane idx's threads when they run with nice
// values: 5 steps per lane above the lowest, at most MinNice.
func laneNice(idx int) int { return max(-5*idx, MinNice) }

// place maps an unplaced connection to its lane by the priority of the
// request at the front of its socket, read with MSG_PEEK so that nothing
// is consumed; it reports whether the connection moved (then the calling
// thread must not touch it any more). The handle is deactivated, so the
// calling thread owns it; moving unregisters it from this lane's set and
// registers it, armed, in the target lane's, whose leader then reads it. A
// connection whose first segment holds no complete request stays where it
// is (counted as lane_undecided): its bytes are about to be consumed.
func (c *conn) place(fd int, th *thread) bool {
	s := c.s
	c.placed = true
	var req wire.Request
	prio, ok := peekPriority(fd, s.cfg.Codec, th.peek[:], &req)
	if !ok {
		s.laneUndecided.Add(1)
		c.ln.conns.Add(1)
		return false
	}
	i := laneOf(s.lanes, prio)
	if s.hooks.laneFor != nil {
		i = s.hooks.laneFor(fd, prio)
	}
	to := s.lanes[i]
	to.conns.Add(1)
	if to == c.ln {
		return false
	}
	if err := c.ln.set.Unregister(fd); err != nil {
		if !errors.Is(err, handleset.ErrClosed) {
			th.sh.AddError(models.ErrIO)
		}
		return false // the caller's Reactivate or dropConn decides
	}
	c.ln = to
	c.own.Store(0) // in no set now: no event can come before Register
	if err := to.set.Register(fd, s.connEvents(), c); err != nil {
		if !errors.Is(err, handleset.ErrClosed) {
			th.sh.AddError(models.ErrIO)
		}
		s.dropConn(fd, th.sh, to)
		return true
	}
	s.laneMoves.Add(1)
	return true
}

// peekPriority decodes the request at the front of buf[:n], n from
// peek(fd), and returns its priority; ok is false if there is no complete
// request there.
func peekPriority(fd int, codec wire.Codec, buf []byte, req *wire.Request) (prio uint8, ok bool) {
	n, err := peekFd(fd, buf)
	if err != nil || n <= 0 {
		return 0, false
	}
	m, err := codec.DecodeRequest(buf[:n], req)
	if err != nil || m == 0 {
		return 0, false
	}
	return req.Priority, true
}

// peekSize bounds what place reads of a connection's first segment: enough
// for any request line and the binary header with a short body.
const peekSize = 1024
