package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/service"
	"concbench/wire"
)

// Arrival names an open-loop arrival process.
type Arrival string

// The arrival processes.
const (
	// Poisson arrivals: exponential inter-arrival gaps with mean 1/Rate.
	Poisson Arrival = "poisson"
	// Constant arrivals: exactly 1/Rate apart.
	Constant Arrival = "constant"
	// OnOff alternates On of Poisson arrivals at Rate with Off of none,
	// starting with an on period; the mean rate is Rate·On/(On+Off).
	OnOff Arrival = "onoff"
)

// VerifyMode says how much of each response is checked.
type VerifyMode string

// The verification modes. Against the project's own servers use VerifyFull
// (the default); against foreign HTTP servers (nginx), which neither echo
// X-Request-Id nor send X-Checksum, and whose body need not have the
// requested size, use VerifyAuto, VerifyStatus or VerifyNone.
const (
	// VerifyFull checks the status, the id (and, for HTTP, that responses
	// come back in request order), the checksum, which must be present, and
	// an OpWork body against wire.AppendBody.
	VerifyFull VerifyMode = "full"
	// VerifyAuto checks the status, and checks what the response carries:
	// the id if it is not 0 (absent), the checksum if present, the body if
	// both are present (a concbench server).
	VerifyAuto VerifyMode = "auto"
	// VerifyStatus checks only that the status is ok (HTTP 2xx).
	VerifyStatus VerifyMode = "status"
	// VerifyNone checks nothing: every decodable response is a success.
	VerifyNone VerifyMode = "none"
)

// OpMix is the relative weight of each operation in the request mix; the
// zero OpMix is all OpWork. Ledger requests pick accounts uniformly from
// 0..Accounts-1 (a transfer's two accounts differ) and move Amount.
type OpMix struct {
	Work     float64 `json:"work"`
	Balance  float64 `json:"balance"`
	Deposit  float64 `json:"deposit"`
	Withdraw float64 `json:"withdraw"`
	Transfer float64 `json:"transfer"`
	Total    float64 `json:"total"`
}

// weights returns the mix indexed by wire.Op; the zero mix is all work.
func (m OpMix) weights() [6]float64 {
	w := [6]float64{m.Work, m.Balance, m.Deposit, m.Withdraw, m.Transfer, m.Total}
	if w == [6]float64{} {
		w[wire.OpWork] = 1
	}
	return w
}

