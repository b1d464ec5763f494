package harness

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"concbench/models"
	"concbench/models/registry"
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

// realUnits names, for each real server the harness drives, what the
// sizing rule counts: one and many.
var realUnits = map[string][2]string{
	NginxModel: {"worker process", "worker processes"},
	AsioModel:  {"io_context thread", "io_context threads"},
}

// hasShape reports whether the sizing rule knows model: whether it is a
// row of the model table, nginx or asio.
func hasShape(model string) bool {
	_, ok := registry.Lookup(model)
	_, real := realUnits[model]
	return ok || real
}

// shapeNames returns the models the sizing rule knows, in order.
func shapeNames() []string { return append(registry.Names(), NginxModel, AsioModel) }

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
			s.GOMAXPROCS = min(perConnProcs(w.Conns), maxGOMAXPROCS)
		}
		s.Rule = "fixed by the profile"
		if s.Threads == 0 && s.GOMAXPROCS == 0 {
			s.Rule = "the model's defaults"
		}
		return s
	}
	if unit, ok := realUnits[c.Model]; ok {
		// A real server does none of the workload's work and never
		// blocks: one unit (an nginx worker process, an asio io_context
		// thread) per CPU, whatever the workload.
		t := max(n, c.MinPool)
		s.Pool, s.Threads = t, t
		s.Rule = fmt.Sprintf("rule: %s → %s (%s does none of the workload's work)", plural(n, "CPU", "CPUs"), plural(t, unit[0], unit[1]), c.Model)
		if c.MinPool > n {
			s.Rule += fmt.Sprintf("; the profile's floor of %d", c.MinPool)
		}
		return s
	}
	m, ok := registry.Lookup(c.Model)
	if !ok {
		s.Err = fmt.Sprintf("model %q is not in the model table (models/registry)", c.Model)
		return s
	}
	sh := m.Sizing
	lc, _ := w.LoadConfig() // validated
	cpu, block := lc.CPU.Mean(), lc.Block.Mean()
	rule := Pool(n, cpu, block, w.Conns, w.Depth)
	if sh.Max > 0 {
		rule = min(rule, sh.Max)
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
	if c.Pool > 0 {
		t = c.Pool
		count = fmt.Sprintf("the sweep's %d, where the rule gives %d", t, rule)
	}
	switch sh.Kind {
	case registry.PoolThreads:
		s.Pool, s.Threads, s.GOMAXPROCS = t, t, sh.Procs(t)
		s.Rule = fmt.Sprintf("rule: %s → %s (%s)", why, plural(t, sh.One, sh.Many), count)
		if sh.Extra > 0 {
			s.Rule += fmt.Sprintf(" + %d %s", sh.Extra, sh.Role)
		}
	case registry.PoolObjects:
		s.Pool, s.Threads, s.GOMAXPROCS = t, n, t+n+registry.SpareProcs
		s.Args = []string{"--ao-objects", strconv.Itoa(t)}
		s.Rule = fmt.Sprintf("rule: %s → %s (%s) + %s (one per CPU)", why, plural(t, sh.One, sh.Many), count, plural(n, "I/O thread", "I/O threads"))
	case registry.PoolPerConn:
		// The thread cap is twice the connections: a connection's thread
		// finishes after its client has gone, and a client that reopens
		// at once (the readiness probe's connection before the load's, a
		// soak's kills, churn) would otherwise be refused at a cap of
		// exactly the connections. Only the connections' threads run.
		s.Threads, s.GOMAXPROCS = min(2*w.Conns, models.MaxThreads), min(perConnProcs(w.Conns), maxGOMAXPROCS)
		s.Rule = fmt.Sprintf("rule: a thread per connection (%d; at most %d, so that a reopened connection is not refused while its predecessor's thread ends) + the acceptor", w.Conns, s.Threads)
	case registry.PoolRuntime:
		s.GOMAXPROCS = n
		s.Rule = fmt.Sprintf("rule: %s → a goroutine per connection", why)
	}
	if sh.Args != nil {
		s.Args = append(s.Args, sh.Args(c.Args, t)...)
	}
	if c.GOMAXPROCS > 0 && c.GOMAXPROCS != s.GOMAXPROCS {
		s.GOMAXPROCS = c.GOMAXPROCS
		s.Rule += fmt.Sprintf("; GOMAXPROCS %d (set, not the rule's)", s.GOMAXPROCS)
		return s
	}
	s.Rule += fmt.Sprintf("; GOMAXPROCS %d", s.GOMAXPROCS)
	if sh.Kind != registry.PoolRuntime {
		s.Rule += " (a P per thread and a spare)"
	}
	return s
}

// perConnProcs is the GOMAXPROCS of a thread-per-connection server with
// conns connections: a P for each connection thread and the acceptor,
// and registry.SpareProcs.
func perConnProcs(conns int) int { return conns + 1 + registry.SpareProcs }

// fmtNs formats ns as a short duration ("10µs").
func fmtNs(ns float64) string {
	return fmt.Sprint(time.Duration(math.Round(ns)))
}
