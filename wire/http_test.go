package wire

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// get returns a GET request for target with the given header lines.
func get(target string, headers ...string) string {
	return "GET " + target + " HTTP/1.1\r\n" + strings.Join(append(headers, ""), "\r\n") + "\r\n"
}

func TestHTTPDecodeRequest(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Request
	}{
		{name: "minimal", raw: "GET /work HTTP/1.1\r\n\r\n", want: Request{Op: OpWork}},
		{name: "issue-example", raw: get("/work?cpu=20us&block=0&size=64&prio=0", "Host: x"),
			want: Request{Op: OpWork, CPU: 20 * time.Microsecond, Size: 64}},
		{name: "all-work-params", raw: get("/work?cpu=1.5ms&block=2s&size=1048576&prio=255"),
			want: Request{Op: OpWork, CPU: 1500 * time.Microsecond, Block: 2 * time.Second, Size: 1 << 20, Priority: 255}},
		{name: "duration/compound", raw: get("/work?cpu=1s500ms&block=.5s"),
			want: Request{Op: OpWork, CPU: 1500 * time.Millisecond, Block: 500 * time.Millisecond}},
		{name: "duration/micro-sign-raw", raw: get("/work?cpu=7µs&block=8μs"),
			want: Request{Op: OpWork, CPU: 7 * time.Microsecond, Block: 8 * time.Microsecond}},
		{name: "duration/micro-sign-escaped", raw: get("/work?cpu=7%C2%B5s&block=8%ce%bcs"),
			want: Request{Op: OpWork, CPU: 7 * time.Microsecond, Block: 8 * time.Microsecond}},
		{name: "duration/plus-sign", raw: get("/work?cpu=+3ns&block=-0"), want: Request{Op: OpWork, CPU: 3}},
		{name: "duration/max", raw: get("/work?cpu=10s&block=0.0000000001h"), want: Request{Op: OpWork, CPU: 10 * time.Second, Block: 360}},
		{name: "empty-query", raw: get("/work?"), want: Request{Op: OpWork}},
		{name: "empty-fields", raw: get("/work?&&size=2&&"), want: Request{Op: OpWork, Size: 2}},
		{name: "unknown-params-ignored", raw: get("/work?_=1712345&cpu=1us&x&y=%zz&CPU=bad"), want: Request{Op: OpWork, CPU: time.Microsecond}},
		{name: "repeated-param-last-wins", raw: get("/work?size=1&size=2"), want: Request{Op: OpWork, Size: 2}},
		{name: "ledger-params-ignored-by-work", raw: get("/work?acct=x&to=-1&amount=0&timeout=bad"), want: Request{Op: OpWork}},
		{name: "balance", raw: get("/balance?acct=4294967295"), want: Request{Op: OpBalance, Account: 1<<32 - 1}},
		{name: "balance/acct=0", raw: get("/balance?acct=0&amount=bad"), want: Request{Op: OpBalance}},
		{name: "deposit", raw: get("/deposit?acct=3&amount=9223372036854775807&to=bad"),
			want: Request{Op: OpDeposit, Account: 3, Amount: 1<<63 - 1}},
		{name: "withdraw", raw: get("/withdraw?acct=3&amount=5&timeout=250ms"),
			want: Request{Op: OpWithdraw, Account: 3, Amount: 5, Timeout: 250 * time.Millisecond}},
		{name: "transfer", raw: get("/transfer?acct=1&to=2&amount=100&prio=3&timeout=bad"),
			want: Request{Op: OpTransfer, Account: 1, To: 2, Amount: 100, Priority: 3}},
		{name: "total", raw: get("/total?acct=bad&cpu=1us"), want: Request{Op: OpTotal, CPU: time.Microsecond}},
		{name: "request-id", raw: get("/work", "X-Request-Id: 18446744073709551615"), want: Request{ID: 1<<64 - 1, Op: OpWork}},
		{name: "request-id/last-wins", raw: get("/work", "x-request-id: 1", "X-REQUEST-ID:2"), want: Request{ID: 2, Op: OpWork}},
		{name: "body", raw: get("/work", "Content-Length: 5") + "hello", want: Request{Op: OpWork, Payload: []byte("hello")}},
		{name: "body/empty", raw: get("/work", "Content-Length: 0"), want: Request{Op: OpWork}},
		{name: "body/length-repeated", raw: get("/work", "Content-Length: 2", "content-length:2") + "ab", want: Request{Op: OpWork, Payload: []byte("ab")}},
		{name: "body/length-list", raw: get("/work", "Content-Length: 2, 2") + "ab", want: Request{Op: OpWork, Payload: []byte("ab")}},
		{name: "body/ledger-op", raw: get("/total", "Content-Length: 1") + "x", want: Request{Op: OpTotal, Payload: []byte("x")}},
		{name: "connection/close", raw: get("/work", "Connection: close"), want: Request{Op: OpWork, Close: true}},
		{name: "connection/close-in-list", raw: get("/work", "Connection: Upgrade, CLOSE ,foo"), want: Request{Op: OpWork, Close: true}},
		{name: "connection/keep-alive", raw: get("/work", "Connection: keep-alive"), want: Request{Op: OpWork}},
		{name: "connection/close-beats-keep-alive", raw: get("/work", "Connection: keep-alive", "Connection: close"), want: Request{Op: OpWork, Close: true}},
		{name: "connection/not-a-token", raw: get("/work", "Connection: closed"), want: Request{Op: OpWork}},
		{name: "http1.0", raw: "GET /work HTTP/1.0\r\n\r\n", want: Request{Op: OpWork, Close: true}},
		{name: "http1.0/keep-alive", raw: "GET /work HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", want: Request{Op: OpWork}},
		{name: "http1.0/keep-alive-and-close", raw: "GET /work HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", want: Request{Op: OpWork, Close: true}},
		{name: "header/whitespace", raw: get("/work", "X-Request-Id: \t 7 \t", "Empty:", "Odd-Chars: \x80\xff!~", "X-Checksum: not-read"),
			want: Request{ID: 7, Op: OpWork}},
		{name: "header/many", raw: get("/work", "Host: h", "User-Agent: wrk", "Accept: */*", "Cookie: a=b; c=d", "Content-Length: 1") + "z",
			want: Request{Op: OpWork, Payload: []byte("z")}},
	}
	c := newCodec(t, "http", Limits{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkDecode(t, c.DecodeRequest, []byte(tc.raw+"GET /next"), len(tc.raw), tc.want)
		})
	}
}