// String formats the mix as ParseOpMix reads it, listing non-zero weights.
func (m OpMix) String() string {
	var parts []string
	for op, w := range m.weights() {
		if w != 0 {
			parts = append(parts, wire.Op(op).String()+"="+strconv.FormatFloat(w, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// ParseOpMix parses "op=weight,…" with op one of work, balance, deposit,
// withdraw, transfer, total; unnamed ops get weight 0.
func ParseOpMix(s string) (OpMix, error) {
	var w [6]float64
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return OpMix{}, fmt.Errorf("op mix %q: %q is not op=weight", s, part)
		}
		op, err := wire.ParseOp(name)
		if err != nil {
			return OpMix{}, fmt.Errorf("op mix %q: %w", s, err)
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return OpMix{}, fmt.Errorf("op mix %q: weight %q is not a number", s, val)
		}
		w[op] = f
	}
	return OpMix{Work: w[0], Balance: w[1], Deposit: w[2], Withdraw: w[3], Transfer: w[4], Total: w[5]}, nil
}

// Limits are the verdict's bounds on the load generator's own health:
// beyond any of them a run is invalid, because the generator, not the
// server, would be part of what it measured. The package documentation
// says why each default is where it is. A limit of 1 (or, for
// SendProcessAlpha, a level below every p-value, such as 1e-300) turns
// its check off, as tests do that must run on a machine busy with other
// tests; an experiment that does so says so in every result.
type Limits struct {
	// MaxLagShare bounds how much of a reported latency percentile the
	// generator's own lateness may account for: the verdict compares each
	// percentile of the corrected latency with the same percentile
	// without the generator's own send lag. Beyond MaxLagShare of p50,
	// p90 or p99 the run is invalid; beyond it of p99.9 or p99.99 that
	// percentile is not trusted (LagShare.Exceeded: reports leave it out),
	// the rest of the run stands. Default 0.5: past half, the number says
	// more about the generator than about the server. Above a tenth the
	// result warns, and every result reports the lower bound
	// (WithoutOwnLag) beside the value.
	MaxLagShare float64 `json:"max_lag_share"`
	// MaxBusy is the largest share of its time a worker may spend working
	// (not polling or sleeping): beyond it the generator queues requests
	// itself. Default 0.90.
	MaxBusy float64 `json:"max_busy"`
	// MaxRunQueue and MaxSteal are the largest shares of the workers'
	// time they may spend waiting for their CPU (another thread or
	// process on it), or that the hypervisor may take from their CPUs.
	// Default 0.10 and 0.05: the generator may wait for its CPU behind its
	// own runtime threads, for a few percent of its time at most
	// (docs/findings.md); a tenth means another process competes.
	MaxRunQueue float64 `json:"max_run_queue"`
	MaxSteal    float64 `json:"max_steal"`
	// SendProcessAlpha is the significance level of each statistic of
	// the send-process check. Default 0.001.
	SendProcessAlpha float64 `json:"send_process_alpha"`
}

// DefaultLimits are the verdict's default limits.
var DefaultLimits = Limits{MaxLagShare: 0.5, MaxBusy: 0.90, MaxRunQueue: 0.10, MaxSteal: 0.05, SendProcessAlpha: 0.001}

// RelaxedLimits turn off every check of the generator on its own health
// (--relax-load-checks: tests on a machine busy with other work; a
// result under them says so, Limits.Relaxed).
var RelaxedLimits = Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}

// Relaxed reports whether l turns off any of the checks on the
// generator's own health.
func (l Limits) Relaxed() bool {
	l = l.withDefaults()
	return l.MaxLagShare >= 1 || l.MaxBusy >= 1 || l.MaxRunQueue >= 1 || l.MaxSteal >= 1 || l.SendProcessAlpha < 1e-100
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *float64 }{
		{&l.MaxLagShare, &d.MaxLagShare}, {&l.MaxBusy, &d.MaxBusy}, {&l.MaxRunQueue, &d.MaxRunQueue},
		{&l.MaxSteal, &d.MaxSteal}, {&l.SendProcessAlpha, &d.SendProcessAlpha},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return l
}

func (l Limits) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"max lag share", l.MaxLagShare}, {"max busy", l.MaxBusy}, {"max run queue", l.MaxRunQueue}, {"max steal", l.MaxSteal}, {"send process alpha", l.SendProcessAlpha}} {
		if !isFinite(f.v) || f.v <= 0 || f.v > 1 {
			return fmt.Errorf("%s %g out of range (accepted: > 0 and ≤ 1)", f.name, f.v)
		}
	}
	return nil
}

// Poll is how a worker waits for its next event or send.
type Poll string

// The polling modes.
const (
	// PollSleep sleeps in epoll_pwait2 until the next deadline, and polls
	// only during the last Spin before a scheduled send. It leaves the
	// CPU to others, and pays the machine's timer lateness (measured and
	// compensated by Spin). Received responses are timestamped by the
	// kernel, so a sleeping worker does not add its wake-up to latency.
	PollSleep Poll = "sleep"
	// PollBusy never sleeps: it polls epoll without a timeout all the
	// time, so that sends leave on schedule; it needs a CPU per worker,
	// and its CPU time is not a measure of its work (Generator.BusyFraction
	// is).
	PollBusy Poll = "busy"
)

