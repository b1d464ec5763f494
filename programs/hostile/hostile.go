package hostile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"time"

	"concbench/harness"
	"concbench/models"
	"concbench/programs/serverconf"
	"concbench/wire"
)

// Attacks are the attacks Run knows.
var Attacks = []string{"amplify", "slowheader"}

// Config is a hostile measurement's settings ("concbench hostile"'s
// flags).
type Config struct {
	// ServerBinary is the concbench that serves; "": this executable.
	ServerBinary string
	// Attack is "amplify" or "slowheader".
	Attack string
	// Conns is the attacking connections.
	Conns int
	// PerConn and Size are amplify's requests each attacker pipelines
	// and the response body bytes each asks for.
	PerConn, Size int
	// Reps is the runs of each configuration.
	Reps int
	// ServerCPUs is where the server is pinned.
	ServerCPUs string
	// Rest: amplify measures once the server has stopped writing (the
	// attack at rest); false: as soon as every attacker has had a
	// response produced.
	Rest bool
	// During is how long after the attackers connected slowheader
	// measures the victim under attack.
	During time.Duration
	// Configs are the server configurations, at least one.
	Configs []serverconf.Config
}

// Default returns the defaults of every setting but the configurations.
func Default() Config {
	return Config{Attack: "amplify", Conns: 200, PerConn: 16, Size: 1 << 20, Reps: 1, ServerCPUs: "0", Rest: true, During: 2 * time.Second}
}

// Check checks c's settings and returns c with the binary filled in.
func (c Config) Check() (Config, error) {
	switch {
	case !slices.Contains(Attacks, c.Attack):
		return c, fmt.Errorf("hostile: --attack %q: want amplify or slowheader", c.Attack)
	case c.Conns < 1 || c.PerConn < 1 || c.Reps < 1:
		return c, fmt.Errorf("hostile: --conns %d, --requests %d, --reps %d: want 1 or more each", c.Conns, c.PerConn, c.Reps)
	case c.Size < 0:
		return c, fmt.Errorf("hostile: --size %d: want 0 or more bytes", c.Size)
	case c.During < 0:
		return c, fmt.Errorf("hostile: --during %v: want 0 or more", c.During)
	case len(c.Configs) == 0:
		return c, errors.New("hostile: name at least one configuration (label='serve flags', e.g. 'lf=--model leaderfollowers')")
	}
	var err error
	if c.ServerBinary, err = serverconf.Executable(c.ServerBinary); err != nil {
		return c, fmt.Errorf("hostile: %w", err)
	}
	return c, nil
}

// Run runs c's attack against every configuration, each run on a fresh
// server, and prints a row per run to stdout.
func Run(ctx context.Context, c Config, stdout, _ io.Writer) error {
	c, err := c.Check()
	if err != nil {
		return err
	}
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		return err
	}
	var each func(srv *harness.Server) (string, error)
	switch c.Attack {
	case "amplify":
		var req []byte
		for k := range c.PerConn {
			req = codec.AppendRequest(req, &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: c.Size})
		}
		bound := models.ConnMemoryBound(models.Config{Codec: codec}, len(req)/c.PerConn)
		fmt.Fprintf(stdout, "%d attackers × %d requests for %d KiB, none read; bound %d KiB per connection (models.ConnMemoryBound)\n",
			c.Conns, c.PerConn, c.Size>>10, bound>>10)
		fmt.Fprintf(stdout, "%-14s %10s %12s %12s %10s %12s %12s %10s %12s\n", "config", "RSS before", "RSS attacked", "growth/conn", "bound ok", "victim p99", "p99 attacked", "server CPU", "RSS after")
		each = func(srv *harness.Server) (string, error) {
			return amplify(ctx, srv, codec, req, c.Conns, c.Rest, bound)
		}
	case "slowheader":
		fmt.Fprintf(stdout, "%d attackers each sending a request's first line, then one header byte a second\n", c.Conns)
		fmt.Fprintf(stdout, "%-14s %12s %12s %12s %12s %12s %14s\n", "config", "victim p99", "p99 attacked", "closed after", "timeouts", "truncated", "p99 after")
		each = func(srv *harness.Server) (string, error) { return slowHeader(ctx, srv, codec, c.Conns, c.During) }
	}
	for r := range c.Reps {
		for _, sc := range c.Configs {
			srv, err := serverconf.Start(c.ServerBinary, c.ServerCPUs, sc.Flags)
			if err != nil {
				return fmt.Errorf("hostile: %s run %d: %w", sc.Label, r, err)
			}
			line, err := each(srv)
			err = errors.Join(err, srv.Stop())
			if err != nil {
				return fmt.Errorf("hostile: %s run %d: %w", sc.Label, r, err)
			}
			fmt.Fprintf(stdout, "%-14s %s\n", sc.Label, line)
		}
	}
	return nil
}

