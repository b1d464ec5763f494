package wire

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// The tests in this file run against every codec, as a conformance suite:
// what one protocol guarantees, the other must too.

// newCodec returns New(protocol, lim), failing t if New refuses: the tests
// that build one codec on purpose have no use for the error.
func newCodec(t testing.TB, protocol string, lim Limits) Codec {
	t.Helper()
	c, err := New(protocol, lim)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testCodecs returns every codec with the limits lim.
func testCodecs(t testing.TB, lim Limits) []Codec {
	t.Helper()
	var cs []Codec
	for _, p := range Protocols {
		cs = append(cs, newCodec(t, p, lim))
	}
	return cs
}

// mustDecode decodes buf with decode and fails t unless that takes the
// first n bytes without an error; it returns the message. The decode tests
// all start so, whatever they then check.
func mustDecode[M any](t *testing.T, decode func([]byte, *M) (int, error), buf []byte, n int) M {
	t.Helper()
	var got M
	if m, err := decode(buf, &got); err != nil || m != n {
		t.Fatalf("decoding %q = %d, %v; want %d, nil", clip(buf[:min(n, len(buf))]), m, err, n)
	}
	return got
}

// checkDecode is mustDecode that also checks the message is want. It
// returns the message, for the checks a test adds.
func checkDecode[M any](t *testing.T, decode func([]byte, *M) (int, error), buf []byte, n int, want M) M {
	t.Helper()
	got := mustDecode(t, decode, buf, n)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v\nwant    %+v", got, want)
	}
	return got
}

type requestCase struct {
	name string
	req  Request
}

// sampleRequests covers every op, the extremes of every field and the
// fields one protocol cannot carry (see carried).
func sampleRequests() []requestCase {
	return []requestCase{
		{name: "work/empty", req: Request{ID: 1, Op: OpWork}},
		{name: "work/all-fields", req: Request{ID: 1<<64 - 1, Op: OpWork, Priority: 255, CPU: 20 * time.Microsecond,
			Block: 1500 * time.Microsecond, Size: 64, Payload: []byte("opaque\x00\r\n\xff")}},
		{name: "work/limits", req: Request{ID: 7, Op: OpWork, CPU: DefaultMaxWork, Block: 3 * time.Nanosecond, Size: DefaultMaxPayload}},
		{name: "work/close", req: Request{ID: 8, Op: OpWork, Size: 3, Close: true}},
		{name: "work/payload=100KiB", req: Request{ID: 9, Op: OpWork, Payload: AppendBody(nil, 5, 100<<10)}},
		{name: "work/ledger-fields-ignored", req: Request{ID: 10, Op: OpWork, Account: 4, To: 5, Amount: 6, Timeout: time.Second}},
		{name: "balance", req: Request{ID: 11, Op: OpBalance, Account: 3}},
		{name: "balance/account=0", req: Request{ID: 12, Op: OpBalance, CPU: time.Millisecond, Close: true}},
		{name: "deposit", req: Request{ID: 13, Op: OpDeposit, Account: 1<<32 - 1, Amount: 1234}},
		{name: "deposit/body", req: Request{ID: 14, Op: OpDeposit, Account: 1, Amount: 1, Payload: []byte("body")}},
		{name: "withdraw", req: Request{ID: 15, Op: OpWithdraw, Account: 7, Amount: 1<<63 - 1, Timeout: 250 * time.Millisecond}},
		{name: "withdraw/no-wait", req: Request{ID: 16, Op: OpWithdraw, Account: 7, Amount: 1, Priority: 1}},
		{name: "transfer", req: Request{ID: 17, Op: OpTransfer, Account: 1, To: 2, Amount: 100, Priority: 9, Block: time.Second}},
		{name: "transfer/to-self", req: Request{ID: 18, Op: OpTransfer, Account: 0, To: 0, Amount: 5}},
		{name: "total", req: Request{ID: 19, Op: OpTotal, CPU: 1234567 * time.Nanosecond, Size: 1}},
	}
}