// Config describes one load-generation run. The zero value of a field with
// a documented default means that default. JSON field names carry units.
type Config struct {
	// Addr is the server's host:port.
	Addr string `json:"addr"`
	// Protocol is "http" (default) or "binary" (see package wire).
	Protocol string `json:"protocol"`
	// Conns is the number of connections; default 16. For open loop, pick
	// enough that the requests in flight at the target rate (rate ×
	// latency, Little's law) spread without deep pipelining per connection.
	Conns int `json:"conns"`
	// Workers is the number of event-loop threads the connections are
	// spread over; default 1 (the generator gets one CPU on a 2-CPU
	// machine). Each worker is one locked OS thread.
	Workers int `json:"workers"`
	// WorkerCPUs, if set, pins worker i's thread to CPU WorkerCPUs[i mod
	// len], so that every busy-polling worker has a CPU to itself; the
	// process's other threads keep the process's affinity. Empty: the
	// workers run wherever the process may.
	WorkerCPUs []int `json:"worker_cpus,omitempty"`
	// Nice, if not 0, is the nice value (-20..19) every worker's thread
	// is given (setpriority on its thread id): a generator that another
	// on the same CPUs must not delay. A value the kernel refuses
	// (negative without root or CAP_SYS_NICE) fails the run.
	Nice int `json:"nice,omitempty"`
	// Depth is the pipelining depth: the requests written together in one
	// batch; default 1 (no pipelining). Open loop: each scheduled arrival is
	// a batch of Depth requests with the same intended time. Closed loop: a
	// connection writes a batch of Depth whenever Depth of its Outstanding
	// requests have completed.
	Depth int `json:"depth"`

	// Rate is the global offered load in requests per second (open loop;
	// for OnOff, the rate during on periods). Required unless Closed.
	Rate float64 `json:"rate_per_s"`
	// Arrival is the arrival process; default Poisson.
	Arrival Arrival `json:"arrival"`
	// On and Off are the OnOff periods.
	On  time.Duration `json:"on_ns,omitempty"`
	Off time.Duration `json:"off_ns,omitempty"`
	// MaxInFlight bounds the requests in flight per connection in open
	// loop; default 256. An arrival that finds every connection at the
	// bound waits (counted as held) and is sent as soon as a response frees
	// a slot; its corrected latency still runs from its intended time.
	MaxInFlight int `json:"max_in_flight"`

	// Closed selects the closed loop: each connection keeps Outstanding
	// requests in flight and sends the next when one completes.
	Closed bool `json:"closed"`
	// Outstanding is the closed loop's requests in flight per connection;
	// default Depth.
	Outstanding int `json:"outstanding"`

	// Duration is the measured time (after Warmup); exactly one of
	// Duration and Requests must be set.
	Duration time.Duration `json:"duration_ns"`
	// Requests is the number of measured requests (after Warmup).
	Requests int64 `json:"requests"`
	// Warmup runs the load unmeasured before the measurement starts; no
	// statistic includes it. 0 means none (and the verdict says so).
	Warmup time.Duration `json:"warmup_ns"`
	// Timeout is how long a request may wait for its response after it was
	// sent; default 5s. A request that times out is an error, and so are
	// the requests behind it on its connection, which is reconnected.
	Timeout time.Duration `json:"timeout_ns"`

	// CPU, Block, Size and Priority are the distributions each request's
	// CPU work (ns), blocking work (ns), response size (bytes) and priority
	// (0..255) are drawn from; the zero Dist is fixed 0.
	CPU      Dist `json:"cpu_ns"`
	Block    Dist `json:"block_ns"`
	Size     Dist `json:"size_bytes"`
	Priority Dist `json:"priority"`
	// PriorityClasses, if set, are the boundaries of the priority classes
	// whose corrected latency is also kept apart (Result.Classes):
	// increasing priorities 1..255; class 0 is 0 up to the first boundary
	// (exclusive), the last class from the last boundary up to 255.
	PriorityClasses []int `json:"priority_classes,omitempty"`
	// Ops is the operation mix; the zero value is all work.
	Ops OpMix `json:"ops"`
	// Accounts is the number of ledger accounts the server has (its
	// --accounts); default service.DefaultAccounts.
	Accounts int `json:"accounts"`
	// Amount is what deposits, withdrawals and transfers move; default 1.
	Amount int64 `json:"amount"`
	// WithdrawWait is how long each withdrawal may wait for funds
	// (wire.Request.Timeout): the ledger's guarded withdrawal waits on its
	// monitor until the balance suffices, or answers status timeout. 0,
	// the default, never waits: an overdraft is refused at once. At most
	// wire.DefaultMaxWork.
	WithdrawWait time.Duration `json:"withdraw_wait_ns,omitempty"`
	// LedgerMoney, if positive, is the ledger's money when the run starts
	// (its total, read just before the run by a caller that alone changes
	// the ledger). Every total response is then checked against it and
	// the deposits and withdrawals sent and acknowledged around it (see
	// Ledger); one outside those bounds fails as verify_total. 0 (the
	// default) checks only that a total is a number.
	LedgerMoney int64 `json:"ledger_money,omitempty"`
	// KillEvery, if positive, makes each worker close one of its
	// connections, chosen at random, about every KillEvery responses it
	// reads (uniformly 1 to 2·KillEvery−1 apart), with a reset, and open
	// it again at once: clients that vanish in the middle of a pipeline,
	// for soak tests. The connection chosen sends nothing more and is
	// closed as soon as it has no deposit, withdrawal or transfer in
	// flight, so that every money operation has a known outcome; the
	// requests it still has in flight are abandoned (Counts.Abandoned),
	// neither failed nor answered, and those not yet written are sent on
	// another connection. 0 (the default) kills nothing.
	KillEvery int `json:"kill_every,omitempty"`
	// ConnRequests, if positive, is how many requests a connection
	// carries: after its ConnRequests-th response it is closed (a FIN,
	// as a client without keep-alive closes) and opened again for the
	// next ones — at 1, a new connection per request ("churn"), so that
	// the server accepts, registers and closes a connection for every
	// request, and the request's latency includes the connect whenever
	// no connection is open and idle when it falls due. 0 (the default):
	// connections are kept alive for the whole run.
	ConnRequests int `json:"conn_requests,omitempty"`

	// Verify is how responses are checked; default VerifyFull.
	Verify VerifyMode `json:"verify"`
	// Seed seeds the arrival process and the request mix: equal seeds give
	// equal schedules and mixes.
	Seed uint64 `json:"seed"`

	// HistLowest, HistHighest and HistDigits are the latency histograms'
	// range and precision; defaults 1µs, 60s and 3 significant digits.
	// Values above HistHighest are recorded as HistHighest and counted.
	HistLowest  time.Duration `json:"hist_lowest_ns"`
	HistHighest time.Duration `json:"hist_highest_ns"`
	HistDigits  int           `json:"hist_significant_digits"`

	// HlogPath, if set, is where the per-interval histograms are written as
	// an HdrHistogram log (.hlog): corrected latency untagged, uncorrected
	// latency tagged "uncorrected", one pair per HlogInterval (default 1s).
	HlogPath     string        `json:"hlog_path,omitempty"`
	HlogInterval time.Duration `json:"hlog_interval_ns"`
	// TailInterval, if set, also computes the corrected latency's p99 of
	// every interval of this length inside the window, and their median
	// (Result.Intervals, IntervalTail): a tail that one stall cannot set.
	// With an hlog it must equal HlogInterval.
	TailInterval time.Duration `json:"tail_interval_ns,omitempty"`

	// Poll is how a worker waits between events: PollSleep (the default)
	// or PollBusy. Give a generator busy polling when each worker has a
	// CPU of its own ("concbench load --cpus", the harness do).
	Poll Poll `json:"poll"`
	// Spin is, with PollSleep, how long before a scheduled send a worker
	// stops sleeping in epoll and polls instead, because a thread woken by
	// a timer on a VM whose idle vCPU halts arrives tens of µs late. 0
	// (the default) measures it: 1.5 × the p99 of how late this machine's
	// timed waits wake, probed before the run and re-estimated from every
	// timed wait during it (Result.Timing). Negative: never poll early.
	// Any positive value is accepted; one longer than the gaps between
	// sends amounts to busy polling. PollBusy ignores it.
	Spin time.Duration `json:"spin_ns"`
	// Limits are the verdict's bounds on the generator's own health; a
	// zero field means its default (DefaultLimits).
	Limits Limits `json:"limits"`

	// Throttle, if positive, makes every worker spin this long after
	// each response it reads: a deliberately slower generator, for tests
	// and demonstrations of the checks that catch a generator that is
	// the bottleneck. Every result of a throttled run says so in its
	// warnings. 0 in every real measurement.
	Throttle time.Duration `json:"throttle_ns,omitempty"`

	// Trace, if positive, keeps a per-request record (Result.Trace) of up
	// to Trace measured requests answered ok — ids and intended, actual
	// send and receive times on CLOCK_MONOTONIC — in arrays preallocated
	// before the run (40 bytes a request); beyond it requests are counted
	// as dropped. 0 (the default) records nothing. Max MaxTrace.
	Trace int `json:"trace,omitempty"`

	// stall, if set, makes every worker stop for stall.for every
	// stall.every of the measurement, as a descheduled or frozen
	// generator would: the tests' way to prove that the verdict catches a
	// generator that cannot keep its schedule.
	stall struct{ every, dur time.Duration }

	// OnWindow, if set, is called by Run just before the measurement
	// window starts (start true: 20 ms before the end of the warm-up, at
	// most half of it, so that the caller's work there does not preempt
	// the workers inside the window) and after the window has ended
	// (start false: every worker has stopped sending and drained its
	// requests in flight, and has not yet closed its connections), so that
	// a caller can measure the server over the window, without the
	// server's connection set-up and teardown. It runs on Run's goroutine,
	// outside the generator's own CPU and allocation counts; the workers
	// do not wait for it. It is called with false only after a call with
	// true, and not at all if the run ends before its window starts. It
	// is not serialized.
	OnWindow func(start bool) `json:"-"`

	// StartAt, if not zero, is the wall-clock time at which the schedule
	// (the warm-up, then the window) starts, after every connection has
	// been opened and primed: how the agents of a multi-host run (package
	// loadgen/agent) start together. If priming ends after StartAt, the
	// schedule starts at once and Result.StartTime shows how late. It is
	// not serialized: a coordinator records the common start itself.
	StartAt time.Time `json:"-"`
}