// waitFor polls srv's snapshot every 100 ms until cond holds, and fails
// after limit, naming what it waited for, or when ctx ends.
func waitFor(ctx context.Context, srv *harness.Server, limit time.Duration, what string, cond func(*models.Snapshot) bool) (*models.Snapshot, error) {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := srv.Snapshot()
		if err != nil || cond(s) {
			return s, err
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("waited %v for %s", limit, what)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-tick.C:
		}
	}
}

// unattacked connects the victim to srv and measures it before an attack:
// its p99, and the server's snapshot then.
func unattacked(srv *harness.Server, codec wire.Codec) (victim net.Conn, p99 time.Duration, s0 *models.Snapshot, err error) {
	if victim, err = net.Dial("tcp", srv.Addr()); err != nil {
		return nil, 0, nil, err
	}
	if p99, err = victimP99(victim, codec); err == nil {
		s0, err = srv.Snapshot()
	}
	if err != nil {
		victim.Close()
		return nil, 0, nil, err
	}
	return victim, p99, s0, nil
}

// amplify runs the amplification attack: conns clients each pipeline req
// and never read, with a small receive buffer.
func amplify(ctx context.Context, srv *harness.Server, codec wire.Codec, req []byte, conns int, rest bool, bound int) (string, error) {
	victim, p99Before, s0, err := unattacked(srv, codec)
	if err != nil {
		return "", err
	}
	defer victim.Close()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	var attackers []net.Conn
	defer func() {
		for _, c := range attackers {
			c.Close()
		}
	}()
	for range conns {
		c, err := d.DialContext(ctx, "tcp", srv.Addr())
		if err != nil {
			return "", err
		}
		attackers = append(attackers, c)
		if _, err := c.Write(req); err != nil {
			return "", err
		}
	}
	// Wait until every attacker has had a response produced and the
	// server has stopped writing (the kernel's socket buffers are full):
	// the attack at rest, which it can hold for as long as the attackers
	// like. Until then the server is busy filling those buffers.
	var prev uint64
	if _, err := waitFor(ctx, srv, time.Minute, "every attacker to have a response produced and the server to stop writing", func(s *models.Snapshot) bool {
		done := s.Stats.Requests-s0.Stats.Requests >= uint64(conns) && (!rest || s.Stats.BytesWritten == prev)
		prev = s.Stats.BytesWritten
		return done
	}); err != nil {
		return "", err
	}
	sa, err := srv.Snapshot()
	if err != nil {
		return "", err
	}
	p99Attacked, err := victimP99(victim, codec)
	if err != nil {
		return "", err
	}
	s1, err := srv.Snapshot()
	if err != nil {
		return "", err
	}
	cpu := float64(s1.Rusage.UserNs+s1.Rusage.SystemNs-sa.Rusage.UserNs-sa.Rusage.SystemNs) / float64(s1.TimeUnixNs-sa.TimeUnixNs)
	for _, c := range attackers {
		c.Close()
	}
	attackers = nil
	s2, err := waitFor(ctx, srv, time.Minute, "the server to close the attackers' connections", func(s *models.Snapshot) bool {
		return s.Stats.ConnsClosed-s0.Stats.ConnsClosed >= uint64(conns)
	})
	if err != nil {
		return "", err
	}
	growth := (s1.RSSBytes - s0.RSSBytes) / int64(conns)
	return fmt.Sprintf("%8d Ki %10d Ki %10d Ki %10v %12v %12v %9.0f%% %10d Ki", s0.RSSBytes>>10, s1.RSSBytes>>10,
		growth>>10, growth <= int64(bound), p99Before.Round(time.Microsecond), p99Attacked.Round(time.Microsecond),
		100*cpu, s2.RSSBytes>>10), nil
}