// carried returns what decoding c's encoding of r gives: the fields r's op
// uses, and of those, the ones c's protocol carries.
func carried(c Codec, r Request) Request {
	switch r.Op {
	case OpWork, OpTotal:
		r.Account, r.To, r.Amount, r.Timeout = 0, 0, 0, 0
	case OpBalance:
		r.To, r.Amount, r.Timeout = 0, 0, 0
	case OpDeposit:
		r.To, r.Timeout = 0, 0
	case OpWithdraw:
		r.To = 0
	case OpTransfer:
		r.Timeout = 0
	}
	if c.Protocol() == "binary" {
		r.Close = false // a binary client closes the connection itself
		if r.Op != OpWork {
			r.Payload = nil // the payload holds the ledger arguments
		}
	}
	if len(r.Payload) == 0 {
		r.Payload = nil
	}
	return r
}

type responseCase struct {
	name string
	resp Response
}

func sampleResponses() []responseCase {
	cases := []responseCase{
		{name: "ok/empty", resp: Response{ID: 1}},
		{name: "ok/body", resp: Response{ID: 2, Payload: AppendBody(nil, 2, 1000)}},
		{name: "ok/close", resp: Response{ID: 3, Payload: []byte("bye"), Close: true}},
		{name: "ok/payload=200KiB", resp: Response{ID: 1<<64 - 1, Payload: AppendBody(nil, 1<<64-1, 200<<10)}},
	}
	for s := Status(1); s < numStatuses; s++ {
		cases = append(cases, responseCase{name: "status=" + s.String(), resp: Response{ID: uint64(s) * 1000, Status: s, Payload: []byte("x")}})
	}
	return cases
}

// decoded returns what decoding c's encoding of r gives.
func decoded(c Codec, r Response) Response {
	if c.Protocol() == "binary" {
		r.Close = false
	}
	if len(r.Payload) == 0 {
		r.Payload = nil
	}
	r.Checksum, r.HasChecksum = Checksum(r.ID, r.Payload), true
	return r
}

func TestRequestRoundTrip(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, tc := range sampleRequests() {
			t.Run(fmt.Sprintf("protocol=%s/%s", c.Protocol(), tc.name), func(t *testing.T) {
				enc := c.AppendRequest(nil, &tc.req)
				checkDecode(t, c.DecodeRequest, enc, len(enc), carried(c, tc.req))
			})
		}
	}
}

func TestResponseRoundTrip(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, tc := range sampleResponses() {
			t.Run(fmt.Sprintf("protocol=%s/%s", c.Protocol(), tc.name), func(t *testing.T) {
				enc := c.AppendResponse(nil, &tc.resp)
				got := checkDecode(t, c.DecodeResponse, enc, len(enc), decoded(c, tc.resp))
				if got.Checksum != Checksum(got.ID, got.Payload) {
					t.Errorf("checksum %08x does not verify", got.Checksum)
				}
			})
		}
	}
}

// TestResponseChecksumIgnoresField checks that encoders compute the checksum
// and ignore Response.Checksum.
func TestResponseChecksumIgnoresField(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		t.Run("protocol="+c.Protocol(), func(t *testing.T) {
			in := Response{ID: 5, Payload: []byte("p"), Checksum: 0xdeadbeef, HasChecksum: true}
			var got Response
			if _, err := c.DecodeResponse(c.AppendResponse(nil, &in), &got); err != nil {
				t.Fatal(err)
			}
			if want := Checksum(5, []byte("p")); got.Checksum != want {
				t.Errorf("checksum %08x, want %08x", got.Checksum, want)
			}
		})
	}
}

// stream is a sequence of encoded messages on one connection, the decoding
// of each, and the decoder that reads them.
type stream[M any] struct {
	bytes  []byte
	want   []M
	decode func([]byte, *M) (int, error)
}

func requestStream(c Codec, maxPayload int) stream[Request] {
	s := stream[Request]{decode: c.DecodeRequest}
	for _, tc := range sampleRequests() {
		if len(tc.req.Payload) <= maxPayload {
			s.bytes = c.AppendRequest(s.bytes, &tc.req)
			s.want = append(s.want, carried(c, tc.req))
		}
	}
	return s
}

func responseStream(c Codec, maxPayload int) stream[Response] {
	s := stream[Response]{decode: c.DecodeResponse}
	for _, tc := range sampleResponses() {
		if len(tc.resp.Payload) <= maxPayload {
			s.bytes = c.AppendResponse(s.bytes, &tc.resp)
			s.want = append(s.want, decoded(c, tc.resp))
		}
	}
	return s
}

