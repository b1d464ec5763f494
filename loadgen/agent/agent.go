package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"concbench/loadgen"
)

// Agent runs load-generator shares for a coordinator that presents its
// token, against targets inside its allowed prefixes, one run at a time.
type Agent struct {
	// Token is the secret a coordinator must present; it must not be
	// empty.
	Token string
	// Allow are the prefixes a target's address must lie in; empty means
	// loopback only (127.0.0.0/8 and ::1).
	Allow []netip.Prefix
	// Run runs a share; nil means loadgen.Run. Tests replace it.
	Run func(context.Context, loadgen.Config) (*loadgen.Result, error)
	// Logf, if set, logs what the agent does (a coordinator's arrival,
	// refusals, each run's one-line outcome).
	Logf func(format string, args ...any)

	mu   sync.Mutex
	busy bool
}

// handshakeTimeout bounds each step of the control exchange before a run
// (hello, pings, the run message).
const handshakeTimeout = 10 * time.Second

// Loopback are the prefixes an agent allows when it was given none.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// ParseAllow parses a comma-separated list of addresses and CIDR prefixes
// ("10.0.0.5,192.168.7.0/24"); an address is a prefix of its full length.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("allow: %q is not an address or CIDR prefix: %w", f, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("allow: %q is not an address or CIDR prefix: %w", f, err)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("allow: %q lists no address", s)
	}
	return out, nil
}

func (a *Agent) allow() []netip.Prefix {
	if len(a.Allow) == 0 {
		return Loopback
	}
	return a.Allow
}

func (a *Agent) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(format, args...)
	}
}

// CheckTarget resolves addr (host:port) and returns it as ip:port if
// every address the host resolves to lies in the agent's allowed
// prefixes; the run then uses that address, so that a name cannot
// resolve elsewhere later. Otherwise it returns an error naming the
// address and the prefixes.
func (a *Agent) CheckTarget(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("target %q: %w", addr, err)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return "", fmt.Errorf("target %q: %w", addr, err)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("target %q: the name resolves to no address", addr)
	}
	allow := a.allow()
	for _, ip := range ips {
		ip = ip.Unmap()
		if !slices.ContainsFunc(allow, func(p netip.Prefix) bool { return p.Contains(ip) }) {
			return "", fmt.Errorf("target %s (%s) is outside the addresses this agent was started with (%s): refused", addr, ip, prefixList(allow))
		}
	}
	return net.JoinHostPort(ips[0].Unmap().String(), port), nil
}

func prefixList(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// Serve accepts coordinators on ln until ctx is done or ln fails, serving
// each on its own goroutine (a second one while a run is under way is
// refused as busy). It closes ln when ctx is done and returns ctx's error.
func (a *Agent) Serve(ctx context.Context, ln net.Listener) error {
	if a.Token == "" {
		return errors.New("agent: no token: an agent must be started with a shared token")
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("agent: accept: %w", err)
		}
		wg.Go(func() {
			defer c.Close()
			if err := a.ServeConn(ctx, c); err != nil {
				a.logf("coordinator %s: %v", c.RemoteAddr(), err)
			}
		})
	}
}

// ServeConn runs the protocol with one coordinator on c (see the package
// documentation) and returns why it ended early, or nil after a result
// was sent. It does not close c.
func (a *Agent) ServeConn(ctx context.Context, c net.Conn) error {
	m, err := expect(c, msgHello, handshakeTimeout)
	if err != nil {
		return err
	}
	if err := a.admit(m); err != nil {
		return refuse(c, err)
	}
	defer a.setIdle()
	if err := writeMsg(c, &message{Type: msgWelcome, Version: Version, Allow: strings.Split(prefixList(a.allow()), ", ")}); err != nil {
		return err
	}
	if m, err = pings(c); err != nil {
		return err
	}
	cfg, err := a.runConfig(ctx, m)
	if err != nil {
		return refuse(c, err)
	}
	if err := writeMsg(c, &message{Type: msgStarted, Target: cfg.Addr}); err != nil {
		return err
	}
	a.logf("coordinator %s: running %s against %s at %.0f req/s over %d connections, starting %s",
		c.RemoteAddr(), cfg.Mode(), cfg.Addr, cfg.TargetRate(), cfg.WithDefaults().Conns, cfg.StartAt.Format(time.RFC3339Nano))
	return a.serveRun(ctx, c, cfg, m.Hold)
}

// refuse tells the coordinator on c why it is refused, and returns err.
func refuse(c net.Conn, err error) error {
	c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	writeMsg(c, &message{Type: msgError, Error: err.Error()})
	return err
}