func TestHTTPDecodeRequestErrors(t *testing.T) {
	lim := Limits{MaxPayload: 1000, MaxWork: time.Second}
	tests := []struct {
		name string
		raw  string
		want ErrorKind
	}{
		// The head's syntax, refused at the first bad byte.
		{name: "line-end/bare-LF-request-line", raw: "GET /work HTTP/1.1\n\r\n", want: KindMalformed},
		{name: "line-end/bare-LF-header", raw: "GET /work HTTP/1.1\r\nHost: x\n\r\n", want: KindMalformed},
		{name: "line-end/bare-LF-final", raw: "GET /work HTTP/1.1\r\n\n", want: KindMalformed},
		{name: "line-end/CR-inside", raw: "GET /work HTTP/1.1\r\nHost: a\rb\r\n\r\n", want: KindMalformed},
		{name: "line-end/LF-first", raw: "\n", want: KindMalformed},
		{name: "request-line/empty", raw: "\r\n\r\n", want: KindMalformed},
		{name: "request-line/binary-frame", raw: "CB\x01\x00\x00\x00\x00\x00", want: KindMalformed},
		{name: "request-line/double-space", raw: "GET  /work HTTP/1.1\r\n\r\n", want: KindMalformed},
		{name: "request-line/no-version", raw: "GET /work\r\n\r\n", want: KindMalformed},
		{name: "request-line/no-target", raw: "GET\r\n\r\n", want: KindMalformed},
		{name: "request-line/trailing-space", raw: "GET /work HTTP/1.1 \r\n\r\n", want: KindMalformed},
		{name: "request-line/tab", raw: "GET\t/work HTTP/1.1\r\n\r\n", want: KindMalformed},
		{name: "request-line/control-in-target", raw: "GET /wo\x00rk HTTP/1.1\r\n\r\n", want: KindMalformed},
		{name: "request-line/bad-version", raw: "GET /work HTTX/1.1\r\n\r\n", want: KindMalformed},
		{name: "request-line/version-letters", raw: "GET /work HTTP/1.x\r\n\r\n", want: KindMalformed},
		{name: "request-line/version-long", raw: "GET /work HTTP/1.11\r\n\r\n", want: KindMalformed},
		{name: "header/fold", raw: "GET /work HTTP/1.1\r\nA: b\r\n c\r\n\r\n", want: KindMalformed},
		{name: "header/space-before-colon", raw: get("/work", "Host : x"), want: KindMalformed},
		{name: "header/no-name", raw: get("/work", ": x"), want: KindMalformed},
		{name: "header/no-colon", raw: get("/work", "Host"), want: KindMalformed},
		{name: "header/control-in-value", raw: get("/work", "A: b\x01c"), want: KindMalformed},
		{name: "header/DEL-in-value", raw: get("/work", "A: \x7f"), want: KindMalformed},
		{name: "header/non-token-name", raw: get("/work", "A(b): c"), want: KindMalformed},
		// The meaning, checked once the head is complete.
		{name: "method/POST", raw: "POST /work HTTP/1.1\r\n\r\n", want: KindUnsupported},
		{name: "method/HEAD", raw: "HEAD /work HTTP/1.1\r\n\r\n", want: KindUnsupported},
		{name: "method/lower-case", raw: "get /work HTTP/1.1\r\n\r\n", want: KindUnsupported},
		{name: "version/2.0", raw: "GET /work HTTP/2.0\r\n\r\n", want: KindUnsupported},
		{name: "version/0.9", raw: "GET /work HTTP/0.9\r\n\r\n", want: KindUnsupported},
		{name: "transfer-encoding", raw: get("/work", "Transfer-Encoding: chunked"), want: KindUnsupported},
		{name: "target/asterisk", raw: get("*"), want: KindMalformed},
		{name: "target/absolute-form", raw: get("http://host/work"), want: KindMalformed},
		{name: "path/unknown", raw: get("/nope"), want: KindMalformed},
		{name: "path/root", raw: get("/"), want: KindMalformed},
		{name: "path/trailing-slash", raw: get("/work/"), want: KindMalformed},
		{name: "path/upper-case", raw: get("/Work"), want: KindMalformed},
		{name: "cpu/garbage", raw: get("/work?cpu=abc"), want: KindMalformed},
		{name: "cpu/empty", raw: get("/work?cpu="), want: KindMalformed},
		{name: "cpu/no-value", raw: get("/work?cpu"), want: KindMalformed},
		{name: "cpu/no-unit", raw: get("/work?cpu=20"), want: KindMalformed},
		{name: "cpu/negative", raw: get("/work?cpu=-1us"), want: KindMalformed},
		{name: "cpu/over-limit", raw: get("/work?cpu=1.000000001s"), want: KindMalformed},
		{name: "cpu/overflow", raw: get("/work?cpu=9999999999h"), want: KindMalformed},
		{name: "cpu/bad-later-occurrence", raw: get("/work?cpu=1us&cpu=x"), want: KindMalformed},
		{name: "block/over-limit", raw: get("/work?block=2s"), want: KindMalformed},
		{name: "block/space-escaped", raw: get("/work?block=1s%20"), want: KindMalformed},
		{name: "size/negative", raw: get("/work?size=-1"), want: KindMalformed},
		{name: "size/over-limit", raw: get("/work?size=1001"), want: KindMalformed},
		{name: "size/exponent", raw: get("/work?size=1e3"), want: KindMalformed},
		{name: "size/plus", raw: get("/work?size=+1"), want: KindMalformed},
		{name: "prio/256", raw: get("/work?prio=256"), want: KindMalformed},
		{name: "prio/negative", raw: get("/work?prio=-1"), want: KindMalformed},
		{name: "escape/bad-hex", raw: get("/work?cpu=%zz"), want: KindMalformed},
		{name: "escape/truncated", raw: get("/work?cpu=1%4"), want: KindMalformed},
		{name: "escape/too-long", raw: get("/work?cpu=" + strings.Repeat("%30", maxEscapedValue) + "1s"), want: KindMalformed},
		{name: "balance/no-acct", raw: get("/balance"), want: KindMalformed},
		{name: "balance/acct-empty", raw: get("/balance?acct="), want: KindMalformed},
		{name: "balance/acct-over-u32", raw: get("/balance?acct=4294967296"), want: KindMalformed},
		{name: "deposit/no-amount", raw: get("/deposit?acct=1"), want: KindMalformed},
		{name: "deposit/amount=0", raw: get("/deposit?acct=1&amount=0"), want: KindMalformed},
		{name: "deposit/amount<0", raw: get("/deposit?acct=1&amount=-5"), want: KindMalformed},
		{name: "deposit/amount-over-i64", raw: get("/deposit?acct=1&amount=9223372036854775808"), want: KindMalformed},
		{name: "withdraw/no-acct", raw: get("/withdraw?amount=1"), want: KindMalformed},
		{name: "withdraw/timeout<0", raw: get("/withdraw?acct=1&amount=1&timeout=-1s"), want: KindMalformed},
		{name: "withdraw/timeout-over-limit", raw: get("/withdraw?acct=1&amount=1&timeout=1h"), want: KindMalformed},
		{name: "transfer/no-to", raw: get("/transfer?acct=1&amount=1"), want: KindMalformed},
		{name: "transfer/to-bad", raw: get("/transfer?acct=1&to=x&amount=1"), want: KindMalformed},
		{name: "request-id/letters", raw: get("/work", "X-Request-Id: abc"), want: KindMalformed},
		{name: "request-id/negative", raw: get("/work", "X-Request-Id: -1"), want: KindMalformed},
		{name: "request-id/overflow", raw: get("/work", "X-Request-Id: 18446744073709551616"), want: KindMalformed},
		{name: "request-id/empty", raw: get("/work", "X-Request-Id:"), want: KindMalformed},
		{name: "content-length/letters", raw: get("/work", "Content-Length: 1a"), want: KindMalformed},
		{name: "content-length/negative", raw: get("/work", "Content-Length: -1"), want: KindMalformed},
		{name: "content-length/empty", raw: get("/work", "Content-Length:"), want: KindMalformed},
		{name: "content-length/conflict", raw: get("/work", "Content-Length: 1", "Content-Length: 2"), want: KindMalformed},
		{name: "content-length/conflict-in-list", raw: get("/work", "Content-Length: 1, 2"), want: KindMalformed},
		{name: "content-length/empty-list-item", raw: get("/work", "Content-Length: 1,"), want: KindMalformed},
		// Limits, detected from the head alone.
		{name: "content-length/over-limit", raw: get("/work", "Content-Length: 1001"), want: KindTooLarge},
		{name: "content-length/over-u64", raw: get("/work", "Content-Length: 99999999999999999999999"), want: KindTooLarge},
	}
	c := newCodec(t, "http", lim)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrorPrefixes(t, c.DecodeRequest, []byte(tc.raw), tc.want)
		})
	}
}

