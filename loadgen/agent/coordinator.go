package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"concbench/loadgen"
)

// Coordinator splits a run over agents, starts them together, and merges
// what they measured.
type Coordinator struct {
	// Agents are the agents' control addresses (host:port).
	Agents []string
	// Token is the secret the agents were started with.
	Token string
	// Lead is how far ahead of the run message the common start lies:
	// time for every agent to open and prime its connections; default
	// DefaultLead.
	Lead time.Duration
	// Samples is the number of clock exchanges per agent; default
	// DefaultSamples.
	Samples int
	// MaxOffset and MaxUncertainty bound an agent's estimated clock
	// offset and its uncertainty; beyond either the coordinator refuses
	// to run. Defaults DefaultMaxOffset and DefaultMaxUncertainty.
	MaxOffset      time.Duration
	MaxUncertainty time.Duration
	// Logf, if set, logs the coordinator's progress.
	Logf func(format string, args ...any)
}

// The Coordinator's defaults.
const (
	DefaultLead    = 2 * time.Second
	DefaultSamples = 8
	// DefaultMaxOffset: the offset is corrected, so its size only has to
	// be plausible; a second apart means the hosts' clocks are not kept.
	DefaultMaxOffset = time.Second
	// DefaultMaxUncertainty: the agents' windows may disagree by this
	// much, a small share of any window worth measuring (a LAN's round
	// trip is tens to hundreds of µs).
	DefaultMaxUncertainty = time.Millisecond
	// windowLead is how long before the window the coordinator calls
	// Config.OnWindow(true) (at most half the warm-up), as loadgen.Run
	// does.
	windowLead = 20 * time.Millisecond
	// dialTimeout bounds connecting to an agent.
	dialTimeout = 5 * time.Second
	// resultGrace is how long after an agent's last possible response
	// (window end plus the request timeout) the coordinator waits for its
	// result before declaring it lost: its drain, its bookkeeping, the
	// result's transfer.
	resultGrace = 30 * time.Second
)

// Result is a run over agents: the merged Result (a normal
// loadgen.Result, whose fields it shows as its own in JSON and text) and
// what each agent was given and measured.
type Result struct {
	*loadgen.Result
	// CommonStart is the common start of the schedule (the warm-up), by
	// the coordinator's clock.
	CommonStart time.Time `json:"common_start"`
	Agents      []Report  `json:"agents"`
}

// Report is one agent's part of a run.
type Report struct {
	// Label names the agent in the merged Result's reasons and warnings.
	Label string `json:"label"`
	Addr  string `json:"addr"`
	// Conns, Workers, RatePerS and Seed are its share.
	Conns    int     `json:"conns"`
	Workers  int     `json:"workers"`
	RatePerS float64 `json:"rate_per_s"`
	Seed     uint64  `json:"seed"`
	// Target is the server address the agent resolved and drove.
	Target string `json:"target,omitempty"`
	// Clock is its clock offset against the coordinator's.
	Clock Offset `json:"clock"`
	// StartSkewNs is how much later than the common start plus warm-up
	// the agent's measurement window started, by the coordinator's
	// clock (offset corrected; within ± Clock.UncertaintyNs).
	StartSkewNs int64 `json:"start_skew_ns"`
	// Error is why the agent's part failed or is missing, if it did.
	Error string `json:"error,omitempty"`
	// Result is what the agent measured, histograms included.
	Result *loadgen.Result `json:"result,omitempty"`
}