// deliver sends s to a fresh receiver in pieces, cut at the increasing
// offsets cuts, and checks that the receiver decodes s.want.
func (s stream[M]) deliver(t *testing.T, cuts ...int) {
	t.Helper()
	rx := conn[M]{decode: s.decode}
	from := 0
	for _, to := range append(cuts, len(s.bytes)) {
		rx.receive(t, s.bytes[from:to])
		from = to
	}
	rx.check(t, s.want)
}

func (s stream[M]) len() int { return len(s.bytes) }

// sampleStream is a stream of either message type, so that one test body
// serves requests and responses.
type sampleStream interface {
	len() int
	deliver(t *testing.T, cuts ...int)
}

type namedStream struct {
	name string
	s    sampleStream
}

// sampleStreams returns c's request and response streams by name, each
// holding the samples whose payload is at most maxReq or maxResp bytes.
func sampleStreams(c Codec, maxReq, maxResp int) []namedStream {
	return []namedStream{
		{name: "requests", s: requestStream(c, maxReq)},
		{name: "responses", s: responseStream(c, maxResp)},
	}
}

// conn models a connection's receive buffer: bytes arrive in pieces and the
// receiver decodes whatever whole messages it holds after each piece.
type conn[M any] struct {
	decode func([]byte, *M) (int, error)
	buf    []byte
	got    []M
}

// receive appends p to the buffer and decodes every whole message in it,
// copying payloads, as a server must before it reuses the buffer.
func (c *conn[M]) receive(t *testing.T, p []byte) {
	t.Helper()
	c.buf = append(c.buf, p...)
	for {
		var m M
		n, err := c.decode(c.buf, &m)
		if err != nil {
			t.Fatalf("decode after %d more bytes: %v", len(p), err)
		}
		if n == 0 {
			return
		}
		if n > len(c.buf) {
			t.Fatalf("decode consumed %d of %d bytes", n, len(c.buf))
		}
		c.got = append(c.got, detach(m))
		c.buf = c.buf[n:]
	}
}

// detach copies the payload of a decoded message out of the receive buffer.
func detach[M any](m M) M {
	switch m := any(&m).(type) {
	case *Request:
		if m.Payload != nil {
			m.Payload = bytes.Clone(m.Payload)
		}
	case *Response:
		if m.Payload != nil {
			m.Payload = bytes.Clone(m.Payload)
		}
	}
	return m
}

func (c *conn[M]) check(t *testing.T, want []M) {
	t.Helper()
	if len(c.buf) != 0 {
		t.Errorf("%d bytes left undecoded: %q", len(c.buf), clip(c.buf))
	}
	if len(c.got) != len(want) {
		t.Fatalf("decoded %d messages, want %d", len(c.got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(c.got[i], want[i]) {
			t.Errorf("message %d: decoded %+v\nwant %+v", i, c.got[i], want[i])
		}
	}
}

// TestDecodeOneByteAtATime delivers every sample message one byte at a time.
func TestDecodeOneByteAtATime(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, st := range sampleStreams(c, 1<<20, 1<<20) {
			t.Run("protocol="+c.Protocol()+"/"+st.name, func(t *testing.T) {
				cuts := make([]int, 0, st.s.len())
				for k := 1; k < st.s.len(); k++ {
					cuts = append(cuts, k)
				}
				st.s.deliver(t, cuts...)
			})
		}
	}
}

// TestDecodeSplitEverywhere delivers the samples in two reads, split at
// every offset (the samples with large payloads are left out, to keep the
// test quadratic in a small size).
func TestDecodeSplitEverywhere(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, st := range sampleStreams(c, 64, 1000) {
			t.Run("protocol="+c.Protocol()+"/"+st.name, func(t *testing.T) {
				for k := range st.s.len() + 1 {
					st.s.deliver(t, k)
				}
			})
		}
	}
}

// TestDecodeConcatenated delivers all samples in one read, as pipelining
// does.
func TestDecodeConcatenated(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, st := range sampleStreams(c, 1<<20, 1<<20) {
			t.Run("protocol="+c.Protocol()+"/"+st.name, func(t *testing.T) {
				st.s.deliver(t)
			})
		}
	}
}