// admit admits the coordinator whose hello is m: its protocol version
// and token must be this agent's, and the agent must not be busy with
// another's run; admitted, the agent is busy until setIdle.
func (a *Agent) admit(m *message) error {
	if m.Version != Version {
		return fmt.Errorf("agent: protocol version %d refused (this agent speaks version %d)", m.Version, Version)
	}
	if !tokenEqual(m.Token, a.Token) {
		return errors.New("agent: wrong token: refused")
	}
	a.mu.Lock()
	busy := a.busy
	a.busy = true
	a.mu.Unlock()
	if busy {
		return errors.New("agent: busy with another coordinator's run")
	}
	return nil
}

// setIdle ends the admitted coordinator's turn.
func (a *Agent) setIdle() {
	a.mu.Lock()
	a.busy = false
	a.mu.Unlock()
}

// pings answers the coordinator's clock pings on c and returns the first
// message that is not one.
func pings(c net.Conn) (*message, error) {
	for {
		c.SetReadDeadline(time.Now().Add(handshakeTimeout))
		m, err := readMsg(c)
		if err != nil {
			return nil, err
		}
		if m.Type != msgPing {
			c.SetReadDeadline(time.Time{})
			return m, nil
		}
		t2 := time.Now().UnixNano()
		if err := writeMsg(c, &message{Type: msgPong, T1: m.T1, T2: t2, T3: time.Now().UnixNano()}); err != nil {
			return nil, err
		}
	}
}

// runConfig returns the configuration of the run message m, its target
// checked (CheckTarget) and its start time set, or why the run is
// refused.
func (a *Agent) runConfig(ctx context.Context, m *message) (loadgen.Config, error) {
	if m.Type != msgRun || m.Config == nil {
		return loadgen.Config{}, fmt.Errorf("agent protocol: expected a run message, got %q", m.Type)
	}
	cfg := *m.Config
	if cfg.HlogPath != "" {
		return cfg, errors.New("agent: an hlog path was given: an agent writes no files for a coordinator")
	}
	target, err := a.CheckTarget(ctx, cfg.Addr)
	if err != nil {
		return cfg, err
	}
	cfg.Addr = target
	if m.StartUnixNs <= 0 {
		return cfg, errors.New("agent: the run message has no start time")
	}
	cfg.StartAt = time.Unix(0, m.StartUnixNs)
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// serveRun runs cfg for the coordinator on c and sends it the result.
// The coordinator says nothing more until the result (but release, if it
// asked to hold): anything else it sends, or its connection closing,
// ends the run.
func (a *Agent) serveRun(ctx context.Context, c net.Conn, cfg loadgen.Config, hold bool) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan error, 1)
	release := make(chan struct{})
	if hold {
		cfg.OnWindow = holdAtDrain(runCtx, c, &cfg, release)
	}
	go watchCoordinator(c, hold, release, lost, cancel)
	run := a.Run
	if run == nil {
		run = loadgen.Run
	}
	res, runErr := run(runCtx, cfg)
	select {
	case err := <-lost:
		if errors.Is(err, io.EOF) {
			err = errors.New("the coordinator closed the connection")
		}
		return fmt.Errorf("agent: run abandoned: %w", err)
	default:
	}
	out := &message{Type: msgResult, Result: res}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	if res != nil {
		a.logf("coordinator %s: %s", c.RemoteAddr(), res)
	} else {
		a.logf("coordinator %s: run failed: %v", c.RemoteAddr(), runErr)
	}
	c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if err := writeMsg(c, out); err != nil {
		return err
	}
	// The reader goroutine sees the coordinator close; wait for it.
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	<-lost
	return nil
}

// holdAtDrain returns the OnWindow of a run that holds for the
// coordinator on c: Run calls OnWindow(false) once every worker has
// drained, before they close their connections, and it then tells the
// coordinator and waits for its release (or the run's end, or cfg's
// timeout), so that the coordinator measures the server without its
// connections' teardown.
func holdAtDrain(runCtx context.Context, c net.Conn, cfg *loadgen.Config, release <-chan struct{}) func(bool) {
	timeout := cfg.WithDefaults().Timeout + handshakeTimeout
	return func(start bool) {
		if start {
			return
		}
		if writeMsg(c, &message{Type: msgDrained}) != nil {
			return
		}
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-release:
		case <-runCtx.Done():
		case <-t.C:
		}
	}
}

// watchCoordinator reads the coordinator's messages on c during the run:
// a release, once, if it holds (it closes release); anything else, or
// the connection failing, is sent to lost and cancels the run.
func watchCoordinator(c net.Conn, hold bool, release chan<- struct{}, lost chan<- error, cancel context.CancelFunc) {
	for {
		m, err := readMsg(c)
		if err == nil && m.Type == msgRelease && hold {
			close(release)
			hold = false // a second release is a protocol error
			continue
		}
		if err == nil {
			err = fmt.Errorf("agent protocol: the coordinator sent a %q message during the run", m.Type)
		}
		lost <- err
		cancel()
		return
	}
}