// Defaults and limits of Config.
const (
	DefaultConns        = 16
	DefaultMaxInFlight  = 256
	DefaultTimeout      = 5 * time.Second
	DefaultHistLowest   = time.Microsecond
	DefaultHistHighest  = 60 * time.Second
	DefaultHistDigits   = 3
	DefaultHlogInterval = time.Second
	// MinWarmup is the shortest warm-up the verdict accepts.
	MinWarmup = 100 * time.Millisecond

	MaxConns    = 1 << 16
	MaxWorkers  = 256
	MaxDepth    = 1024
	MaxInFlight = 1 << 16
	MaxRate     = 1e8
	// maxCPU bounds WorkerCPUs: the CPUs a unix.CPUSet can name.
	maxCPU = 1024
)

// WithDefaults returns c with zero fields that have a default replaced by it.
func (c Config) WithDefaults() Config {
	c.Protocol = cmp.Or(c.Protocol, "http")
	c.Conns = cmp.Or(c.Conns, DefaultConns)
	c.Workers = cmp.Or(c.Workers, 1)
	c.Depth = cmp.Or(c.Depth, 1)
	c.Arrival = cmp.Or(c.Arrival, Poisson)
	c.MaxInFlight = cmp.Or(c.MaxInFlight, DefaultMaxInFlight)
	c.Outstanding = cmp.Or(c.Outstanding, c.Depth)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.Accounts = cmp.Or(c.Accounts, service.DefaultAccounts)
	c.Amount = cmp.Or(c.Amount, 1)
	c.Verify = cmp.Or(c.Verify, VerifyFull)
	c.HistLowest = cmp.Or(c.HistLowest, DefaultHistLowest)
	c.HistHighest = cmp.Or(c.HistHighest, DefaultHistHighest)
	c.HistDigits = cmp.Or(c.HistDigits, DefaultHistDigits)
	c.HlogInterval = cmp.Or(c.HlogInterval, DefaultHlogInterval)
	c.Poll = cmp.Or(c.Poll, PollSleep)
	c.Limits = c.Limits.withDefaults()
	return c
}

