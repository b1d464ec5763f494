package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/models"
	"concbench/wire"
)

const hostileUsage = `usage: concbench hostile [--attack amplify|slowheader] [flags] label='serve flags' ...

Measures what hostile clients cost a concbench server, configuration by
configuration (each given as label='serve flags'; runs alternate across
them, each on a fresh server pinned to --server-cpus, over HTTP).

amplify: --conns clients each pipeline --requests requests for --size
byte bodies and never read. It measures a victim client's p99 unattacked,
opens the attacking connections, waits until every one has had a response
produced and the server has stopped writing (the kernel's socket buffers
full: the attack at rest; --rest=false: as soon as every attacker has had
a response produced), reads the server's resident set size, its CPU use
and the victim's p99 under attack, closes the attackers and reads the RSS
again once the server has closed them. The bound it compares the growth
per connection with is models.ConnMemoryBound.

slowheader: --conns clients each send the start of a request and then one
more header byte every second, never finishing it. It measures the
victim's p99 unattacked, --during after the attackers connected, and
after the server has closed every attacker for its header timeout (serve
--header-timeout: give it in the configuration's flags), how long that
took and how many the server counted as header_timeout and truncated.

The victim sends one small request at a time for 3 s (at least 2000
requests); a victim that gets no answer within a minute fails the run.

  concbench hostile --attack amplify --conns 200 'lf=--model leaderfollowers' 'netpoll=--model netpoll'
  concbench hostile --attack slowheader --conns 2000 'lf=--model leaderfollowers --header-timeout 5s'

Flags:
`

// hostileFlags are the hostile command's settings.
type hostileFlags struct {
	bin, attack, cpus    string
	conns, perConn, size int
	runs                 int
	rest                 bool
	during               time.Duration
	cfgs                 []serveConfig
}

func runHostile(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	f, err := parseHostileFlags(args, stdout)
	if err != nil {
		return err
	}
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		return err
	}
	var each func(srv *harness.Server) (string, error)
	switch f.attack {
	case "amplify":
		var req []byte
		for k := range f.perConn {
			req = codec.AppendRequest(req, &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: f.size})
		}
		bound := models.ConnMemoryBound(models.Config{Codec: codec}, len(req)/f.perConn)
		fmt.Fprintf(stdout, "%d attackers × %d requests for %d KiB, none read; bound %d KiB per connection (models.ConnMemoryBound)\n",
			f.conns, f.perConn, f.size>>10, bound>>10)
		fmt.Fprintf(stdout, "%-14s %10s %12s %12s %10s %12s %12s %10s %12s\n", "config", "RSS before", "RSS attacked", "growth/conn", "bound ok", "victim p99", "p99 attacked", "server CPU", "RSS after")
		each = func(srv *harness.Server) (string, error) {
			return amplify(ctx, srv, codec, req, f.conns, f.rest, bound)
		}
	case "slowheader":
		fmt.Fprintf(stdout, "%d attackers each sending a request's first line, then one header byte a second\n", f.conns)
		fmt.Fprintf(stdout, "%-14s %12s %12s %12s %12s %12s %14s\n", "config", "victim p99", "p99 attacked", "closed after", "timeouts", "truncated", "p99 after")
		each = func(srv *harness.Server) (string, error) { return slowHeader(ctx, srv, codec, f.conns, f.during) }
	}
	for r := range f.runs {
		for _, c := range f.cfgs {
			srv, err := startConfigServer(f.bin, f.cpus, c.flags)
			if err != nil {
				return fmt.Errorf("hostile: %s run %d: %w", c.label, r, err)
			}
			line, err := each(srv)
			err = errors.Join(err, srv.Stop())
			if err != nil {
				return fmt.Errorf("hostile: %s run %d: %w", c.label, r, err)
			}
			fmt.Fprintf(stdout, "%-14s %s\n", c.label, line)
		}
	}
	return nil
}

// parseHostileFlags reads and checks the command line.
func parseHostileFlags(args []string, stdout io.Writer) (*hostileFlags, error) {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	f := &hostileFlags{}
	fs.StringVar(&f.bin, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&f.attack, "attack", "amplify", "amplify or slowheader")
	fs.IntVar(&f.conns, "conns", 200, "attacking connections")
	fs.IntVar(&f.perConn, "requests", 16, "amplify: requests each attacker pipelines")
	fs.IntVar(&f.size, "size", 1<<20, "amplify: response body bytes each request asks for")
	fs.IntVar(&f.runs, "runs", 1, "runs of each configuration")
	fs.StringVar(&f.cpus, "server-cpus", "0", "CPUs the server is pinned to")
	fs.BoolVar(&f.rest, "rest", true, "amplify: measure once the server has stopped writing (the attack at rest); false: as soon as every attacker has had a response produced, while the kernel's socket buffers are still being filled")
	fs.DurationVar(&f.during, "during", 2*time.Second, "slowheader: how long after the attackers connected the victim is measured under attack")
	if err := cli.Parse(fs, args, stdout, hostileUsage); err != nil {
		return nil, err
	}
	switch {
	case f.attack != "amplify" && f.attack != "slowheader":
		return nil, fmt.Errorf("hostile: --attack %q: want amplify or slowheader", f.attack)
	case f.conns < 1 || f.perConn < 1 || f.runs < 1:
		return nil, fmt.Errorf("hostile: --conns %d, --requests %d, --runs %d: want 1 or more each", f.conns, f.perConn, f.runs)
	case f.size < 0:
		return nil, fmt.Errorf("hostile: --size %d: want 0 or more bytes", f.size)
	case f.during < 0:
		return nil, fmt.Errorf("hostile: --during %v: want 0 or more", f.during)
	}
	var err error
	if f.cfgs, err = parseServeConfigs(fs.Args()); err != nil {
		return nil, fmt.Errorf("hostile: %w", err)
	}
	if len(f.cfgs) == 0 {
		return nil, errors.New("hostile: name at least one configuration (label='serve flags', e.g. 'lf=--model leaderfollowers')")
	}
	if f.bin, err = executable(f.bin); err != nil {
		return nil, fmt.Errorf("hostile: %w", err)
	}
	return f, nil
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
	defer every(time.Second, func() {
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
