package connio

import (
	"bytes"
	"strconv"
	"testing"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

func testConfig(t *testing.T, maxOut int) *models.Config {
	t.Helper()
	codec := modeltest.Codec(t, "binary", wire.Limits{MaxPayload: 1 << 20})
	svc := modeltest.Service(t, service.Config{NsPerIter: 1})
	cfg := models.Config{Codec: codec, Service: svc, MaxPendingOutput: maxOut}
	cfg = cfg.WithDefaults(1)
	return &cfg
}

func TestInGrowsToBoundAndCompacts(t *testing.T) {
	in := NewIn(10000)
	sp := in.Space()
	if len(sp) != InitialIn {
		t.Fatalf("first space %d, want %d", len(sp), InitialIn)
	}
	total := 0
	for {
		sp := in.Space()
		if len(sp) == 0 {
			break
		}
		in.Commit(len(sp))
		total += len(sp)
	}
	if total != 10000 || in.Buffered() != 10000 {
		t.Fatalf("filled %d (buffered %d), want exactly the bound 10000", total, in.Buffered())
	}
	in.off = 9000 // as if 9000 bytes had been decoded
	if sp := in.Space(); len(sp) != 9000 || in.Buffered() != 1000 {
		t.Fatalf("after compaction: space %d, buffered %d", len(sp), in.Buffered())
	}
	if n := in.Append(make([]byte, 20000)); n != 9000 {
		t.Fatalf("Append took %d bytes, want the 9000 that fit", n)
	}
}

func TestOutReleasesLargeBuffers(t *testing.T) {
	var o Out
	o.buf = make([]byte, RetainLimit+1)
	o.Advance(10)
	if o.Pending() != RetainLimit+1-10 {
		t.Fatalf("pending %d", o.Pending())
	}
	o.Advance(o.Pending())
	if o.buf != nil || o.Pending() != 0 {
		t.Fatal("an emptied large buffer was retained")
	}
}

// requests encodes n OpWork requests asking for size bytes each.
func requests(c wire.Codec, n, size int) []byte {
	var b []byte
	for i := range n {
		b = c.AppendRequest(b, &wire.Request{ID: uint64(i + 1), Op: wire.OpWork, Size: size})
	}
	return b
}

func TestProcessStopsAtOutputBoundAndResumes(t *testing.T) {
	cfg := testConfig(t, 4096)
	s := NewSession(cfg)
	var sh models.Shard
	s.In.Append(requests(cfg.Codec, 10, 3000))
	if n := s.Process(&sh); n != 2 || !s.stalled {
		t.Fatalf("first Process served %d (stalled %v); want 2 (3000+3000 bytes pass the 4096 bound)", n, s.stalled)
	}
	s.Out.Advance(s.Out.Pending())
	if n := s.Process(&sh); n != 2 {
		t.Fatalf("after draining, Process served %d, want 2 more", n)
	}
}

func TestProcessDecodeErrorClosesAfterErrorResponse(t *testing.T) {
	cfg := testConfig(t, 0)
	s := NewSession(cfg)
	var sh models.Shard
	s.In.Append(requests(cfg.Codec, 1, 5))
	s.In.Append(bytes.Repeat([]byte("X"), 64))
	if n := s.Process(&sh); n != 1 || !s.Closing() {
		t.Fatalf("served %d, closing %v; want 1 and closing", n, s.Closing())
	}
	var resp wire.Response
	k, err := cfg.Codec.DecodeResponse(s.Out.Bytes(), &resp)
	if err != nil || k == 0 || resp.Status != wire.StatusOK {
		t.Fatalf("first response: %v %v", resp.Status, err)
	}
	if _, err := cfg.Codec.DecodeResponse(s.Out.Bytes()[k:], &resp); err != nil || resp.Status != wire.StatusBadRequest {
		t.Fatalf("error response: %v %v", resp.Status, err)
	}
}

// served returns the requests counted by c's shards.
func served(c *models.Counters) uint64 {
	var st models.Stats
	c.Stats(&st)
	return st.Requests
}

// socketpair returns a non-blocking server end and a blocking client end
// with small buffers, so that back-pressure shows quickly.
func socketpair(t *testing.T) (srv, cli int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 8192)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8192)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestOnReadyBackPressure(t *testing.T) {
	cfg := testConfig(t, 64<<10)
	s := NewSession(cfg)
	var counters models.Counters
	sh := counters.NewThreadShard("test")
	srv, cli := socketpair(t)
	// 40 requests for 32 KiB each: far more than the bound plus the socket
	// buffers. The client does not read.
	if _, err := unix.Write(cli, requests(cfg.Codec, 40, 32<<10)); err != nil {
		t.Fatal(err)
	}
	interest, done := s.OnReady(srv, sh)
	if done || interest&handleset.Readable != 0 || interest&handleset.Writable == 0 {
		t.Fatalf("with the client not reading: interest %v, done %v; want writable only", interest, done)
	}
	if n := served(&counters); n == 0 || n >= 40 {
		t.Fatalf("served %d requests before stalling, want some but not all", n)
	}
	if p := s.Out.Pending(); p > 64<<10+(32<<10)+512 {
		t.Fatalf("pending output %d exceeds the bound plus one response", p)
	}
	// The client reads everything; each writable event makes progress until
	// all 40 responses have been produced and written.
	var got []byte
	buf := make([]byte, 64<<10)
	for want := 40 * (32<<10 + 24); len(got) < want; {
		n, err := unix.Read(cli, buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		interest, done = s.OnReady(srv, sh)
		if done {
			t.Fatal("session ended while the client was reading")
		}
	}
	if served(&counters) != 40 || interest != handleset.Readable|handleset.OneShot {
		t.Fatalf("served %d, interest %v; want 40 and readable", served(&counters), interest)
	}
	var resp wire.Response
	for i := range 40 {
		k, err := cfg.Codec.DecodeResponse(got, &resp)
		if err != nil || k == 0 {
			t.Fatalf("response %d: %v", i, err)
		}
		if err := wire.Verify(&wire.Request{ID: uint64(i + 1), Op: wire.OpWork, Size: 32 << 10}, &resp); err != nil {
			t.Fatal(err)
		}
		got = got[k:]
	}
	// End of stream: the session is done.
	unix.Shutdown(cli, unix.SHUT_WR)
	if _, done := s.OnReady(srv, sh); !done {
		t.Fatal("session not done after the peer closed")
	}
}

// TestOnReadyUnread checks that OnReady says when it stopped reading at
// MaxReadsPerEvent with bytes possibly left in the socket (Unread), which
// an edge-triggered model must act on, and that calling it again until
// it says not serves every request sent.
func TestOnReadyUnread(t *testing.T) {
	cfg := testConfig(t, 0)
	s := NewSession(cfg)
	var counters models.Counters
	sh := counters.NewThreadShard("test")
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	srv, cli := fds[0], fds[1]
	if err := unix.SetNonblock(srv, true); err != nil {
		t.Fatal(err)
	}
	// Small requests for more than MaxReadsPerEvent full reads of the
	// input buffer; the socket buffers hold them and their responses.
	const n = 2000
	msg := requests(cfg.Codec, n, 1)
	if len(msg) <= MaxReadsPerEvent*InitialIn {
		t.Fatalf("%d bytes of requests do not outlast %d reads", len(msg), MaxReadsPerEvent)
	}
	if _, err := unix.Write(cli, msg); err != nil {
		t.Fatal(err)
	}
	if _, done := s.OnReady(srv, sh); done || !s.Unread() {
		t.Fatalf("after one event: done %v, unread %v; want the socket left unread", done, s.Unread())
	}
	for calls := 1; s.Unread(); calls++ {
		if calls > n {
			t.Fatal("OnReady keeps reporting unread input")
		}
		if _, done := s.OnReady(srv, sh); done {
			t.Fatal("session ended")
		}
	}
	if got := served(&counters); got != n {
		t.Fatalf("served %d of %d requests once nothing was left unread", got, n)
	}
}

// TestReadOnce drives the read step through each of its results.
func TestReadOnce(t *testing.T) {
	codec := modeltest.Codec(t, "binary", wire.Limits{})
	req := requests(codec, 1, 10)
	tests := []struct {
		name    string
		send    []byte // what the peer sends first
		shut    bool   // then it shuts down its sending side
		badFd   bool   // read a descriptor that is not open
		want    ReadResult
		read    int // bytes committed and counted
		counted map[string]uint64
	}{
		{name: "nothing", want: ReadNone},
		{name: "drained", send: req, want: ReadDrained, read: len(req)},
		{name: "filled", send: bytes.Repeat(req, InitialIn/len(req)+1), want: ReadMore, read: InitialIn},
		{name: "end", shut: true, want: ReadEnd},
		{name: "end-truncated", send: req[:len(req)-1], shut: true, want: ReadEnd, read: len(req) - 1,
			counted: map[string]uint64{models.ErrTruncated: 1}},
		{name: "failed", badFd: true, want: ReadFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, cli := socketpair(t)
			if len(tc.send) > 0 {
				if _, err := unix.Write(cli, tc.send); err != nil {
					t.Fatal(err)
				}
			}
			if tc.shut {
				unix.Shutdown(cli, unix.SHUT_WR)
			}
			if tc.badFd {
				srv = -1
			}
			var counters models.Counters
			sh := counters.NewConnShard()
			in := NewIn(1 << 20)
			var timer Timer
			got, err := in.ReadOnce(srv, &timer, sh)
			for got == ReadDrained && tc.want == ReadEnd {
				got, err = in.ReadOnce(srv, &timer, sh) // the bytes, then the end
			}
			if got != tc.want || (err != nil) != (tc.want == ReadFailed) {
				t.Fatalf("ReadOnce = %v, %v; want %v", got, err, tc.want)
			}
			var st models.Stats
			counters.Stats(&st)
			if in.Buffered() != tc.read || st.BytesRead != uint64(tc.read) {
				t.Errorf("buffered %d, counted %d bytes read; want %d", in.Buffered(), st.BytesRead, tc.read)
			}
			for _, kind := range []string{models.ErrTruncated, models.ErrIO, models.ErrPeerReset} {
				if st.Errors[kind] != tc.counted[kind] {
					t.Errorf("errors counted %v, want %v (a failed read is the caller's to count)", st.Errors, tc.counted)
				}
			}
		})
	}
}