// Split divides cfg's connections over n agents as evenly as they go
// (the first ones get one more) and its rate in proportion to each one's
// connections; each agent keeps cfg's workers (at most one per
// connection) and gets a seed of its own, so that its arrivals are
// independent of the others' (equal seeds would make the superposed
// process the same schedule n times, not a Poisson process at the total
// rate).
func Split(cfg loadgen.Config, n int) ([]loadgen.Config, error) {
	cfg = cfg.WithDefaults()
	if n < 1 || cfg.Conns < n {
		return nil, fmt.Errorf("%d connections cannot be split over %d agents (at least one each)", cfg.Conns, n)
	}
	out := make([]loadgen.Config, n)
	for i := range out {
		c := cfg
		c.Conns = cfg.Conns / n
		if i < cfg.Conns%n {
			c.Conns++
		}
		c.Workers = min(cfg.Workers, c.Conns)
		if !cfg.Closed {
			c.Rate = cfg.Rate * float64(c.Conns) / float64(cfg.Conns)
		}
		c.Seed = cfg.Seed + uint64(i)*0x9e3779b97f4a7c15
		out[i] = c
	}
	return out, nil
}

func (co *Coordinator) logf(format string, args ...any) {
	if co.Logf != nil {
		co.Logf(format, args...)
	}
}

// session is the coordinator's connection to one agent.
type session struct {
	rep  *Report
	conn net.Conn
	cfg  loadgen.Config
}

