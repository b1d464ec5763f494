// Command amplify measures what the memory-amplification attack costs a
// concbench server: many clients each pipeline requests for large bodies
// and never read. For each configuration it starts a fresh server, measures
// a victim client's latency unattacked, opens the attacking connections,
// waits until every one has had a response produced and the server has
// stopped writing (the kernel's socket buffers are full: the attack at
// rest), reads the server's resident set size, its CPU use and the
// victim's latency under attack, closes the
// attackers and reads the RSS again once the server has closed them.
//
//	go build -o bin/concbench ./cmd/concbench
//	go run ./scripts/amplify -conns 200 \
//	    'lf=--model leaderfollowers' 'netpoll=--model netpoll'
//
// Each configuration is "label=serve flags"; runs alternate across them.
// The bound it compares with is models.ConnMemoryBound per connection, as
// the models package documents it, on top of the server's RSS before the
// attack.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"concbench/models"
	"concbench/wire"
)

func main() {
	bin := flag.String("bin", "bin/concbench", "the concbench binary")
	conns := flag.Int("conns", 200, "attacking connections")
	perConn := flag.Int("requests", 16, "requests each attacker pipelines")
	size := flag.Int("size", 1<<20, "response body size each request asks for")
	runs := flag.Int("runs", 1, "runs of each configuration")
	cpus := flag.String("server-cpus", "0", "CPUs the server is pinned to")
	rest := flag.Bool("rest", true, "measure once the server has stopped writing (the attack at rest); false: as soon as every attacker has had a response produced, while the kernel's socket buffers are still being filled")
	flag.Parse()
	var cfgs [][2]string
	for _, a := range flag.Args() {
		label, args, ok := strings.Cut(a, "=")
		if !ok {
			fatalf("configuration %q: want label=serve flags", a)
		}
		cfgs = append(cfgs, [2]string{label, args})
	}
	if len(cfgs) == 0 {
		fatalf("name at least one configuration (label=serve flags)")
	}
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		fatalf("%v", err)
	}
	var req []byte
	for k := range *perConn {
		req = codec.AppendRequest(req, &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: *size})
	}
	perConnBound := models.ConnMemoryBound(models.Config{Codec: codec}, len(req) / *perConn)
	fmt.Printf("%d attackers × %d requests for %d KiB, none read; bound %d KiB per connection (models.ConnMemoryBound)\n",
		*conns, *perConn, *size>>10, perConnBound>>10)
	fmt.Printf("%-14s %10s %12s %12s %10s %12s %12s %10s %12s\n", "config", "RSS before", "RSS attacked", "growth/conn", "bound ok", "victim p99", "p99 attacked", "server CPU", "RSS after")
	for r := range *runs {
		for _, c := range cfgs {
			res, err := run(*bin, *cpus, strings.Fields(c[1]), codec, req, *conns, *rest)
			if err != nil {
				fatalf("%s run %d: %v", c[0], r, err)
			}
			growth := (res.rssAttacked - res.rssBefore) / int64(*conns)
			fmt.Printf("%-14s %8d Ki %10d Ki %10d Ki %10v %12v %12v %9.0f%% %10d Ki\n", c[0], res.rssBefore>>10, res.rssAttacked>>10,
				growth>>10, growth <= int64(perConnBound), res.p99Before.Round(time.Microsecond), res.p99Attacked.Round(time.Microsecond),
				100*res.cpuAttacked.Seconds()/res.attackedFor.Seconds(), res.rssAfter>>10)
		}
	}
}

type result struct {
	rssBefore, rssAttacked, rssAfter int64
	p99Before, p99Attacked           time.Duration
	cpuAttacked, attackedFor         time.Duration // server CPU while the victim ran under attack, and that time
}

func run(bin, cpus string, flags []string, codec wire.Codec, req []byte, conns int, rest bool) (result, error) {
	var res result
	srv := exec.Command(bin, append([]string{"serve", "--cpus", cpus, "--protocol", "http"}, flags...)...)
	ctl, err := srv.StdinPipe()
	if err != nil {
		return res, err
	}
	out, err := srv.StdoutPipe()
	if err != nil {
		return res, err
	}
	var stderr strings.Builder
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		return res, err
	}
	defer func() {
		io.WriteString(ctl, "quit\n")
		ctl.Close()
		srv.Wait()
	}()
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	if !lines.Scan() {
		return res, fmt.Errorf("server printed no address: %s", stderr.String())
	}
	addr := lines.Text()
	snap := func() (models.Snapshot, error) {
		var s models.Snapshot
		if _, err := io.WriteString(ctl, "snapshot\n"); err != nil {
			return s, err
		}
		if !lines.Scan() {
			return s, fmt.Errorf("no snapshot: %s", stderr.String())
		}
		return s, json.Unmarshal(lines.Bytes(), &s)
	}
	victim, err := net.Dial("tcp", addr)
	if err != nil {
		return res, err
	}
	defer victim.Close()
	if res.p99Before, err = victimP99(victim, codec); err != nil {
		return res, err
	}
	s0, err := snap()
	if err != nil {
		return res, err
	}
	res.rssBefore = s0.RSSBytes
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	var attackers []net.Conn
	for range conns {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return res, err
		}
		attackers = append(attackers, c)
		if _, err := c.Write(req); err != nil {
			return res, err
		}
	}
	// Wait until every attacker has had a response produced and the
	// server has stopped writing (the kernel's socket buffers are full):
	// the attack at rest, which it can hold for as long as the attackers
	// like. Until then the server is busy filling those buffers.
	deadline := time.Now().Add(time.Minute)
	var prev uint64
	for {
		s, err := snap()
		if err != nil {
			return res, err
		}
		produced := s.Stats.Requests - s0.Stats.Requests
		if produced >= uint64(conns) && (!rest || s.Stats.BytesWritten == prev) {
			break
		}
		prev = s.Stats.BytesWritten
		if time.Now().After(deadline) {
			return res, fmt.Errorf("after a minute %d of %d attackers had a response produced and the server was still writing", produced, conns)
		}
		time.Sleep(200 * time.Millisecond)
	}
	sa, err := snap()
	if err != nil {
		return res, err
	}
	if res.p99Attacked, err = victimP99(victim, codec); err != nil {
		return res, err
	}
	s1, err := snap()
	if err != nil {
		return res, err
	}
	res.rssAttacked = s1.RSSBytes
	res.cpuAttacked = time.Duration(s1.Rusage.UserNs + s1.Rusage.SystemNs - sa.Rusage.UserNs - sa.Rusage.SystemNs)
	res.attackedFor = time.Duration(s1.TimeUnixNs - sa.TimeUnixNs)
	for _, c := range attackers {
		c.Close()
	}
	for {
		s, err := snap()
		if err != nil {
			return res, err
		}
		if s.Stats.ConnsClosed-s0.Stats.ConnsClosed >= uint64(conns) {
			res.rssAfter = s.RSSBytes
			break
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			return res, fmt.Errorf("the server closed %d of %d attackers' connections", s.Stats.ConnsClosed-s0.Stats.ConnsClosed, conns)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return res, nil
}

// victimP99 sends 2000 small requests one at a time on c and returns the
// 99th percentile of their round trips.
func victimP99(c net.Conn, codec wire.Codec) (time.Duration, error) {
	const n = 2000
	var lat []time.Duration
	buf := make([]byte, 0, 64<<10)
	var resp wire.Response
	for i := range n {
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
	return lat[n*99/100], nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "amplify: "+format+"\n", args...)
	os.Exit(1)
}
