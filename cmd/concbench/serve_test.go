package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"concbench/internal/cli"
	"concbench/internal/testenv"
	"concbench/models"
	"concbench/models/registry"
	"concbench/service"
	"concbench/wire"
)

// serveProc is a `concbench serve` run in-process with piped stdin/stdout.
type serveProc struct {
	addr   string
	ctl    io.WriteCloser
	lines  *bufio.Scanner
	done   chan error
	cancel context.CancelFunc
}

func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &serveProc{ctl: inW, lines: bufio.NewScanner(outR), done: make(chan error, 1), cancel: cancel}
	go func() {
		err := run(ctx, append([]string{"serve", "--ns-per-iter", "2"}, args...), inR, outW, io.Discard)
		outW.Close()
		p.done <- err
	}()
	if !p.lines.Scan() {
		cancel()
		t.Fatalf("serve printed no address; it returned %v", <-p.done)
	}
	p.addr = p.lines.Text()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		for p.lines.Scan() {
		}
		<-p.done
	})
	return p
}

// command sends one control command and decodes the one-line answer into v.
func (p *serveProc) command(t *testing.T, cmd string, v any) {
	t.Helper()
	if _, err := io.WriteString(p.ctl, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	if !p.lines.Scan() {
		t.Fatalf("no answer to %q", cmd)
	}
	if err := json.Unmarshal(p.lines.Bytes(), v); err != nil {
		t.Fatalf("answer to %q: %v: %s", cmd, err, p.lines.Bytes())
	}
}

// readResponses reads n responses from c, calling each with every one in
// order.
func readResponses(t *testing.T, c net.Conn, codec wire.Codec, n int, each func(i int, resp *wire.Response)) {
	t.Helper()
	var in []byte
	buf := make([]byte, 4096)
	var resp wire.Response
	for i := 0; i < n; {
		k, err := codec.DecodeResponse(in, &resp)
		if err != nil {
			t.Fatal(err)
		}
		if k > 0 {
			each(i, &resp)
			in = in[k:]
			i++
			continue
		}
		m, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, buf[:m]...)
	}
}

func TestServeControlChannel(t *testing.T) {
	testenv.EndToEnd(t)
	for _, m := range registry.Models {
		model := m.Name
		for _, proto := range wire.Protocols {
			t.Run(model+"/"+proto, func(t *testing.T) {
				args := []string{"--model", model, "--protocol", proto}
				if m.FrontEnd {
					back := startServe(t, "--model", "netpoll", "--protocol", "binary")
					args = append(args, "--backend", back.addr)
				}
				p := startServe(t, args...)
				codec, c := dialServe(t, p, proto)
				const n = 10
				var out []byte
				reqs := make([]wire.Request, n)
				for i := range reqs {
					reqs[i] = wire.Request{ID: uint64(i + 1), Op: wire.OpWork, Size: 32}
					out = codec.AppendRequest(out, &reqs[i])
				}
				if _, err := c.Write(out); err != nil {
					t.Fatal(err)
				}
				readResponses(t, c, codec, n, func(i int, resp *wire.Response) {
					if err := wire.Verify(&reqs[i], resp); err != nil {
						t.Fatal(err)
					}
				})

				var snap models.Snapshot
				p.command(t, "snapshot", &snap)
				if snap.Stats.Model != model || snap.Stats.Requests != n {
					t.Errorf("snapshot stats: model %q, %d requests; want %q, %d", snap.Stats.Model, snap.Stats.Requests, model, n)
				}
				if snap.Rusage.UserNs+snap.Rusage.SystemNs <= 0 || snap.Alloc.Objects == 0 || snap.RSSBytes <= 0 {
					t.Errorf("process counters missing: %+v", snap)
				}
				if snap.Tasks != nil {
					t.Error("plain snapshot carries per-task sums")
				}
				p.command(t, "snapshot tasks", &snap)
				if snap.Tasks == nil || snap.Tasks.Threads < 1 {
					t.Errorf("snapshot tasks: %+v", snap.Tasks)
				}
				var info models.Info
				p.command(t, "info", &info)
				if info.Model != model || info.Protocol != proto || info.Addr != p.addr || info.NsPerIter != 2 || info.GOMAXPROCS < 1 {
					t.Errorf("info: %+v", info)
				}
				var bad map[string]string
				p.command(t, "frobnicate", &bad)
				if !strings.Contains(bad["error"], "accepted: snapshot") {
					t.Errorf("unknown command answered %v", bad)
				}
				io.WriteString(p.ctl, "quit\n")
				if err := <-p.done; err != nil {
					t.Fatalf("serve after quit: %v", err)
				}
				p.done <- nil // for the cleanup
			})
		}
	}
}

