package modeltest

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"concbench/models"
	"concbench/service"
	"concbench/wire"
)

// client is a minimal synchronous client over one connection.
type client struct {
	c     *net.TCPConn
	codec wire.Codec
	out   []byte
	in    []byte
	off   int
	last  int // where the response recv decoded last begins in in
}

func dial(addr string, codec wire.Codec) (*client, error) { return dialVia(&net.Dialer{}, addr, codec) }

// dialVia is dial through d.
func dialVia(d *net.Dialer, addr string, codec wire.Codec) (*client, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	// A liveness bound, not a timing assertion: a server that stops
	// answering fails the test with the request it was waiting for, instead
	// of hanging the suite until go test's timeout with no useful output.
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	return &client{c: c.(*net.TCPConn), codec: codec, in: make([]byte, 0, 64<<10)}, nil
}

// send encodes reqs back to back and writes them in one write.
func (c *client) send(reqs ...*wire.Request) error {
	c.out = c.out[:0]
	for _, r := range reqs {
		c.out = c.codec.AppendRequest(c.out, r)
	}
	_, err := c.c.Write(c.out)
	return err
}

// sendRaw writes raw bytes.
func (c *client) sendRaw(b []byte) error {
	_, err := c.c.Write(b)
	return err
}

// recv reads until one response is decoded into resp. resp.Payload aliases
// the client's buffer until the next recv.
func (c *client) recv(resp *wire.Response) error {
	for {
		if c.off < len(c.in) {
			n, err := c.codec.DecodeResponse(c.in[c.off:], resp)
			if err != nil {
				return fmt.Errorf("decode response: %w", err)
			}
			if n > 0 {
				c.last = c.off
				c.off += n
				return nil
			}
		}
		if c.off > 0 {
			n := copy(c.in[:cap(c.in)], c.in[c.off:])
			c.in = c.in[:n]
			c.off = 0
		}
		if len(c.in) == cap(c.in) {
			nb := make([]byte, len(c.in), 2*cap(c.in))
			copy(nb, c.in)
			c.in = nb
		}
		n, err := c.c.Read(c.in[len(c.in):cap(c.in)])
		c.in = c.in[:len(c.in)+n]
		if n == 0 && err != nil {
			if err == io.EOF && len(c.in) > c.off {
				return fmt.Errorf("connection closed with %d bytes of an incomplete response", len(c.in)-c.off)
			}
			return err
		}
	}
}

// roundTrip sends reqs pipelined and verifies every response, in order.
func (c *client) roundTrip(reqs []*wire.Request) error {
	if err := c.send(reqs...); err != nil {
		return err
	}
	var resp wire.Response
	for _, r := range reqs {
		if err := c.recvChecked(r, &resp); err != nil {
			return err
		}
	}
	return nil
}

// recvChecked reads the next response into resp and checks it against
// req, the request it must answer (checkResponse): the suite's read of
// one response to a request it knows.
func (c *client) recvChecked(req *wire.Request, resp *wire.Response) error {
	if err := c.recv(resp); err != nil {
		return fmt.Errorf("request %d: %w", req.ID, err)
	}
	return checkResponse(req, resp)
}

// checkResponse is wire.Verify plus the expectation of a success status and
// of a checksum (both of this suite's servers' protocols carry one).
func checkResponse(req *wire.Request, resp *wire.Response) error {
	if !resp.HasChecksum {
		return fmt.Errorf("request %d: response carries no checksum", req.ID)
	}
	if req.Op == wire.OpWork && resp.Status != wire.StatusOK {
		return fmt.Errorf("request %d: status %v", req.ID, resp.Status)
	}
	return wire.Verify(req, resp)
}

// expectEOF reads until the server closes the connection; anything other
// than a clean end of stream or a reset within the deadline is an error.
func (c *client) expectEOF() error {
	c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 4096)
	for {
		n, err := c.c.Read(buf)
		if err != nil {
			if err == io.EOF || isReset(err) {
				return nil
			}
			return fmt.Errorf("waiting for the server to close: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("unexpected %d bytes after the last response: %q", n, buf[:min(n, 64)])
		}
	}
}

func (c *client) close() { c.c.Close() }

// Client is a synchronous client over one connection, for a model's own
// tests beside the suite: requests are written as given, responses read
// and decoded one at a time. Connections have the suite's liveness bound
// (two minutes), so a server that stops answering fails the test instead
// of hanging it.
type Client struct{ c *client }

