// Command hostile measures what hostile clients cost a concbench server,
// model by model. Two attacks (-attack):
//
// amplify: many clients each pipeline requests for large bodies and never
// read. For each configuration it starts a fresh server, measures a victim
// client's latency unattacked, opens the attacking connections, waits
// until every one has had a response produced and the server has stopped
// writing (the kernel's socket buffers are full: the attack at rest),
// reads the server's resident set size, its CPU use and the victim's
// latency under attack, closes the attackers and reads the RSS again once
// the server has closed them. The bound it compares with is
// models.ConnMemoryBound per connection, on top of the RSS before.
//
// slowheader: many clients each send the start of a request and then one
// more header byte every second, never finishing it. It measures the
// victim's latency unattacked, during the attack, and after the server
// has closed every attacker for its header timeout (serve
// --header-timeout; give it in the configuration's flags), and how long
// that took and how many the server counted as header_timeout.
//
//	go build -o bin/concbench ./cmd/concbench
//	go run ./scripts/hostile -attack amplify -conns 200 \
//	    'lf=--model leaderfollowers' 'netpoll=--model netpoll'
//	go run ./scripts/hostile -attack slowheader -conns 2000 \
//	    'lf=--model leaderfollowers --header-timeout 5s'
//
// Each configuration is "label=serve flags"; runs alternate across them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

	"concbench/models"
	"concbench/scripts/internal/serveproc"
	"concbench/wire"
)

func main() {
	bin := flag.String("bin", "bin/concbench", "the concbench binary")
	attack := flag.String("attack", "amplify", "amplify or slowheader")
	conns := flag.Int("conns", 200, "attacking connections")
	perConn := flag.Int("requests", 16, "amplify: requests each attacker pipelines")
	size := flag.Int("size", 1<<20, "amplify: response body size each request asks for")
	runs := flag.Int("runs", 1, "runs of each configuration")
	cpus := flag.String("server-cpus", "0", "CPUs the server is pinned to")
	rest := flag.Bool("rest", true, "amplify: measure once the server has stopped writing (the attack at rest); false: as soon as every attacker has had a response produced, while the kernel's socket buffers are still being filled")
	during := flag.Duration("during", 2*time.Second, "slowheader: how long after the attackers connected the victim is measured under attack")
	flag.Parse()
	cfgs, err := serveproc.ParseConfigs(flag.Args())
	if err != nil {
		fatalf("%v", err)
	}
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		fatalf("%v", err)
	}
	var each func(srv *serveproc.Server) (string, error)
	switch *attack {
	case "amplify":
		var req []byte
		for k := range *perConn {
			req = codec.AppendRequest(req, &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: *size})
		}
		bound := models.ConnMemoryBound(models.Config{Codec: codec}, len(req) / *perConn)
		fmt.Printf("%d attackers × %d requests for %d KiB, none read; bound %d KiB per connection (models.ConnMemoryBound)\n",
			*conns, *perConn, *size>>10, bound>>10)
		fmt.Printf("%-14s %10s %12s %12s %10s %12s %12s %10s %12s\n", "config", "RSS before", "RSS attacked", "growth/conn", "bound ok", "victim p99", "p99 attacked", "server CPU", "RSS after")
		each = func(srv *serveproc.Server) (string, error) { return amplify(srv, codec, req, *conns, *rest, bound) }
	case "slowheader":
		fmt.Printf("%d attackers each sending a request's first line, then one header byte a second\n", *conns)
		fmt.Printf("%-14s %12s %12s %12s %12s %12s %14s\n", "config", "victim p99", "p99 attacked", "closed after", "timeouts", "truncated", "p99 after")
		each = func(srv *serveproc.Server) (string, error) { return slowHeader(srv, codec, *conns, *during) }
	default:
		fatalf("-attack %q: want amplify or slowheader", *attack)
	}
	for r := range *runs {
		for _, c := range cfgs {
			srv, err := serveproc.Start(*bin, *cpus, c.Flags)
			if err != nil {
				fatalf("%s run %d: %v", c.Label, r, err)
			}
			line, err := each(srv)
			srv.Stop()
			if err != nil {
				fatalf("%s run %d: %v", c.Label, r, err)
			}
			fmt.Printf("%-14s %s\n", c.Label, line)
		}
	}
}