// TestServeTrace checks --trace and the control commands trace and trace
// reset: every request served is recorded once, with its id, and reset
// empties the trace; without --trace the command is refused.
func TestServeTrace(t *testing.T) {
	testenv.EndToEnd(t)
	for _, tc := range []struct {
		name  string
		trace string
	}{{name: "on", trace: "100"}, {name: "off", trace: "0"}} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, "--model", "leaderfollowers", "--threads", "1", "--protocol", "binary", "--trace", tc.trace)
			codec, c := dialServe(t, p, "binary")
			const n = 5
			var out []byte
			for i := range n {
				out = codec.AppendRequest(out, &wire.Request{ID: uint64(100 + i), Op: wire.OpWork, CPU: 1000})
			}
			if _, err := c.Write(out); err != nil {
				t.Fatal(err)
			}
			readResponses(t, c, codec, n, func(int, *wire.Response) {})
			var dump service.TraceDump
			if tc.trace == "0" {
				var e map[string]string
				p.command(t, "trace", &e)
				if !strings.Contains(e["error"], "without --trace") {
					t.Errorf("trace without --trace answered %v", e)
				}
				return
			}
			p.command(t, "trace", &dump)
			if len(dump.Records) != n || dump.Dropped != 0 || dump.Capacity != 100 {
				t.Fatalf("trace: %d records, %d dropped, capacity %d; want %d, 0, 100", len(dump.Records), dump.Dropped, dump.Capacity, n)
			}
			for i, r := range dump.Records {
				if r[0] != int64(100+i) || r[2] < r[1] || r[3] <= 0 {
					t.Errorf("record %d: %v", i, r)
				}
			}
			var ok map[string]bool
			p.command(t, "trace reset", &ok)
			p.command(t, "trace", &dump)
			if !ok["reset"] || len(dump.Records) != 0 {
				t.Errorf("after reset (%v): %d records", ok, len(dump.Records))
			}
		})
	}
}

func TestServeStopsOnContextCancel(t *testing.T) {
	p := startServe(t, "--model", "netpoll")
	p.cancel()
	if err := <-p.done; err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	p.done <- nil
}