// Run runs cfg over the agents: it connects to each, checks its token and
// clock, sends each its share with the common start time, and waits for
// their results. It returns an error, and no Result, if the run could not
// be started (an agent unreachable, refusing the token or the target, a
// clock offset beyond the bounds): then no agent runs. Once started, an
// agent that fails or is lost makes the merged verdict invalid, with the
// agent named, and the others' results are still merged. cfg must have a
// Duration (the agents' windows must coincide) and no HlogPath. Its
// OnWindow, if set, is called as loadgen.Run calls it (see the package
// documentation, hold), on Run's goroutine.
func (co *Coordinator) Run(ctx context.Context, cfg loadgen.Config) (*Result, error) {
	if len(co.Agents) == 0 {
		return nil, errors.New("agents: no agent given")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	switch {
	case cfg.Duration <= 0:
		return nil, errors.New("agents: a run over agents needs a duration (a request count cannot give the agents one window)")
	case cfg.HlogPath != "":
		return nil, errors.New("agents: no interval log (hlog) over agents: each agent's histograms come back whole")
	}
	shares, err := Split(cfg, len(co.Agents))
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	lead := co.Lead
	if lead <= 0 {
		lead = DefaultLead
	}
	ss := make(sessions, len(co.Agents))
	for i, addr := range co.Agents {
		c := shares[i]
		ss[i] = &session{cfg: c, rep: &Report{Label: fmt.Sprintf("agent %d (%s)", i+1, addr), Addr: addr,
			Conns: c.Conns, Workers: c.Workers, RatePerS: c.Rate, Seed: c.Seed}}
	}
	if err := co.handshakeAll(ctx, ss); err != nil {
		ss.closeAll()
		return nil, fmt.Errorf("agents: not started: %w", err)
	}
	// The common start, by the coordinator's clock; each agent gets it in
	// its own.
	start := time.Now().Add(lead).Round(time.Millisecond)
	if err := ss.start(start, cfg.OnWindow != nil); err != nil {
		ss.closeAll() // the agents already started abandon their runs
		return nil, fmt.Errorf("agents: not started: %w", err)
	}
	co.logf("every agent accepted; the schedule starts at %s", start.Format(time.RFC3339Nano))

	// Wait for the results; ctx cancelled closes the connections, which
	// ends the agents' runs.
	stop := context.AfterFunc(ctx, ss.closeAll)
	defer stop()
	co.await(ss, &cfg, start)
	ss.closeAll()

	merged, err := ss.merge(&cfg, start, lead)
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	reps := make([]Report, len(ss))
	for i, s := range ss {
		reps[i] = *s.rep
	}
	res := &Result{Result: merged, CommonStart: start, Agents: reps}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// sessions are the coordinator's connections to its agents, in order.
type sessions []*session

// closeAll closes every agent's connection.
func (ss sessions) closeAll() {
	for _, s := range ss {
		if s.conn != nil {
			s.conn.Close()
		}
	}
}

// handshakeAll connects to every agent at once, authenticates it and
// measures its clock, within the coordinator's bounds: any failure means
// no run.
func (co *Coordinator) handshakeAll(ctx context.Context, ss sessions) error {
	samples := co.Samples
	if samples <= 0 {
		samples = DefaultSamples
	}
	maxOff, maxUnc := co.MaxOffset, co.MaxUncertainty
	if maxOff <= 0 {
		maxOff = DefaultMaxOffset
	}
	if maxUnc <= 0 {
		maxUnc = DefaultMaxUncertainty
	}
	errs := make([]error, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() {
			errs[i] = co.handshake(ctx, s, samples)
			if errs[i] == nil {
				errs[i] = s.rep.Clock.check(maxOff, maxUnc)
			}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", s.rep.Label, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range ss {
		co.logf("%s: clock offset %v ± %v (round trip %v), share %d connections at %.0f req/s",
			s.rep.Label, time.Duration(s.rep.Clock.OffsetNs), time.Duration(s.rep.Clock.UncertaintyNs),
			time.Duration(s.rep.Clock.RTTNs), s.rep.Conns, s.rep.RatePerS)
	}
	return nil
}

// start sends every agent its share with the common start (in its own
// clock) and waits for it to accept; hold asks the agents to wait for a
// release after draining (Config.OnWindow).
func (ss sessions) start(start time.Time, hold bool) error {
	for _, s := range ss {
		c := s.cfg
		m := &message{Type: msgRun, Config: &c, StartUnixNs: start.UnixNano() + s.rep.Clock.OffsetNs, Hold: hold}
		s.conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
		err := writeMsg(s.conn, m)
		var ok *message
		if err == nil {
			ok, err = expect(s.conn, msgStarted, handshakeTimeout)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.rep.Label, err)
		}
		s.rep.Target = ok.Target
	}
	return nil
}

// await collects every agent's result (collect), calling cfg.OnWindow,
// if set, as loadgen.Run calls it around the common window that starts
// at start plus the warm-up.
func (co *Coordinator) await(ss sessions, cfg *loadgen.Config, start time.Time) {
	deadline := start.Add(cfg.Warmup + cfg.Duration + cfg.Timeout + resultGrace)
	hold := cfg.OnWindow != nil
	var wg, drain sync.WaitGroup
	drained, release := make(chan struct{}), make(chan struct{})
	for _, s := range ss {
		wg.Add(1)
		drain.Add(1)
		go func() {
			defer wg.Done()
			co.collect(s, deadline, hold, drain.Done, release)
		}()
	}
	go func() { drain.Wait(); close(drained) }()
	if hold {
		// OnWindow as loadgen.Run calls it: shortly before the common
		// window starts, and once every agent has drained its requests
		// but not yet closed its connections (or is lost).
		t := time.NewTimer(time.Until(start.Add(cfg.Warmup - min(windowLead, cfg.Warmup/2))))
		select {
		case <-t.C:
			cfg.OnWindow(true)
			<-drained
			cfg.OnWindow(false)
		case <-drained:
			t.Stop()
		}
	}
	close(release)
	wg.Wait()
}

// merge merges the agents' results (loadgen.Merge) into the run's, its
// window from start plus the warm-up. An agent lost or failed, or one
// whose window started too late after the common start (beyond 1% of
// the window and its clock's uncertainty; lead was the time it had to
// open its connections), makes the verdict invalid.
func (ss sessions) merge(cfg *loadgen.Config, start time.Time, lead time.Duration) (*loadgen.Result, error) {
	var parts []loadgen.Part
	var failures []loadgen.Failure
	bound := int64(cfg.Duration) / 100 // the share of the window the rate check allows
	for _, s := range ss {
		r := s.rep
		if r.Result != nil {
			parts = append(parts, loadgen.Part{Label: r.Label, Result: r.Result})
			r.StartSkewNs = r.Result.StartTime.UnixNano() - r.Clock.OffsetNs - start.Add(cfg.Warmup).UnixNano()
			if abs(r.StartSkewNs) > bound+r.Clock.UncertaintyNs {
				failures = append(failures, loadgen.Failure{Check: loadgen.CheckClock,
					Text: fmt.Sprintf("%s: its window started %v after the common start (± %v; at most %v, 1%% of the window): its connections took longer to open than the lead %v",
						r.Label, time.Duration(r.StartSkewNs), time.Duration(r.Clock.UncertaintyNs), time.Duration(bound), lead)})
			}
		}
		if r.Error != "" {
			failures = append(failures, loadgen.Failure{Check: loadgen.CheckAborted, Text: fmt.Sprintf("%s: %s", r.Label, r.Error)})
		}
	}
	merged, err := loadgen.Merge(*cfg, parts, failures...)
	if err != nil {
		return nil, err
	}
	merged.StartTime = start.Add(cfg.Warmup)
	return merged, nil
}

// handshake connects to s's agent, says hello and measures its clock.
func (co *Coordinator) handshake(ctx context.Context, s *session, samples int) error {
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", s.rep.Addr)
	if err != nil {
		return err
	}
	s.conn = c
	c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if err := writeMsg(c, &message{Type: msgHello, Version: Version, Token: co.Token}); err != nil {
		return err
	}
	if _, err := expect(c, msgWelcome, handshakeTimeout); err != nil {
		return err
	}
	ex := make([]Sample, 0, samples)
	for range samples {
		t1 := time.Now()
		if err := writeMsg(c, &message{Type: msgPing, T1: t1.UnixNano()}); err != nil {
			return err
		}
		m, err := expect(c, msgPong, handshakeTimeout)
		if err != nil {
			return err
		}
		// T4 from the monotonic clock: a step of the wall clock during
		// the exchange does not lengthen or shorten the round trip.
		t4 := t1.UnixNano() + int64(time.Since(t1))
		ex = append(ex, Sample{T1: m.T1, T2: m.T2, T3: m.T3, T4: t4})
	}
	c.SetWriteDeadline(time.Time{})
	s.rep.Clock, err = Estimate(ex)
	return err
}

// collect waits for s's result until deadline and records it, or why it
// did not come, in s.rep. With hold, it first waits for the agent's
// drained message, calls drained (also if none comes), and releases the
// agent once release is closed.
func (co *Coordinator) collect(s *session, deadline time.Time, hold bool, drained func(), release <-chan struct{}) {
	s.conn.SetReadDeadline(deadline)
	m, err := readMsg(s.conn)
	if hold {
		if err == nil && m.Type == msgDrained {
			drained()
			<-release
			s.conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
			if err = writeMsg(s.conn, &message{Type: msgRelease}); err == nil {
				m, err = readMsg(s.conn)
			}
		} else {
			drained()
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		s.rep.Error = "lost mid-run: the agent closed its connection without a result (it died, or was stopped); its share of the load is missing"
	case errors.As(err, &ne) && ne.Timeout():
		s.rep.Error = fmt.Sprintf("lost mid-run: no result by %s (the window's end plus the request timeout and %v); its share of the load is missing", deadline.Format(time.RFC3339), resultGrace)
	case err != nil:
		s.rep.Error = fmt.Sprintf("lost mid-run: %v; its share of the load is missing", err)
	case m.Type == msgError:
		s.rep.Error = "failed: " + m.Error
	case m.Type != msgResult:
		s.rep.Error = fmt.Sprintf("agent protocol: expected a result, got %q", m.Type)
	default:
		s.conn.Close() // done with it: the agent is free for the next coordinator
		s.rep.Result = m.Result
		if m.Error != "" {
			s.rep.Error = "its run failed: " + m.Error
		} else if m.Result == nil {
			s.rep.Error = "agent protocol: a result message without a result"
		}
	}
	if s.rep.Error != "" {
		co.logf("%s: %s", s.rep.Label, s.rep.Error)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
