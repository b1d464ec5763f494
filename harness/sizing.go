package harness

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/models"
)

// SizeRule is Config.Sizing's value for a configuration sized by the
// one sizing rule (Pool), from the server's CPUs and the workload.
const SizeRule = "rule"

// Pool is the sizing rule's thread count for a server on n CPUs under a
// workload whose requests take cpu of CPU work and block of blocking
// work on average (ns), with conns connections of depth requests each:
//
//	T = ⌈n × (cpu + block) ÷ cpu⌉, at most conns × depth, at least 1
//
// Little's law: to keep n CPUs busy, n × (cpu + block) ÷ cpu requests
// must be in service at once, each holding its thread while it blocks.
// Without blocking work that is n, a thread per CPU: no thread beyond
// the CPUs can run anything in parallel. The rule counts the workload's
// CPU work only, not the server's own per request (its system calls and
// wake-ups): that cost only lowers the threads needed, so the rule errs
// towards enough. No more than the requests that can be in flight, and
// at most models.MaxThreads.
func Pool(n int, cpu, block float64, conns, depth int) int {
	n = max(n, 1)
	t := float64(n)
	switch {
	case block > 0 && cpu > 0:
		t = math.Ceil(float64(n) * (cpu + block) / cpu)
	case block > 0:
		t = float64(conns * depth) // nothing but blocking: a thread per request
	}
	return max(1, min(int(t), conns*depth, models.MaxThreads))
}

// poolKind is how the rule's thread count T reaches a model.
type poolKind int

const (
	// poolThreads: --threads T threads serve (a Leader/Followers pool,
	// Half-Sync/Half-Reactive's workers, the Proactor's dispatchers),
	// beside extra threads of fixed roles (the reactor).
	poolThreads poolKind = iota
	// poolObjects: --ao-objects T active objects (a scheduler thread
	// each) and --threads n I/O threads, one per CPU, that decode
	// requests and invoke the proxy.
	poolObjects
	// poolPerConn: a thread per connection (thread per connection, the
	// front end): the rule has nothing to choose.
	poolPerConn
	// poolRuntime: goroutines over Go's scheduler (netpoll): GOMAXPROCS
	// n, the Go runtime's own default on n CPUs; the runtime adds threads
	// for blocking system calls by itself.
	poolRuntime
)

// shape is how a model's threads follow the rule.
type shape struct {
	kind  poolKind
	pool  string // what the pool's threads are called ("workers")
	extra int    // threads of fixed roles beside the pool (the reactor)
	role  string // what they are called
	// args, if set, returns serve flags that depend on the pool's T.
	args func(c *Config, t int) []string
	max  int // the most the model accepts (0: models.MaxThreads)
}

// shapes are the models' shapes under the sizing rule, by model name.
// Note: every thread-based model gets the rule's T, the Proactor's
// dispatchers included: a dispatcher that blocks stalls its ring as a
// pool thread that blocks stalls its connections, and giving one model
// fewer threads than another would measure a thread count, not a model.
var shapes = map[string]shape{
	"leaderfollowers":      {kind: poolThreads, pool: "threads", args: niceSpread},
	"halfsynchalfreactive": {kind: poolThreads, pool: "workers", extra: 1, role: "reactor"},
	"proactor":             {kind: poolThreads, pool: "dispatchers"},
	"activeobject":         {kind: poolObjects, pool: "active objects", max: 256}, // must match activeobject.MaxObjects
	"threadperconn":        {kind: poolPerConn},
	"frontend":             {kind: poolPerConn},
	"netpoll":              {kind: poolRuntime},
}

// hasShape reports whether the sizing rule knows model.
func hasShape(model string) bool {
	_, ok := shapes[model]
	return ok
}

// shapeNames returns the models the sizing rule knows, sorted.
func shapeNames() []string {
	return slices.Sorted(maps.Keys(shapes))
}

// Size is what a configuration runs with under one workload: the serve
// flags the harness sets for its threads, and why.
type Size struct {
	CPUs       int      `json:"cpus"`            // n: the server's CPUs
	Pool       int      `json:"pool,omitempty"`  // T: the rule's threads (SizeRule)
	Threads    int      `json:"threads"`         // serve --threads (0: the model's default)
	GOMAXPROCS int      `json:"gomaxprocs"`      // serve --gomaxprocs (0: the server's default)
	Args       []string `json:"args,omitempty"`  // further serve flags the rule sets (--ao-objects T)
	Rule       string   `json:"rule"`            // the rule and its numbers, in words
	Err        string   `json:"error,omitempty"` // why the configuration cannot be sized
}