// forwarder is a Service other than service.Service, as the front end's:
// it answers each request with its id in decimal, status unavailable.
type forwarder struct{ calls int }

func (f *forwarder) Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	f.calls++
	*resp = wire.Response{ID: req.ID, Status: wire.StatusUnavailable, Close: req.Close}
	scratch = strconv.AppendUint(scratch, req.ID, 10)
	resp.Payload = scratch
	return scratch
}

// memConn is an in-memory connection for ServeStream: it reads in, and
// collects what is written.
type memConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (s *memConn) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *memConn) Write(p []byte) (int, error) { return s.out.Write(p) }

// TestServeStreamWithService: a session made with NewSessionWith serves
// every pipelined request with the given Service, in order, and counts a
// request the end of input cut short.
func TestServeStreamWithService(t *testing.T) {
	cfg := testConfig(t, 0)
	reqs := requests(cfg.Codec, 3, 10)
	partial := requests(cfg.Codec, 1, 10)
	conn := &memConn{in: bytes.NewReader(append(reqs, partial[:len(partial)-1]...))}
	var counters models.Counters
	sh := counters.NewConnShard()
	f := &forwarder{}
	ServeStream(conn, NewSessionWith(cfg, f), sh)
	got := conn.out.Bytes()
	for i := range 3 {
		var resp wire.Response
		k, err := cfg.Codec.DecodeResponse(got, &resp)
		if err != nil || k == 0 {
			t.Fatalf("response %d: %v", i+1, err)
		}
		if want := strconv.Itoa(i + 1); resp.ID != uint64(i+1) || resp.Status != wire.StatusUnavailable || string(resp.Payload) != want {
			t.Fatalf("response %d: id %d, status %v, payload %q; want the service's answer %q", i+1, resp.ID, resp.Status, resp.Payload, want)
		}
		got = got[k:]
	}
	var st models.Stats
	counters.Stats(&st)
	if f.calls != 3 || len(got) != 0 || st.Requests != 3 || st.Errors[models.ErrTruncated] != 1 {
		t.Fatalf("%d calls, %d bytes left over, %d requests and %d truncated counted; want 3, 0, 3, 1",
			f.calls, len(got), st.Requests, st.Errors[models.ErrTruncated])
	}
}