// TestHTTPHeaderLimit checks MaxHeader at its edge: a head of exactly
// MaxHeader bytes is accepted, and one byte more is refused as soon as the
// buffer holds more than MaxHeader bytes without the end of the head.
func TestHTTPHeaderLimit(t *testing.T) {
	const max = 256
	c := newCodec(t, "http", Limits{MaxHeader: max})
	// head returns a request head of exactly n bytes.
	head := func(n int) string {
		base := get("/work", "X-Pad: ")
		return get("/work", "X-Pad: "+strings.Repeat("p", n-len(base)))
	}
	t.Run("head=max", func(t *testing.T) {
		mustDecode(t, c.DecodeRequest, []byte(head(max)+"GET"), max)
	})
	t.Run("head=max+1", func(t *testing.T) {
		checkErrorPrefixes(t, c.DecodeRequest, []byte(head(max+1)), KindHeaderTooLarge)
	})
	t.Run("no-end/len=max", func(t *testing.T) {
		raw := []byte(head(max + 100))[:max]
		var got Request
		if n, err := c.DecodeRequest(raw[:max-1], &got); n != 0 || err != nil {
			t.Fatalf("DecodeRequest of %d bytes = %d, %v; want 0, nil", max-1, n, err)
		}
		if _, err := c.DecodeRequest(raw, &got); KindOf(err) != KindHeaderTooLarge {
			t.Fatalf("DecodeRequest of %d bytes: %v; want kind %v", max, err, KindHeaderTooLarge)
		}
	})
	t.Run("long-request-line", func(t *testing.T) {
		checkErrorPrefixes(t, c.DecodeRequest, []byte(get("/work?x="+strings.Repeat("a", max))), KindHeaderTooLarge)
	})
	t.Run("malformed-before-limit", func(t *testing.T) {
		// The first error in the byte stream wins.
		checkErrorPrefixes(t, c.DecodeRequest, []byte(get("/work", "Bad Name: x", "X-Pad: "+strings.Repeat("p", max))), KindMalformed)
	})
	t.Run("response", func(t *testing.T) {
		raw := "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", max) + "\r\nContent-Length: 0\r\n\r\n"
		checkErrorPrefixes(t, c.DecodeResponse, []byte(raw), KindHeaderTooLarge)
	})
}

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		status Status
		code   int
	}{
		{status: StatusOK, code: 200},
		{status: StatusBadRequest, code: 400},
		{status: StatusTooLarge, code: 413},
		{status: StatusNoAccount, code: 404},
		{status: StatusInsufficientFunds, code: 409},
		{status: StatusTimeout, code: 504},
		{status: StatusUnavailable, code: 503},
		{status: StatusInternal, code: 500},
		{status: StatusOverflow, code: 422},
		{status: numStatuses, code: 500},
		{status: 255, code: 500},
	}
	for _, tc := range tests {
		t.Run(tc.status.String(), func(t *testing.T) {
			if got := HTTPStatus(tc.status); got != tc.code {
				t.Errorf("HTTPStatus(%v) = %d, want %d", tc.status, got, tc.code)
			}
			if tc.status < numStatuses {
				if back := statusFromHTTP(tc.code, true); back != tc.status {
					t.Errorf("statusFromHTTP(%d, own) = %v, want %v", tc.code, back, tc.status)
				}
			}
		})
	}
}

