package threadperconn

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
)

// TestThreadCap: at the thread cap a new client is refused at once with
// 503 and a reason, counted as refused, instead of hanging in the backlog;
// once a connection ends, new clients are served again.
func TestThreadCap(t *testing.T) {
	cfg := modeltest.Config(t, "http", 2, service.Config{NsPerIter: 1})
	srv := modeltest.Start(t, func() (*Server, error) { return Start(cfg, Options{}) })
	addr := srv.Addr().String()
	get := "GET /work HTTP/1.1\r\nHost: x\r\n\r\n"
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	threads := func() uint64 { return srv.Stats().Counters["conn_threads"] }
	if !modeltest.Settle(func() bool { return threads() == 2 }) {
		t.Fatalf("%d connection threads, want 2", threads())
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, get)
	b, _ := io.ReadAll(c) // until the server closes (a reset after the answer ends it too)
	c.Close()
	if !strings.HasPrefix(string(b), "HTTP/1.1 503 ") || !strings.Contains(string(b), "all 2 connection threads are taken") {
		t.Errorf("a client at the cap got %q, want a 503 naming the cap", b)
	}
	if n := srv.Stats().Errors[models.ErrRefused]; n != 1 {
		t.Errorf("refused counted %d times, want 1", n)
	}

	held[0].Close()
	if !modeltest.Settle(func() bool { return threads() == 1 }) {
		t.Fatalf("%d connection threads after one client left, want 1", threads())
	}
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, get)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200 ") {
		t.Errorf("a client under the cap got %q, %v; want 200", line, err)
	}
	held[1].Close()
}