// Validate reports the first setting of c (after defaults) outside its
// accepted range; the message names the value and the range.
func (c Config) Validate() error {
	c = c.WithDefaults()
	if err := c.validateLoad(); err != nil {
		return err
	}
	if err := c.validateWork(); err != nil {
		return err
	}
	return c.validateMeasurement()
}

// configErr returns the error of a setting outside its accepted range.
func configErr(format string, args ...any) error { return fmt.Errorf("loadgen: "+format, args...) }

// validateLoad validates the settings of the load: the server, the
// connections, the run's length and the arrivals (Validate's rules).
func (c Config) validateLoad() error {
	switch {
	case c.Addr == "":
		return configErr("no address (accepted: host:port of the server)")
	case !slices.Contains(wire.Protocols, c.Protocol):
		return configErr("protocol %q unknown (accepted: %s)", c.Protocol, strings.Join(wire.Protocols, ", "))
	case c.Conns < 1 || c.Conns > MaxConns:
		return configErr("conns %d out of range (accepted: 1..%d)", c.Conns, MaxConns)
	case c.Workers < 1 || c.Workers > min(MaxWorkers, c.Conns):
		return configErr("workers %d out of range (accepted: 1..%d, at most one per connection)", c.Workers, min(MaxWorkers, c.Conns))
	case c.Depth < 1 || c.Depth > MaxDepth:
		return configErr("depth %d out of range (accepted: 1..%d)", c.Depth, MaxDepth)
	case (c.Duration > 0) == (c.Requests > 0):
		return configErr("duration %v and requests %d: set exactly one of them", c.Duration, c.Requests)
	case c.Duration < 0 || c.Duration > 24*time.Hour:
		return configErr("duration %v out of range (accepted: up to 24h)", c.Duration)
	case c.Requests < 0:
		return configErr("requests %d out of range (accepted: > 0)", c.Requests)
	case c.Warmup < 0 || c.Warmup > time.Hour:
		return configErr("warmup %v out of range (accepted: 0..1h)", c.Warmup)
	case c.Timeout < time.Millisecond || c.Timeout > time.Hour:
		return configErr("timeout %v out of range (accepted: 1ms..1h)", c.Timeout)
	}
	if c.Closed {
		switch {
		case c.Rate != 0:
			return configErr("rate %g given with closed loop (accepted: 0; a closed loop has no rate, only Outstanding)", c.Rate)
		case c.Outstanding < c.Depth || c.Outstanding > MaxInFlight:
			return configErr("outstanding %d out of range (accepted: depth %d..%d)", c.Outstanding, c.Depth, MaxInFlight)
		}
	} else {
		switch {
		case !isFinite(c.Rate) || c.Rate <= 0 || c.Rate > MaxRate:
			return configErr("rate %g req/s out of range (accepted: > 0 and ≤ %g in open loop; set Closed for a closed loop)", c.Rate, MaxRate)
		case c.Arrival != Poisson && c.Arrival != Constant && c.Arrival != OnOff:
			return configErr("arrival %q unknown (accepted: poisson, constant, onoff)", c.Arrival)
		case c.Arrival == OnOff && (c.On <= 0 || c.On > time.Hour || c.Off <= 0 || c.Off > time.Hour):
			return configErr("on/off periods %v/%v out of range (accepted: each > 0 and ≤ 1h)", c.On, c.Off)
		case c.Arrival != OnOff && (c.On != 0 || c.Off != 0):
			return configErr("on/off periods %v/%v given with arrival %q (accepted: only with onoff)", c.On, c.Off, c.Arrival)
		case c.MaxInFlight < c.Depth || c.MaxInFlight > MaxInFlight:
			return configErr("max in flight %d out of range (accepted: depth %d..%d)", c.MaxInFlight, c.Depth, MaxInFlight)
		}
	}
	return nil
}