// TestHTTPDecodeForeignResponse decodes what other servers send.
func TestHTTPDecodeForeignResponse(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Response
	}{
		{
			name: "nginx",
			raw: "HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\n" +
				"Content-Type: text/html\r\nContent-Length: 5\r\nLast-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n" +
				"Connection: keep-alive\r\nETag: \"abc-5\"\r\nAccept-Ranges: bytes\r\n\r\nhello",
			want: Response{Payload: []byte("hello")},
		},
		{name: "lower-case-headers", raw: "HTTP/1.1 201 Created\r\ncontent-length: 1\r\nx-request-id: 7\r\nx-checksum: DEADbeef\r\nconnection: Close\r\n\r\nx",
			want: Response{ID: 7, Payload: []byte("x"), Checksum: 0xdeadbeef, HasChecksum: true, Close: true}},
		{name: "no-reason", raw: "HTTP/1.1 204\r\nContent-Length: 0\r\n\r\n", want: Response{}},
		{name: "empty-reason", raw: "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusNoAccount}},
		{name: "http1.0", raw: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", want: Response{Close: true}},
		{name: "http1.0/keep-alive", raw: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n", want: Response{}},
		{name: "redirect", raw: "HTTP/1.1 301 Moved Permanently\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusBadRequest}},
		{name: "method-not-allowed", raw: "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusBadRequest}},
		{name: "uri-too-long", raw: "HTTP/1.1 414 URI Too Long\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusTooLarge}},
		{name: "too-many-requests", raw: "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusUnavailable}},
		{name: "bad-gateway", raw: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusUnavailable}},
		{name: "request-timeout", raw: "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusTimeout}},
		{name: "not-implemented", raw: "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusBadRequest}},
		{name: "other-5xx", raw: "HTTP/1.1 599 Whatever\r\nContent-Length: 0\r\n\r\n", want: Response{Status: StatusInternal}},
		// 422 is overflow only in concbench's own response (its checksum
		// verifies); another server's is a plain client error.
		{name: "422/foreign", raw: "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			want: Response{Status: StatusBadRequest, Payload: []byte("{}")}},
		{name: "422/foreign-request-id", raw: "HTTP/1.1 422 Unprocessable Content\r\nX-Request-Id: 7\r\nContent-Length: 0\r\n\r\n",
			want: Response{ID: 7, Status: StatusBadRequest}},
		{name: "422/foreign-checksum", raw: "HTTP/1.1 422 Unprocessable Content\r\nX-Request-Id: 7\r\nX-Checksum: deadbeef\r\nContent-Length: 0\r\n\r\n",
			want: Response{ID: 7, Status: StatusBadRequest, Checksum: 0xdeadbeef, HasChecksum: true}},
		{name: "422/ours", raw: fmt.Sprintf("HTTP/1.1 422 Unprocessable Content\r\nX-Request-Id: 7\r\nX-Checksum: %08x\r\nContent-Length: 0\r\n\r\n", Checksum(7, nil)),
			want: Response{ID: 7, Status: StatusOverflow, Checksum: Checksum(7, nil), HasChecksum: true}},
	}
	c := newCodec(t, "http", Limits{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkDecode(t, c.DecodeResponse, []byte(tc.raw+"HTTP/1.1"), len(tc.raw), tc.want)
		})
	}
}

func TestHTTPDecodeResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want ErrorKind
	}{
		{name: "no-content-length", raw: "HTTP/1.1 200 OK\r\n\r\n", want: KindMalformed},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", want: KindUnsupported},
		{name: "interim", raw: "HTTP/1.1 100 Continue\r\n\r\n", want: KindUnsupported},
		{name: "code/099", raw: "HTTP/1.1 099 X\r\nContent-Length: 0\r\n\r\n", want: KindMalformed},
		{name: "code/600", raw: "HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n", want: KindMalformed},
		{name: "code/two-digits", raw: "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", want: KindMalformed},
		{name: "code/four-digits", raw: "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", want: KindMalformed},
		{name: "status-line/request", raw: "GET / HTTP/1.1\r\n\r\n", want: KindMalformed},
		{name: "status-line/binary", raw: "CR\x01\x00", want: KindMalformed},
		{name: "status-line/bare-LF", raw: "HTTP/1.1 200 OK\n\r\n", want: KindMalformed},
		{name: "status-line/control", raw: "HTTP/1.1 200 O\x00K\r\n\r\n", want: KindMalformed},
		{name: "version/2.0", raw: "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", want: KindUnsupported},
		{name: "checksum/short", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Checksum: abc\r\n\r\n", want: KindMalformed},
		{name: "checksum/not-hex", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Checksum: 0000000g\r\n\r\n", want: KindMalformed},
		{name: "request-id/bad", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Request-Id: 1.5\r\n\r\n", want: KindMalformed},
		{name: "content-length/over-limit", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n", want: KindTooLarge},
	}
	c := newCodec(t, "http", Limits{MaxPayload: 1000})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrorPrefixes(t, c.DecodeResponse, []byte(tc.raw), tc.want)
		})
	}
}

// TestHTTPEncoding pins the bytes the encoders write.
func TestHTTPEncoding(t *testing.T) {
	c := &HTTP{}
	const errBody = "Bad Request: http: prio: want 0..255\n"
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{name: "request/minimal", got: c.AppendRequest(nil, &Request{}),
			want: "GET /work HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 0\r\n\r\n"},
		{name: "request/work", got: c.AppendRequest(nil, &Request{ID: 42, Op: OpWork, CPU: 20 * time.Microsecond,
			Block: 1500 * time.Microsecond, Size: 64, Priority: 2, Payload: []byte("abc"), Close: true}),
			want: "GET /work?cpu=20us&block=1500us&size=64&prio=2 HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 42\r\n" +
				"Content-Length: 3\r\nConnection: close\r\n\r\nabc"},
		{name: "request/odd-durations", got: c.AppendRequest(nil, &Request{Op: OpWork, CPU: 2 * time.Second, Block: 1001}),
			want: "GET /work?cpu=2s&block=1001ns HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 0\r\n\r\n"},
		{name: "request/balance", got: c.AppendRequest(nil, &Request{ID: 1, Op: OpBalance, Amount: 9}),
			want: "GET /balance?acct=0 HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 1\r\n\r\n"},
		{name: "request/withdraw", got: c.AppendRequest(nil, &Request{ID: 1, Op: OpWithdraw, Account: 3, Amount: 7, Timeout: time.Millisecond}),
			want: "GET /withdraw?acct=3&amount=7&timeout=1ms HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 1\r\n\r\n"},
		{name: "request/transfer", got: c.AppendRequest(nil, &Request{ID: 1, Op: OpTransfer, Account: 3, To: 4, Amount: 7, CPU: time.Microsecond}),
			want: "GET /transfer?cpu=1us&acct=3&to=4&amount=7 HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 1\r\n\r\n"},
		{name: "request/invalid-op", got: c.AppendRequest(nil, &Request{Op: 9}),
			want: "GET /op(9) HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 0\r\n\r\n"},
		{name: "response", got: c.AppendResponse(nil, &Response{ID: 42, Payload: []byte("hello")}),
			want: "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\nX-Request-Id: 42\r\n" +
				"X-Checksum: " + string(appendHex32(nil, Checksum(42, []byte("hello")))) + "\r\n\r\nhello"},
		{name: "response/close", got: c.AppendResponse(nil, &Response{ID: 1, Status: StatusTimeout, Close: true}),
			want: "HTTP/1.1 504 Gateway Timeout\r\nContent-Type: application/octet-stream\r\nContent-Length: 0\r\nX-Request-Id: 1\r\n" +
				"X-Checksum: " + string(appendHex32(nil, Checksum(1, nil))) + "\r\nConnection: close\r\n\r\n"},
		{name: "error", got: c.AppendError(nil, errParamPrio),
			want: "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 37\r\nX-Request-Id: 0\r\n" +
				"X-Checksum: " + string(appendHex32(nil, Checksum(0, []byte(errBody)))) + "\r\nConnection: close\r\n\r\n" + errBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Errorf("encoded\n%q\nwant\n%q", tc.got, tc.want)
			}
		})
	}
}

// TestHTTPAppendErrorCodes checks the status code of each error kind.
func TestHTTPAppendErrorCodes(t *testing.T) {
	tests := []struct {
		name string
		err  error
		line string
	}{
		{name: "malformed", err: ErrMalformed, line: "HTTP/1.1 400 Bad Request\r\n"},
		{name: "too-large", err: errHTTPBodyTooLarge, line: "HTTP/1.1 413 Content Too Large\r\n"},
		{name: "header-too-large", err: errHeadTooLarge, line: "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
		{name: "unsupported", err: errHTTPTransferCode, line: "HTTP/1.1 501 Not Implemented\r\n"},
		{name: "other", err: errTest, line: "HTTP/1.1 500 Internal Server Error\r\n"},
	}
	c := &HTTP{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(c.AppendError(nil, tc.err))
			if !strings.HasPrefix(got, tc.line) {
				t.Errorf("error response %q does not start with %q", got, tc.line)
			}
			if e, ok := tc.err.(*Error); ok && e.Msg != "" && !strings.Contains(got, e.Msg) {
				t.Errorf("error response %q does not name the problem %q", got, e.Msg)
			}
		})
	}
}
