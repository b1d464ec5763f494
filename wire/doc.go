// Package wire defines the two protocols every model speaks — a binary framed
// protocol and HTTP/1.1 with keep-alive and pipelining — behind one Codec
// interface, so that protocol handling is identical across models. This
// comment specifies both protocols completely enough for an outside client
// to implement them.
//
// # Using a codec
//
// New returns the codec for a protocol name with validated Limits. A Codec is
// stateless and safe for concurrent use. Decoding is incremental: a server
// appends what it reads from a connection to a buffer and calls
// DecodeRequest until it returns (0, nil), which means "need more bytes";
// each call decodes at most one request from the front of the buffer and
// returns its length, which the caller then drops. Requests split across
// reads and many requests in one read (HTTP pipelining) are both normal.
//
//	for {
//		n, err := codec.DecodeRequest(buf, &req)
//		if err != nil { // *Error: the connection can never recover
//			write(codec.AppendError(out[:0], err)); close(); return
//		}
//		if n == 0 {
//			break // read more, append to buf, call again
//		}
//		// handle req (req.Payload aliases buf) and append the response
//		buf = buf[n:]
//	}
//
// DecodeRequest does not allocate; AppendRequest and AppendResponse allocate
// only to grow the slice they append to. Responses on a connection are sent
// in request order.
//
// MaxWork, MaxPayload and MaxHeader below are the fields of the server's
// Limits: by default 10s (DefaultMaxWork), 1 MiB (DefaultMaxPayload) and
// 8 KiB (DefaultMaxHeader).
//
// # Binary protocol
//
// All integers are little-endian; "ns" fields are signed 64-bit nanosecond
// counts. A request is a 40-byte header followed by the payload:
//
//	offset size field
//	0      2    magic: 'C' 'B' (0x43 0x42)
//	2      1    version: 1
//	3      1    op: 0 work, 1 balance, 2 deposit, 3 withdraw, 4 transfer, 5 total
//	4      1    priority: 0 (lowest) .. 255
//	5      3    reserved: zero
//	8      8    request id (u64), echoed in the response
//	16     8    cpu work, ns: 0 .. MaxWork
//	24     8    block work, ns: 0 .. MaxWork
//	32     4    response size (u32): payload bytes an OpWork response carries, 0 .. MaxPayload
//	36     4    payload length (u32): 0 .. MaxPayload
//	40     ...  payload
//
// OpWork's payload is opaque (the server reads and ignores it). A ledger op's
// payload is its arguments, and its length must be exactly:
//
//	op        length  payload
//	balance    4      account u32
//	deposit   12      account u32, amount i64 (> 0)
//	withdraw  20      account u32, amount i64 (> 0), timeout ns i64 (0 .. MaxWork; 0: do not wait)
//	transfer  16      from account u32, to account u32, amount i64 (> 0)
//	total      0      (none)
//
// A response is a 24-byte header followed by the payload:
//
//	offset size field
//	0      2    magic: 'C' 'R' (0x43 0x52)
//	2      1    version: 1
//	3      1    status: 0 ok, 1 bad_request, 2 too_large, 3 no_account,
//	            4 insufficient_funds, 5 timeout, 6 unavailable, 7 internal,
//	            8 overflow
//	4      4    reserved: zero
//	8      8    request id (u64) of the request answered
//	16     4    payload length (u32): 0 .. MaxPayload
//	20     4    checksum (u32): CRC-32C (Castagnoli polynomial) of the request id
//	            as 8 little-endian bytes followed by the payload (see Checksum)
//	24     ...  payload
//
// An OpWork response's payload is Size bytes of the pattern AppendBody
// describes; a ledger response's payload is the service's answer (package
// service).
//
// The server checks each header field as soon as the header bytes that hold
// it have arrived, in offset order, so a bad frame is refused without
// waiting for the rest of it: a wrong magic, reserved bytes that are not
// zero, an unknown op, work outside 0..MaxWork, a response size over
// MaxPayload, a ledger payload of the wrong length, a non-positive amount or
// a timeout outside 0..MaxWork is KindMalformed; a version other than 1 is
// KindUnsupported; a payload length over MaxPayload is KindTooLarge. It then
// answers with a response with id 0, an empty payload and status
// bad_request (malformed, unsupported) or too_large, and closes the
// connection. A binary connection is closed by the client; there is no
// close flag.
//
// # HTTP/1.1
//
// A request is a GET of an op's path with the work in the query:
//
//	GET /work?cpu=20us&block=0&size=64&prio=0 HTTP/1.1
//	GET /transfer?acct=1&to=2&amount=100 HTTP/1.1
//
// The paths are /work, /balance, /deposit, /withdraw, /transfer and /total
// (the ops' names); any other path is 400 Bad Request. The query parameters:
//
//	name     value                               ops                    absent
//	cpu      Go duration, 0 .. MaxWork           all                    0: no CPU work
//	block    Go duration, 0 .. MaxWork           all                    0: no blocking work
//	size     decimal bytes, 0 .. MaxPayload      all (work uses it)     0: empty body
//	prio     decimal 0 .. 255                    all                    0
//	acct     decimal u32                         balance deposit        required
//	                                             withdraw transfer
//	to       decimal u32                         transfer               required
//	amount   decimal i64, > 0                    deposit withdraw       required
//	                                             transfer
//	timeout  Go duration, 0 .. MaxWork           withdraw               0: do not wait
//
// Go duration syntax is that of time.ParseDuration: a sequence of decimal
// numbers, each with an optional fraction and a unit (ns, us, µs, ms, s, m,
// h), as in "20us", "1.5ms", "1h2m"; "0" needs no unit. Parameter names are
// lower case and matched exactly. A value may be percent-encoded (%C2%B5s
// for µs, up to 64 decoded bytes); '+' is a plus sign. Unknown parameters,
// and ledger parameters of ops that take no such argument, are ignored
// (clients add cache busters). If a parameter repeats, each occurrence must
// be valid and the last one counts. A known parameter with a bad value, or
// a required one missing, is 400 Bad Request. The request target must be in
// origin form (/path?query).
//
// Headers are case-insensitive and may appear in any order; these are read,
// all others ignored:
//
//	Connection: close        the server closes after the response (a token
//	                         in a comma-separated list); for HTTP/1.0 the
//	                         server closes unless the list has keep-alive
//	X-Request-Id: <u64>      the request id, echoed in the response; 0 if absent
//	Content-Length: <n>      a body of n bytes follows, 0 .. MaxPayload (more is
//	                         413); repeats must agree
//	Transfer-Encoding        not implemented: 501
//
// The head — request line, headers and the empty line that ends them — may
// be at most MaxHeader bytes (more is 431, sent as soon as the server holds
// MaxHeader bytes without the end of the head). Host is not required. Lines
// must end in CRLF; a bare LF, a control character, a header line without
// "name:" or a folded header line is 400. Methods other than GET and versions
// other than HTTP/1.1 and HTTP/1.0 are 501.
//
// A response is:
//
//	HTTP/1.1 200 OK\r\n
//	Content-Type: application/octet-stream\r\n
//	Content-Length: <n>\r\n
//	X-Request-Id: <id>\r\n
//	X-Checksum: <8 lower-case hex digits: the binary protocol's checksum>\r\n
//	Connection: close\r\n        (only when the server closes after it)
//	\r\n
//	<n bytes of payload>
//
// The status code carries the Status (see HTTPStatus):
//
//	status              code
//	ok                  200 OK
//	bad_request         400 Bad Request
//	too_large           413 Content Too Large
//	no_account          404 Not Found
//	insufficient_funds  409 Conflict
//	timeout             504 Gateway Timeout (not 408, which clients may retry)
//	unavailable         503 Service Unavailable
//	internal            500 Internal Server Error
//	overflow            422 Unprocessable Content
//
// A request that fails to decode gets 400 (malformed), 413 (body too large),
// 431 (head too large) or 501 (not implemented) with "Connection: close", a
// one-line text body naming the problem, X-Request-Id 0 and its checksum;
// then the server closes the connection.
//
// The client side (AppendRequest, DecodeResponse) speaks the same syntax.
// DecodeResponse accepts other servers' responses too, provided they carry
// Content-Length; it maps unlisted codes to the nearest Status (2xx to ok,
// 408 to timeout, 429, 502 to unavailable, 414, 431 to too_large, 501, 505
// and other 3xx and 4xx to bad_request, other 5xx to internal). 422 is
// overflow only in concbench's own response, one whose X-Checksum is the
// checksum of its id and body; another server's 422 is bad_request.
package wire