// TestServeWildcardAddress: every model listens on IPv4 only for an IPv4
// wildcard (netpoll included, where Go's "tcp" would listen dual-stack),
// and serve warns that the server is reachable from other hosts.
func TestServeWildcardAddress(t *testing.T) {
	for _, model := range []string{"netpoll", "threadperconn"} {
		t.Run(model, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"serve", "--ns-per-iter", "2", "--model", model, "--addr", "0.0.0.0:0"},
				strings.NewReader("quit\n"), &stdout, &stderr)
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, stderr.String())
			}
			if addr, _, _ := strings.Cut(stdout.String(), "\n"); !strings.HasPrefix(addr, "0.0.0.0:") {
				t.Errorf("bound address %q, want 0.0.0.0:<port> (IPv4 only)", addr)
			}
			if !strings.Contains(stderr.String(), "warning: listening on every interface") {
				t.Errorf("no warning about the wildcard address on stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestServeMaxConns checks that --max-conns reaches the model: with a cap
// of one, a second client is answered 503 with the reason while the first
// is served, and info reports the cap.
func TestServeMaxConns(t *testing.T) {
	testenv.EndToEnd(t)
	p := startServe(t, "--model", "netpoll", "--protocol", "http", "--max-conns", "1")
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	req := wire.Request{ID: 1, Op: wire.OpWork, Size: 8}
	if _, err := first.Write(codec.AppendRequest(nil, &req)); err != nil {
		t.Fatal(err)
	}
	readResponses(t, first, codec, 1, func(_ int, resp *wire.Response) {
		if err := wire.Verify(&req, resp); err != nil {
			t.Fatal(err)
		}
	})
	second, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	readResponses(t, second, codec, 1, func(_ int, resp *wire.Response) {
		if resp.Status != wire.StatusUnavailable || !strings.Contains(string(resp.Payload), "all 1 connections are taken (--max-conns)") {
			t.Fatalf("second client: status %v, payload %q; want unavailable naming --max-conns", resp.Status, resp.Payload)
		}
	})
	var info models.Info
	p.command(t, "info", &info)
	if info.MaxConns != 1 {
		t.Errorf("info: max_conns %d, want 1", info.MaxConns)
	}
}

func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no model", args: nil, want: "--model is required (accepted: leaderfollowers, halfsynchalfreactive, activeobject, proactor, threadperconn, netpoll"},
		{name: "other model's flag", args: []string{"--model", "netpoll", "--promotion", "fifo"}, want: "flag --promotion applies to model leaderfollowers, not netpoll"},
		{name: "bad promotion", args: []string{"--model", "leaderfollowers", "--promotion", "up"}, want: `unknown promotion order "up" (accepted: lifo, fifo, priority, os, os-vacant)`},
		{name: "nice count", args: []string{"--model", "leaderfollowers", "--promotion", "priority", "--nice", "1,2"}, want: "one nice value per thread: got 2 for 4 threads"},
		{name: "queue size", args: []string{"--model", "halfsynchalfreactive", "--hshr-queue-size", "-1"}, want: "queue size -1 out of range"},
		{name: "unknown model", args: []string{"--model", "fastest"}, want: `unknown model "fastest" (accepted:`},
		{name: "bad protocol", args: []string{"--model", "netpoll", "--protocol", "ftp"}, want: `unknown protocol "ftp" (accepted: binary, http)`},
		{name: "threads out of range", args: []string{"--model", "netpoll", "--threads", "99999"}, want: "threads 99999 out of range"},
		{name: "gomaxprocs", args: []string{"--model", "netpoll", "--gomaxprocs", "-1"}, want: "--gomaxprocs -1 out of range"},
		{name: "header timeout", args: []string{"--model", "netpoll", "--header-timeout", "-1s"}, want: "--header-timeout -1s is negative"},
		{name: "max conns", args: []string{"--model", "netpoll", "--max-conns", "-1"}, want: "max conns -1 out of range"},
		{name: "cpus", args: []string{"--model", "netpoll", "--cpus", "x"}, want: `"x" is not a CPU number`},
		{name: "max payload", args: []string{"--model", "netpoll", "--max-payload", "-5"}, want: "max payload -5 out of range"},
		{name: "accounts", args: []string{"--model", "netpoll", "--accounts", "-1"}, want: "accounts -1 out of range"},
		{name: "backlog", args: []string{"--model", "threadperconn", "--backlog", "-1"}, want: "backlog -1 out of range"},
		{name: "cpus offline", args: []string{"--model", "netpoll", "--cpus", "1000"}, want: "not online"},
		{name: "bad address", args: []string{"--model", "threadperconn", "--addr", "256.0.0.1:0"}, want: "256.0.0.1"},
		{name: "stray argument", args: []string{"--model", "netpoll", "extra"}, want: `unexpected argument "extra"`},
		{name: "trace", args: []string{"--model", "netpoll", "--trace", "-1"}, want: "--trace -1 out of range"},
		{name: "unknown flag", args: []string{"--modle", "netpoll"}, want: "flag provided but not defined: -modle (run 'concbench help serve'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), append([]string{"serve"}, tc.args...), strings.NewReader(""), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("error %v (stderr %q), want one containing %q", err, stderr.String(), tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"help"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "serve") {
		t.Errorf("help: %q", out.String())
	}
	checkHelp(t, "serve", "snapshot tasks", "threadperconn")
	if err := run(context.Background(), []string{"frob"}, nil, io.Discard, io.Discard); err == nil || cli.ExitCode(err) != 1 {
		t.Errorf("unknown command: %v", err)
	}
}

// dialServe returns the codec of proto and a connection to p, closed
// when the test ends.
func dialServe(t *testing.T, p *serveProc, proto string) (wire.Codec, net.Conn) {
	t.Helper()
	codec, err := wire.New(proto, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return codec, c
}