// unattacked connects the victim to srv and measures it before an attack:
// its p99, and the server's snapshot then.
func unattacked(srv *serveproc.Server, codec wire.Codec) (victim net.Conn, p99 time.Duration, s0 models.Snapshot, err error) {
	if victim, err = net.Dial("tcp", srv.Addr); err != nil {
		return nil, 0, s0, err
	}
	if p99, err = victimP99(victim, codec); err == nil {
		s0, err = srv.Snap()
	}
	if err != nil {
		victim.Close()
		return nil, 0, s0, err
	}
	return victim, p99, s0, nil
}

func amplify(srv *serveproc.Server, codec wire.Codec, req []byte, conns int, rest bool, bound int) (string, error) {
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
		c, err := d.Dial("tcp", srv.Addr)
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
	if _, err := srv.WaitFor(time.Minute, "every attacker to have a response produced and the server to stop writing", func(s models.Snapshot) bool {
		done := s.Stats.Requests-s0.Stats.Requests >= uint64(conns) && (!rest || s.Stats.BytesWritten == prev)
		prev = s.Stats.BytesWritten
		return done
	}); err != nil {
		return "", err
	}
	sa, err := srv.Snap()
	if err != nil {
		return "", err
	}
	p99Attacked, err := victimP99(victim, codec)
	if err != nil {
		return "", err
	}
	s1, err := srv.Snap()
	if err != nil {
		return "", err
	}
	cpu := float64(s1.Rusage.UserNs+s1.Rusage.SystemNs-sa.Rusage.UserNs-sa.Rusage.SystemNs) / float64(s1.TimeUnixNs-sa.TimeUnixNs)
	for _, c := range attackers {
		c.Close()
	}
	attackers = nil
	s2, err := srv.WaitFor(time.Minute, "the server to close the attackers' connections", func(s models.Snapshot) bool {
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
func slowHeader(srv *serveproc.Server, codec wire.Codec, conns int, during time.Duration) (string, error) {
	victim, p99Before, s0, err := unattacked(srv, codec)
	if err != nil {
		return "", err
	}
	defer victim.Close()
	attackers := make([]net.Conn, 0, conns)
	stop := make(chan struct{})
	dripped := make(chan struct{})
	defer func() {
		close(stop)
		<-dripped
		for _, c := range attackers {
			c.Close()
		}
	}()
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			return "", err
		}
		attackers = append(attackers, c)
		if _, err := io.WriteString(c, "GET /work?size=16 HTTP/1.1\r\nX-Slow: "); err != nil {
			return "", err
		}
	}
	go func() { // one more header byte a second on every attacker
		defer close(dripped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, c := range attackers {
					c.Write([]byte("a")) // fails once the server closed it
				}
			}
		}
	}()
	time.Sleep(during)
	p99Attacked, err := victimP99(victim, codec)
	if err != nil {
		return "", err
	}
	s1, err := srv.WaitFor(10*time.Minute, "the server to close every attacker", func(s models.Snapshot) bool {
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
// enough to span three of the slow-header attackers' one-second drips.
const victimFor = 3 * time.Second

// victimP99 sends small requests one at a time on c for victimFor (and at
// least 2000) and returns the 99th percentile of their round trips.
func victimP99(c net.Conn, codec wire.Codec) (time.Duration, error) {
	var lat []time.Duration
	start := time.Now()
	buf := make([]byte, 0, 64<<10)
	var resp wire.Response
	for i := 0; i < 2000 || time.Since(start) < victimFor; i++ {
		msg := codec.AppendRequest(nil, &wire.Request{ID: uint64(1<<40 + i), Op: wire.OpWork, Size: 16})
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			return 0, err
		}
		buf = buf[:0]
		for {
			if k, err := codec.DecodeResponse(buf, &resp); err != nil {
				return 0, err
			} else if k > 0 {
				break
			}
			if len(buf) == cap(buf) {
				return 0, fmt.Errorf("victim response larger than %d bytes", cap(buf))
			}
			k, err := c.Read(buf[len(buf):cap(buf)])
			if err != nil {
				return 0, err
			}
			buf = buf[:len(buf)+k]
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100], nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hostile: "+format+"\n", args...)
	os.Exit(1)
}