// Dial connects a Client to addr speaking codec's protocol.
func Dial(addr string, codec wire.Codec) (*Client, error) {
	c, err := dial(addr, codec)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// Send encodes reqs back to back and writes them in one write (pipelined).
func (c *Client) Send(reqs ...*wire.Request) error { return c.c.send(reqs...) }

// RecvRaw is Recv that also returns the response as the server encoded
// it, valid until the next Recv.
func (c *Client) RecvRaw(resp *wire.Response) ([]byte, error) {
	if err := c.c.recv(resp); err != nil {
		return nil, err
	}
	return c.c.in[c.c.last:c.c.off], nil
}

// SendRaw writes b as it is: part of a request, or bytes of no protocol.
func (c *Client) SendRaw(b []byte) error { return c.c.sendRaw(b) }

// Recv reads the next response into resp. resp.Payload aliases the
// client's buffer until the next Recv.
func (c *Client) Recv(resp *wire.Response) error { return c.c.recv(resp) }

// Close closes the connection.
func (c *Client) Close() error { return c.c.c.Close() }

// Conn returns the client's connection, for a test that half-closes or
// resets it.
func (c *Client) Conn() *net.TCPConn { return c.c.c }

// Expect reads one response per request of reqs, in order, and checks each
// against its request (wire.Verify): status OK and a checksum, whatever
// the operation — a stricter check than the suite's own, for a model's
// tests whose every request must succeed.
func (c *Client) Expect(reqs ...*wire.Request) error {
	var resp wire.Response
	for i, r := range reqs {
		if err := c.c.recv(&resp); err != nil {
			return fmt.Errorf("response %d of %d: %w", i+1, len(reqs), err)
		}
		if resp.Status != wire.StatusOK {
			return fmt.Errorf("request %d: status %v", r.ID, resp.Status)
		}
		if err := checkResponse(r, &resp); err != nil {
			return fmt.Errorf("response %d of %d (in request order): %w", i+1, len(reqs), err)
		}
	}
	return nil
}

// RoundTrip sends reqs pipelined (Send) and Expects their responses.
func (c *Client) RoundTrip(reqs ...*wire.Request) error {
	if err := c.Send(reqs...); err != nil {
		return err
	}
	return c.Expect(reqs...)
}

// Connect is Dial for a test's own goroutine, through d (nil: a plain
// net.Dialer; SmallReceiveBuffer's, say): a failed dial fails t, and the
// connection is closed when t ends.
func Connect(t testing.TB, d *net.Dialer, addr string, codec wire.Codec) *Client {
	t.Helper()
	return &Client{c: connect(t, d, addr, codec)}
}

// connect is Connect for the suite's own tests, whose clients are the
// unexported client: dialled through d (nil: a plain net.Dialer), a failed
// dial failing t, closed when t ends.
func connect(t testing.TB, d *net.Dialer, addr string, codec wire.Codec) *client {
	t.Helper()
	if d == nil {
		d = &net.Dialer{}
	}
	c, err := dialVia(d, addr, codec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	return c
}

// Config returns the configuration of a server for a model's own tests:
// listening on 127.0.0.1:0, threads threads (0: the model's default),
// speaking protocol with the default limits, serving a new service of
// scfg (its NsPerIter set spares the tests the calibration).
func Config(t testing.TB, protocol string, threads int, scfg service.Config) models.Config {
	t.Helper()
	return models.Config{Addr: "127.0.0.1:0", Threads: threads, Codec: Codec(t, protocol, wire.Limits{}), Service: Service(t, scfg)}
}

// Codec returns protocol's codec with limits (zero fields: the defaults),
// for a test that speaks to a server or encodes requests itself; an
// unknown protocol fails t, so a test needs no error path of its own.
func Codec(t testing.TB, protocol string, limits wire.Limits) wire.Codec {
	t.Helper()
	codec, err := wire.New(protocol, limits)
	if err != nil {
		t.Fatal(err)
	}
	return codec
}

// Service returns a new service of scfg, for a server a test starts or
// a reference ledger it compares with (set scfg.NsPerIter to spare the
// test the calibration); an invalid scfg fails t.
func Service(t testing.TB, scfg service.Config) *service.Service {
	t.Helper()
	svc, err := service.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Start returns the server start starts, closed when t ends (an error
// of Close fails t); an error of start fails t at once.
func Start[S models.Server](t testing.TB, start func() (S, error)) S {
	t.Helper()
	s, err := start()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