// TestPayloadAliasesBuffer checks the ownership rule: a decoded payload is a
// window on the buffer, capped so that appending to it cannot overwrite the
// next message.
func TestPayloadAliasesBuffer(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		t.Run("protocol="+c.Protocol(), func(t *testing.T) {
			r := Request{ID: 1, Payload: []byte("abc")}
			buf := c.AppendRequest(nil, &r)
			buf = c.AppendRequest(buf, &r)
			var got Request
			n, err := c.DecodeRequest(buf, &got)
			if err != nil {
				t.Fatal(err)
			}
			if &got.Payload[0] != &buf[n-3] || cap(got.Payload) != 3 {
				t.Errorf("payload does not alias buf[%d:%d:%d]", n-3, n, n)
			}
		})
	}
}

// checkErrorPrefixes checks that decode reports the error kind want for
// msg, and for every prefix of msg either (0, nil) or the same kind: an
// error shows as soon as the bytes that prove it arrive, whatever the
// split.
func checkErrorPrefixes[M any](t *testing.T, decode func([]byte, *M) (int, error), msg []byte, want ErrorKind) {
	t.Helper()
	var m M
	n, err := decode(msg, &m)
	if KindOf(err) != want || n != 0 {
		t.Fatalf("decode(%q) = %d, %v (kind %v); want kind %v", clip(msg), n, err, KindOf(err), want)
	}
	if _, ok := err.(*Error); !ok {
		t.Errorf("error %T is not an *Error", err)
	}
	for k := range len(msg) {
		n, err := decode(msg[:k], &m)
		if n != 0 || err != nil && KindOf(err) != want {
			t.Fatalf("decode of the first %d bytes = %d, %v; want 0 and nil or kind %v", k, n, err, want)
		}
	}
}

// TestAppendErrorStatus checks that the error response decodes, with the
// status that matches the error's kind and a checksum that verifies.
func TestAppendErrorStatus(t *testing.T) {
	errs := []struct {
		name string
		err  error
		want Status
	}{
		{name: "malformed", err: ErrMalformed, want: StatusBadRequest},
		{name: "malformed/specific", err: errBinOp, want: StatusBadRequest},
		{name: "unsupported", err: errHTTPMethod, want: StatusBadRequest},
		{name: "too-large", err: ErrTooLarge, want: StatusTooLarge},
		{name: "header-too-large", err: ErrHeaderTooLarge, want: StatusTooLarge},
		{name: "not-an-Error", err: fmt.Errorf("io: %w", errTest), want: StatusInternal},
	}
	for _, c := range testCodecs(t, Limits{}) {
		for _, tc := range errs {
			t.Run(fmt.Sprintf("protocol=%s/%s", c.Protocol(), tc.name), func(t *testing.T) {
				b := c.AppendError(nil, tc.err)
				got := mustDecode(t, c.DecodeResponse, b, len(b))
				if got.Status != tc.want || got.ID != 0 {
					t.Errorf("status %v, id %d; want %v, 0", got.Status, got.ID, tc.want)
				}
				if !got.HasChecksum || got.Checksum != Checksum(0, got.Payload) {
					t.Errorf("checksum %08x (present %v) does not verify", got.Checksum, got.HasChecksum)
				}
				if c.Protocol() == "http" && !got.Close {
					t.Error("HTTP error response without Connection: close")
				}
			})
		}
	}
}

var errTest = fmt.Errorf("test error")