// size returns what c runs with under w on a server of n CPUs.
func (c *Config) size(w *Workload, n int) Size {
	n = max(n, 1)
	s := Size{CPUs: n}
	if c.Sizing != SizeRule {
		s.Threads, s.GOMAXPROCS = c.Threads, c.GOMAXPROCS
		if c.ThreadsPerConn {
			s.Threads = w.Conns
		}
		if c.GOMAXPROCSPerConn {
			s.GOMAXPROCS = min(w.Conns+1, maxGOMAXPROCS)
		}
		s.Rule = "fixed by the profile"
		if s.Threads == 0 && s.GOMAXPROCS == 0 {
			s.Rule = "the model's defaults"
		}
		return s
	}
	sh, ok := shapes[c.Model]
	if !ok {
		s.Err = fmt.Sprintf("model %q has no shape for the sizing rule (harness: shapes)", c.Model)
		return s
	}
	lc, _ := w.loadConfig() // validated
	cpu, block := lc.CPU.Mean(), lc.Block.Mean()
	rule := Pool(n, cpu, block, w.Conns, w.Depth)
	if sh.max > 0 {
		rule = min(rule, sh.max)
	}
	t := max(rule, c.MinPool)
	why := fmt.Sprintf("%d CPU", n)
	if n > 1 {
		why += "s"
	}
	count := "a thread per CPU"
	if block > 0 {
		why += fmt.Sprintf(", %s CPU + %s blocking per request", fmtNs(cpu), fmtNs(block))
		count = fmt.Sprintf("Little's law: %d × %s ÷ %s", n, fmtNs(cpu+block), fmtNs(cpu))
		if cpu <= 0 {
			count = "no CPU work to bound it"
		}
		if in := w.Conns * w.Depth; rule == in {
			count += fmt.Sprintf(", at most the %d requests in flight", in)
		}
	}
	if c.MinPool > rule {
		count += fmt.Sprintf("; the profile's floor of %d", c.MinPool)
	}
	switch sh.kind {
	case poolThreads:
		s.Pool, s.Threads, s.GOMAXPROCS = t, t, t+sh.extra
		s.Rule = fmt.Sprintf("rule: %s → %d %s (%s)", why, t, sh.pool, count)
		if sh.extra > 0 {
			s.Rule += fmt.Sprintf(" + %d %s", sh.extra, sh.role)
		}
	case poolObjects:
		s.Pool, s.Threads, s.GOMAXPROCS = t, n, t+n
		s.Args = []string{"--ao-objects", strconv.Itoa(t)}
		s.Rule = fmt.Sprintf("rule: %s → %d %s (%s) + %d I/O threads (one per CPU)", why, t, sh.pool, count, n)
	case poolPerConn:
		s.Threads, s.GOMAXPROCS = w.Conns, min(w.Conns+1, maxGOMAXPROCS)
		s.Rule = fmt.Sprintf("rule: a thread per connection (%d) + the acceptor", w.Conns)
	case poolRuntime:
		s.GOMAXPROCS = n
		s.Rule = fmt.Sprintf("rule: %s → a goroutine per connection", why)
	}
	if sh.args != nil {
		s.Args = append(s.Args, sh.args(c, t)...)
	}
	if c.GOMAXPROCS > 0 && c.GOMAXPROCS != s.GOMAXPROCS {
		s.GOMAXPROCS = c.GOMAXPROCS
		s.Rule += fmt.Sprintf("; GOMAXPROCS %d (set, not the rule's)", s.GOMAXPROCS)
		return s
	}
	s.Rule += fmt.Sprintf("; GOMAXPROCS %d", s.GOMAXPROCS)
	return s
}

// fmtNs formats ns as a short duration ("10µs").
func fmtNs(ns float64) string {
	return fmt.Sprint(time.Duration(math.Round(ns)))
}

// niceSpread returns, for a Leader/Followers configuration with priority
// promotion and no --nice of its own, one nice value per thread of a
// pool of t, spread evenly over 0..15 (4 threads: 0,5,10,15): the
// priority order then has a distinct priority per thread at any size,
// none of which needs privileges.
func niceSpread(c *Config, t int) []string {
	priority := false
	for i, a := range c.Args {
		switch {
		case a == "--nice" || strings.HasPrefix(a, "--nice="):
			return nil
		case a == "--promotion=priority", a == "--promotion" && i+1 < len(c.Args) && c.Args[i+1] == "priority":
			priority = true
		}
	}
	if !priority {
		return nil
	}
	vals := make([]string, t)
	for i := range vals {
		v := 0
		if t > 1 {
			v = int(math.Round(15 * float64(i) / float64(t-1)))
		}
		vals[i] = strconv.Itoa(v)
	}
	return []string{"--nice", strings.Join(vals, ",")}
}