// validateWork validates the work each request asks for: its
// distributions, priority classes and operation mix (Validate's rules).
func (c Config) validateWork() error {
	if err := c.CPU.validate("cpu", float64(wire.DefaultMaxWork), formatNs); err != nil {
		return err
	}
	if err := c.Block.validate("block", float64(wire.DefaultMaxWork), formatNs); err != nil {
		return err
	}
	if err := c.Size.validate("size", wire.DefaultMaxPayload, formatCount); err != nil {
		return err
	}
	if err := c.Priority.validate("priority", 255, formatCount); err != nil {
		return err
	}
	if err := validateClasses(c.PriorityClasses); err != nil {
		return err
	}
	w := c.Ops.weights()
	sum := 0.0
	for op, x := range w {
		if !isFinite(x) || x < 0 {
			return configErr("op mix: weight %g of %s out of range (accepted: ≥ 0)", x, wire.Op(op))
		}
		sum += x
	}
	switch {
	case !isFinite(sum) || sum <= 0:
		return configErr("op mix %q: weights sum to %g (accepted: a positive, finite sum)", c.Ops, sum)
	case c.Accounts < 1 || c.Accounts > service.MaxAccounts:
		return configErr("accounts %d out of range (accepted: 1..%d)", c.Accounts, service.MaxAccounts)
	case w[wire.OpTransfer] > 0 && c.Accounts < 2:
		return configErr("accounts %d too few for transfers (accepted: ≥ 2)", c.Accounts)
	case c.Amount < 1:
		return configErr("amount %d out of range (accepted: ≥ 1)", c.Amount)
	case c.WithdrawWait < 0 || c.WithdrawWait > wire.DefaultMaxWork:
		return configErr("withdraw wait %v out of range (accepted: 0..%v)", c.WithdrawWait, wire.DefaultMaxWork)
	case c.LedgerMoney < 0:
		return configErr("ledger money %d out of range (accepted: 0 for no check, or > 0)", c.LedgerMoney)
	case c.ConnRequests < 0:
		return configErr("conn requests %d out of range (accepted: 0 for keep-alive, or ≥ 1 requests per connection)", c.ConnRequests)
	case c.KillEvery < 0:
		return configErr("kill every %d out of range (accepted: 0 for never, or ≥ 1 responses)", c.KillEvery)
	}
	return nil
}