// slowHeader runs the slow-header attack: conns clients each send a
// request line and then one more header byte every second.
func slowHeader(ctx context.Context, srv *harness.Server, codec wire.Codec, conns int, during time.Duration) (string, error) {
	victim, p99Before, s0, err := unattacked(srv, codec)
	if err != nil {
		return "", err
	}
	defer victim.Close()
	attackers := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range attackers {
			c.Close()
		}
	}()
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			return "", err
		}
		attackers = append(attackers, c)
		if _, err := io.WriteString(c, "GET /work?size=16 HTTP/1.1\r\nX-Slow: "); err != nil {
			return "", err
		}
	}
	// One more header byte a second on every attacker; stopped (deferred
	// last, run first) before the attackers are closed.
	defer serverconf.Every(time.Second, func() {
		for _, c := range attackers {
			c.Write([]byte("a")) // fails once the server closed it
		}
	})()
	// The victim is measured once the attack has gone on for during.
	timer := time.NewTimer(during)
	select {
	case <-ctx.Done():
		timer.Stop()
		return "", ctx.Err()
	case <-timer.C:
	}
	p99Attacked, err := victimP99(victim, codec)
	if err != nil {
		return "", err
	}
	s1, err := waitFor(ctx, srv, 10*time.Minute, "the server to close every attacker", func(s *models.Snapshot) bool {
		return s.Stats.ConnsClosed-s0.Stats.ConnsClosed >= uint64(conns)
	})
	if err != nil {
		return "", err
	}
	closedAfter := time.Since(start)
	p99After, err := victimP99(victim, codec)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%12v %12v %12v %12d %12d %14v", p99Before.Round(time.Microsecond), p99Attacked.Round(time.Microsecond),
		closedAfter.Round(100*time.Millisecond), s1.Stats.Errors[models.ErrHeaderTimeout]-s0.Stats.Errors[models.ErrHeaderTimeout],
		s1.Stats.Errors[models.ErrTruncated]-s0.Stats.Errors[models.ErrTruncated], p99After.Round(time.Microsecond)), nil
}

// victimFor is how long each victim measurement sends requests: long
// enough to span three of the slow-header attackers' one-second drips (a
// variable for tests).
var victimFor = 3 * time.Second

// victimTimeout bounds the wait for one victim response.
const victimTimeout = time.Minute

// victimP99 sends small requests one at a time on c for victimFor (and at
// least 2000) and returns the 99th percentile of their round trips.
func victimP99(c net.Conn, codec wire.Codec) (time.Duration, error) {
	var lat []time.Duration
	start := time.Now()
	buf := make([]byte, 0, 64<<10)
	var resp wire.Response
	defer c.SetDeadline(time.Time{})
	for i := 0; i < 2000 || time.Since(start) < victimFor; i++ {
		msg := codec.AppendRequest(nil, &wire.Request{ID: uint64(1<<40 + i), Op: wire.OpWork, Size: 16})
		t0 := time.Now()
		c.SetDeadline(t0.Add(victimTimeout))
		if _, err := c.Write(msg); err != nil {
			return 0, fmt.Errorf("victim: %w", err)
		}
		buf = buf[:0]
		for {
			if k, err := codec.DecodeResponse(buf, &resp); err != nil {
				return 0, fmt.Errorf("victim: %w", err)
			} else if k > 0 {
				break
			}
			if len(buf) == cap(buf) {
				return 0, fmt.Errorf("victim response larger than %d bytes", cap(buf))
			}
			k, err := c.Read(buf[len(buf):cap(buf)])
			if err != nil {
				return 0, fmt.Errorf("victim: %w", err)
			}
			buf = buf[:len(buf)+k]
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100], nil
}
