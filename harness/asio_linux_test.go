package harness

import (
	"bufio"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/results"
	"concbench/wire"
)

// TestAsioAbsent checks that a missing asio server is a reason to give
// (make asio builds it), wrapped as a server that did not start, so
// that its configuration is unavailable, never failed.
func TestAsioAbsent(t *testing.T) {
	saved := asioPaths
	asioPaths = func() []string { return []string{filepath.Join(t.TempDir(), AsioBinary)} }
	t.Cleanup(func() { asioPaths = saved })
	_, err := startAsio(nil, 1, nil, "127.0.0.1", "http")
	if !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "make asio") {
		t.Errorf("startAsio without the server = %v, want ErrNotStarted saying make asio builds it", err)
	}
	if _, err := startAsio(nil, 1, nil, "127.0.0.1", "binary"); !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "HTTP dialect only") {
		t.Errorf("startAsio for the binary protocol = %v, want ErrNotStarted saying it speaks HTTP only", err)
	}
}

// needAsio skips t where the asio server is not built (make asio).
func needAsio(t *testing.T) {
	t.Helper()
	testenv.EndToEnd(t)
	if _, err := lookAsio(); err != nil {
		t.Skip(err)
	}
}

// TestAsioDialect speaks to the asio server directly: pipelined
// requests on one connection answered in order (/work with nginx's
// fixed body, another path 404), a request with a body, Connection:
// close honoured, and malformed input answered by a close.
func TestAsioDialect(t *testing.T) {
	needAsio(t)
	sp := newSpawner()
	t.Cleanup(sp.close)
	a, err := startAsio(sp, 2, nil, "127.0.0.1", "http")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.stop(); err != nil {
			t.Error(err)
		}
	})
	codec, _ := wire.New("http", wire.Limits{})
	var req []byte
	for _, r := range []wire.Request{{ID: 1, Op: wire.OpWork, CPU: time.Microsecond}, {ID: 2, Op: wire.OpWork, Payload: []byte("abc")}, {ID: 3, Op: wire.OpBalance}, {ID: 4, Op: wire.OpWork, Close: true}} {
		req = codec.AppendRequest(req, &r)
	}
	conn, err := net.Dial("tcp", a.address())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(conn) // the server closes after the last
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status wire.Status
		body   string
		close  bool
	}{
		{status: wire.StatusOK, body: NginxBody},
		{status: wire.StatusOK, body: NginxBody},
		{status: wire.StatusNoAccount}, // the dialect reads a 404 so
		{status: wire.StatusOK, body: NginxBody, close: true},
	}
	for i, w := range want {
		var resp wire.Response
		n, err := codec.DecodeResponse(all, &resp)
		if err != nil || n == 0 {
			t.Fatalf("response %d: %v (%d bytes left: %q)", i+1, err, len(all), all)
		}
		if resp.Status != w.status || string(resp.Payload) != w.body || resp.Close != w.close || resp.ID != 0 {
			t.Errorf("response %d: status %s, body %q, close %v, id %d; want %s, %q, %v, none", i+1, resp.Status, resp.Payload, resp.Close, resp.ID, w.status, w.body, w.close)
		}
		all = all[n:]
	}
	if len(all) > 0 {
		t.Errorf("%d bytes after the last response: %q", len(all), all)
	}
	for _, bad := range []string{"garbage\r\n\r\n", "GET /work HTTP/2.0\r\n\r\n", "GET /work HTTP/1.1\r\nno colon\r\n\r\n", "GET /work HTTP/1.1\r\nContent-Length: x\r\n\r\n"} {
		c, err := net.Dial("tcp", a.address())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, bad)
		if b, err := bufio.NewReader(c).ReadByte(); err != io.EOF {
			t.Errorf("%q: read %q, %v; want the connection closed, no answer", bad, b, err)
		}
		c.Close()
	}
	snap, err := a.read(edgeEnd)
	if err != nil {
		t.Fatal(err)
	}
	// The readiness probe's request and connection, and the test's.
	if s := snap.Stats; s.Requests != 1+4 || s.ConnsAccepted != 1+1+4 || len(s.PerThread) != 2 || snap.Rusage.UserNs+snap.Rusage.SystemNs <= 0 {
		t.Errorf("stats: %d requests, %d connections, %d threads, %d ns of CPU; want 5, 6, 2, some", s.Requests, s.ConnsAccepted, len(s.PerThread), snap.Rusage.UserNs+snap.Rusage.SystemNs)
	}
}

// TestAsioRun runs real asio for one short capacity point and one open
// point with two threads on the server CPUs, where it is built: every
// point measured (requests, CPU, context switches, requests per thread),
// nothing the generator sent lost or failed, no allocations claimed, and
// the server gone after the run.
func TestAsioRun(t *testing.T) {
	needAsio(t)
	w := DefaultWorkload()
	w.Conns, w.CPU = 8, "0"
	exp := shortRun([]Config{{Name: AsioModel, Model: AsioModel, Threads: 2}}, Workload{Workload: w})
	exp.Duration, exp.Seed = Duration(300*time.Millisecond), 5
	dir, sum := runTest(t, exp, Options{})
	if sum.Failed+sum.Unavailable > 0 {
		t.Fatalf("run: %s", sum)
	}
	_, pts, _ := readPoints(t, dir)
	if len(pts) != 2 {
		t.Fatalf("%d points, want a capacity point and an open one", len(pts))
	}
	for i := range pts {
		p := &pts[i]
		s := &p.Server
		if p.Status != results.StatusOK || !strings.HasPrefix(s.Foreign, "asio/") || s.Requests == 0 || s.CPUNsPerRequest <= 0 || p.ServerInfo.Threads != 2 {
			t.Errorf("%s: status %s, foreign %q, %d requests, %g ns CPU each, %d threads; want measured asio, 2 threads",
				p.Label(), p.Status, s.Foreign, s.Requests, s.CPUNsPerRequest, p.ServerInfo.Threads)
			continue
		}
		if l := p.Load; l == nil || l.Requests.Sent < 100 || l.Requests.Completed != l.Requests.Sent || l.Requests.OK != l.Requests.Sent || l.Requests.Failed != 0 || len(l.Errors) != 0 {
			t.Errorf("%s: load %+v, errors %v; want at least 100 requests sent, every one answered ok", p.Label(), p.Load.Requests, p.Load.Errors)
		}
		if v, ok := results.AllocsPerReq.Value(p); ok {
			t.Errorf("%s: %g allocations per request claimed for asio", p.Label(), v)
		}
		if b := s.Balance; b == nil || b.Threads != 2 || b.Requests == 0 {
			t.Errorf("%s: balance %+v; want 2 io_context threads serving", p.Label(), b)
		}
		if !exited(p.ServerInfo.PID) {
			t.Errorf("%s: the asio server %d still runs after the run", p.Label(), p.ServerInfo.PID)
		}
	}
}