// validateMeasurement validates how the run is verified and measured:
// verification, histograms, polling, tracing, the workers' CPUs and the
// verdict's limits (Validate's rules).
func (c Config) validateMeasurement() error {
	switch {
	case c.Verify != VerifyFull && c.Verify != VerifyAuto && c.Verify != VerifyStatus && c.Verify != VerifyNone:
		return configErr("verify %q unknown (accepted: full, auto, status, none)", c.Verify)
	case c.HistLowest < 1 || c.HistHighest < 2*c.HistLowest || c.HistHighest > 24*time.Hour:
		return configErr("histogram range %v..%v out of range (accepted: lowest ≥ 1ns, highest ≥ 2×lowest and ≤ 24h)", c.HistLowest, c.HistHighest)
	case c.HistDigits < 1 || c.HistDigits > 5:
		return configErr("histogram significant digits %d out of range (accepted: 1..5)", c.HistDigits)
	case c.HlogInterval < 10*time.Millisecond || c.HlogInterval > time.Hour:
		return configErr("hlog interval %v out of range (accepted: 10ms..1h)", c.HlogInterval)
	case c.TailInterval != 0 && (c.TailInterval < 10*time.Millisecond || c.TailInterval > time.Hour):
		return configErr("tail interval %v out of range (accepted: 0 for none, or 10ms..1h)", c.TailInterval)
	case c.TailInterval != 0 && c.HlogPath != "" && c.TailInterval != c.HlogInterval:
		return configErr("tail interval %v differs from the hlog interval %v (accepted: equal, or no hlog)", c.TailInterval, c.HlogInterval)
	case c.Poll != PollSleep && c.Poll != PollBusy:
		return configErr("poll %q unknown (accepted: sleep, busy)", c.Poll)
	case c.Trace < 0 || c.Trace > MaxTrace:
		return configErr("trace %d out of range (accepted: 0 for none, or 1..%d)", c.Trace, MaxTrace)
	case c.Throttle < 0 || c.Throttle > time.Second:
		return configErr("throttle %v out of range (accepted: 0..1s)", c.Throttle)
	case c.Nice < -20 || c.Nice > 19:
		return configErr("nice %d out of range (accepted: -20..19)", c.Nice)
	}
	for _, cpu := range c.WorkerCPUs {
		if cpu < 0 || cpu >= maxCPU {
			return configErr("worker CPU %d out of range (accepted: 0..%d)", cpu, maxCPU-1)
		}
	}
	if err := c.Limits.validate(); err != nil {
		return configErr("%v", err)
	}
	return nil
}

// Mode returns the run's mode label: "open-loop poisson", "open-loop
// constant", "open-loop on/off poisson (on 100ms, off 900ms)" or
// "closed-loop (N outstanding per connection)", with ", pipelined depth D"
// appended when Depth > 1. Every output carries it.
func (c Config) Mode() string {
	c = c.WithDefaults()
	var s string
	switch {
	case c.Closed:
		s = fmt.Sprintf("closed-loop (%d outstanding per connection)", c.Outstanding)
	case c.Arrival == OnOff:
		s = fmt.Sprintf("open-loop on/off poisson (on %v, off %v)", c.On, c.Off)
	default:
		s = "open-loop " + string(c.Arrival)
	}
	if c.Depth > 1 {
		s += fmt.Sprintf(", pipelined depth %d", c.Depth)
	}
	return s
}

// TargetRate returns the mean offered rate the configuration asks for in
// requests per second: Rate, or Rate·On/(On+Off) for OnOff; 0 in closed
// loop.
func (c Config) TargetRate() float64 {
	c = c.WithDefaults()
	switch {
	case c.Closed:
		return 0
	case c.Arrival == OnOff && c.On+c.Off > 0:
		return c.Rate * float64(c.On) / float64(c.On+c.Off)
	}
	return c.Rate
}

// ErrUnsupported is returned by Run where the generator cannot run (it uses
// epoll, so it runs on Linux only).
var ErrUnsupported = errors.New("loadgen: not supported on this operating system (epoll is Linux-only)")