// TestZeroAllocs checks the steady-state allocation contract: decoding a
// typical request or response, and encoding one into a buffer with room,
// allocates nothing. This counts allocations; it asserts no timing.
func TestZeroAllocs(t *testing.T) {
	req := Request{ID: 12345, Op: OpWork, CPU: 20 * time.Microsecond, Block: time.Millisecond, Size: 64, Priority: 3}
	ledger := Request{ID: 12346, Op: OpWithdraw, Account: 3, Amount: 100, Timeout: time.Second}
	resp := Response{ID: 12345, Payload: AppendBody(nil, 12345, 64)}
	for _, c := range testCodecs(t, Limits{}) {
		encReq := c.AppendRequest(nil, &req)
		encLedger := c.AppendRequest(nil, &ledger)
		encResp := c.AppendResponse(nil, &resp)
		if c.Protocol() == "http" {
			// What wrk and curl send.
			encReq = []byte("GET /work?cpu=20us&block=1ms&size=64&prio=3 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" +
				"User-Agent: curl/8.5.0\r\nAccept: */*\r\nX-Request-Id: 12345\r\n\r\n")
		}
		garbage := []byte("\x00\x00\x00\x00")
		// A server reuses one Request per connection; through the Codec
		// interface the compiler cannot prove it stays on the stack.
		var r Request
		var rr Response
		dst := make([]byte, 0, 4096)
		ops := []struct {
			name string
			f    func()
		}{
			{name: "DecodeRequest/op=work", f: func() {
				if n, err := c.DecodeRequest(encReq, &r); n != len(encReq) || err != nil {
					t.Fatalf("DecodeRequest = %d, %v", n, err)
				}
			}},
			{name: "DecodeRequest/op=withdraw", f: func() {
				if n, err := c.DecodeRequest(encLedger, &r); n != len(encLedger) || err != nil {
					t.Fatalf("DecodeRequest = %d, %v", n, err)
				}
			}},
			{name: "DecodeRequest/partial", f: func() {
				if n, err := c.DecodeRequest(encReq[:len(encReq)-1], &r); n != 0 || err != nil {
					t.Fatalf("DecodeRequest = %d, %v", n, err)
				}
			}},
			{name: "DecodeRequest/malformed", f: func() {
				if _, err := c.DecodeRequest(garbage, &r); err == nil {
					t.Fatal("DecodeRequest accepted garbage")
				}
			}},
			{name: "DecodeResponse", f: func() {
				if n, err := c.DecodeResponse(encResp, &rr); n != len(encResp) || err != nil {
					t.Fatalf("DecodeResponse = %d, %v", n, err)
				}
			}},
			{name: "AppendRequest", f: func() { dst = c.AppendRequest(dst[:0], &req) }},
			{name: "AppendRequest/op=withdraw", f: func() { dst = c.AppendRequest(dst[:0], &ledger) }},
			{name: "AppendResponse", f: func() { dst = c.AppendResponse(dst[:0], &resp) }},
		}
		for _, op := range ops {
			t.Run("protocol="+c.Protocol()+"/"+op.name, func(t *testing.T) {
				if n := testing.AllocsPerRun(100, op.f); n != 0 {
					t.Errorf("%v allocations per run, want 0", n)
				}
			})
		}
	}
}

// clip shortens a message for an error report.
func clip(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:200:200], "..."...)
	}
	return b
}

// TestPatternResponse: a response whose body is a Pattern encodes to the
// same bytes as the one carrying that body in Payload, and its head plus
// the body's windows are those bytes too; it decodes with a valid
// checksum.
func TestPatternResponse(t *testing.T) {
	for _, c := range testCodecs(t, Limits{}) {
		for _, id := range []uint64{0, 1, 63, 64, 1 << 40} {
			for _, size := range []int{1, 63, 64, 65, MaxInlineBody + 1, BodyWindowMax, BodyWindowMax + 1, 3*BodyWindowMax + 17} {
				name := fmt.Sprintf("%s/id=%d/size=%d", c.Protocol(), id, size)
				body := AppendBody(nil, id, size)
				want := c.AppendResponse(nil, &Response{ID: id, Status: StatusOK, Payload: body, Close: id == 1})
				pat := &Response{ID: id, Status: StatusOK, Pattern: size, Close: id == 1}
				if got := c.AppendResponse(nil, pat); !bytes.Equal(got, want) {
					t.Fatalf("%s: AppendResponse with Pattern differs from the materialised body", name)
				}
				got := c.AppendResponseHead(nil, pat)
				if len(got) != len(want)-size {
					t.Fatalf("%s: head of %d bytes, want %d", name, len(got), len(want)-size)
				}
				for off := 0; off < size; {
					w := BodyWindow(id, off, size-off)
					if len(w) == 0 || len(w) > BodyWindowMax {
						t.Fatalf("%s: window at %d of %d bytes", name, off, len(w))
					}
					got = append(got, w...)
					off += len(w)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: head and windows differ from the materialised response", name)
				}
				if PatternChecksum(id, size) != Checksum(id, body) {
					t.Fatalf("%s: PatternChecksum differs from Checksum of the body", name)
				}
				var resp Response
				if n, err := c.DecodeResponse(want, &resp); err != nil || n != len(want) || !bytes.Equal(resp.Payload, body) || resp.Pattern != 0 {
					t.Fatalf("%s: decoded %d of %d bytes, err %v, pattern %d", name, n, len(want), err, resp.Pattern)
				}
			}
		}
	}
}