// TestProcessAllocatesNothing: serving a request through the Service
// interface allocates nothing once the buffers have grown.
func TestProcessAllocatesNothing(t *testing.T) {
	cfg := testConfig(t, 0)
	s := NewSession(cfg)
	var sh models.Shard
	req := requests(cfg.Codec, 1, 100)
	step := func() {
		s.In.Append(req)
		if s.Process(&sh) != 1 {
			t.Fatal("the request was not served")
		}
		s.Out.Advance(s.Out.Pending())
	}
	for range 10 {
		step()
	}
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Fatalf("%v allocations per request", a)
	}
}

// deferBalances is an AsyncService that leaves every balance request
// pending (its response comes through Resume) and serves the rest at once.
type deferBalances struct {
	svc     *service.Service
	pending []uint64 // the ids of the balance requests begun
}

func (d *deferBalances) Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	return d.svc.Do(req, resp, scratch)
}

func (d *deferBalances) Start(req *wire.Request, resp *wire.Response, scratch []byte) ([]byte, bool) {
	if req.Op == wire.OpBalance {
		d.pending = append(d.pending, req.ID)
		return scratch, false
	}
	return d.Do(req, resp, scratch), true
}

// TestOnReadySuspends: a request the AsyncService finishes later suspends
// the session — the responses before it are written, nothing after it is
// served or read, and OnReady asks for no event — until Resume, after
// which the responses leave in request order.
func TestOnReadySuspends(t *testing.T) {
	cfg := testConfig(t, 0)
	d := &deferBalances{svc: cfg.Service}
	s := NewSessionWith(cfg, d)
	var counters models.Counters
	sh := counters.NewThreadShard("test")
	srv, cli := socketpair(t)
	work := func(id uint64) *wire.Request { return &wire.Request{ID: id, Op: wire.OpWork, Size: 10} }
	balance := &wire.Request{ID: 2, Op: wire.OpBalance, Account: 1}
	var out []byte
	for _, r := range []*wire.Request{work(1), balance, work(3)} {
		out = cfg.Codec.AppendRequest(out, r)
	}
	if _, err := unix.Write(cli, out); err != nil {
		t.Fatal(err)
	}
	interest, done := s.OnReady(srv, sh)
	if interest != 0 || done || !s.Suspended() || len(d.pending) != 1 || served(&counters) != 1 {
		t.Fatalf("at the pending request: interest %v, done %v, suspended %v, %d begun, %d served; want 0, false, true, 1, 1",
			interest, done, s.Suspended(), len(d.pending), served(&counters))
	}
	// Meanwhile the client sends another request, which is not read.
	if _, err := unix.Write(cli, cfg.Codec.AppendRequest(nil, work(4))); err != nil {
		t.Fatal(err)
	}
	resp := wire.Response{ID: balance.ID}
	service.AppendResult(&resp, nil, service.DefaultInitialBalance, nil)
	s.Resume(&resp, sh)
	if interest, done = s.OnReady(srv, sh); done || interest != handleset.Readable|handleset.OneShot {
		t.Fatalf("after Resume: interest %v, done %v; want readable", interest, done)
	}
	got := readN(t, cli, cfg.Codec, 4)
	for i, r := range []*wire.Request{work(1), balance, work(3), work(4)} {
		if err := wire.Verify(r, &got[i]); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
	if served(&counters) != 4 || s.Suspended() {
		t.Fatalf("served %d (suspended %v), want 4", served(&counters), s.Suspended())
	}
}

// readN reads n responses from the blocking descriptor fd.
func readN(t *testing.T, fd int, codec wire.Codec, n int) []wire.Response {
	t.Helper()
	var got []byte
	out := make([]wire.Response, n)
	buf := make([]byte, 4096)
	for i := 0; i < n; {
		k, err := codec.DecodeResponse(got, &out[i])
		if err != nil {
			t.Fatal(err)
		}
		if k > 0 {
			out[i].Payload = bytes.Clone(out[i].Payload)
			got = got[k:]
			i++
			continue
		}
		m, err := unix.Read(fd, buf)
		if err != nil || m == 0 {
			t.Fatalf("read after %d responses: %d, %v", i, m, err)
		}
		got = append(got, buf[:m]...)
	}
	return out
}
