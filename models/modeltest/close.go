package modeltest

import (
	"errors"
	"os"
	"testing"
	"time"

	"concbench/wire"
)

func testConnectionClose(t *testing.T, e *env) {
	srv := e.startServer(t)
	tests := []struct {
		name string
		raw  []byte
	}{
		{name: "connection-close", raw: e.codec.AppendRequest(nil, &wire.Request{ID: 9, Op: wire.OpWork, Size: 5, Close: true})},
		{name: "http/1.0", raw: []byte("GET /work?size=5 HTTP/1.0\r\n\r\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, nil, srv.Addr().String(), e.codec)
			if err := c.sendRaw(tc.raw); err != nil {
				t.Fatal(err)
			}
			var resp wire.Response
			if err := c.recv(&resp); err != nil {
				t.Fatal(err)
			}
			if resp.Status != wire.StatusOK || len(resp.Payload) != 5 || !resp.Close {
				t.Fatalf("response: status %v, %d bytes, close %v", resp.Status, len(resp.Payload), resp.Close)
			}
			if err := c.expectEOF(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func testClose(t *testing.T, e *env) {
	srv := e.startServer(t)
	addr := srv.Addr().String()
	var clients []*client
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	open := func(raw []byte) {
		c, err := dial(addr, e.codec)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if raw != nil {
			if err := c.sendRaw(raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	full := e.codec.AppendRequest(nil, workRequest(3, 10))
	busy := e.codec.AppendRequest(nil, &wire.Request{ID: 4, Op: wire.OpWork, Block: 100 * time.Millisecond})
	for range 8 {
		open(nil) // idle
	}
	for range 8 {
		open(full[:len(full)/2]) // half a request
	}
	for range 2 {
		open(busy) // a thread is in the blocking work when Close comes
	}
	if !Settle(func() bool { return srv.Stats().ConnsAccepted == uint64(len(clients)) }) {
		t.Fatalf("server accepted %d of %d connections", srv.Stats().ConnsAccepted, len(clients))
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Every client sees its connection end.
	for i, c := range clients {
		c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 4096)
		for {
			_, err := c.c.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					break
				}
				t.Fatalf("client %d: connection still open after Close", i)
			}
		}
	}
	// The cleanup registered by startServer checks for leaks (Close again is a no-op).
}
