package wire

import (
	"bytes"
	"errors"
	"strconv"
	"time"
)

// HTTP is HTTP/1.1 with keep-alive and pipelining, restricted to what the
// benchmark needs: GET requests whose path names the op and whose query
// carries the work (see the package documentation). Get one from New, which
// validates the limits; the zero value uses the default limits.
type HTTP struct{ lim Limits }

var _ Codec = (*HTTP)(nil)

// Decode errors of the HTTP protocol (the head's syntax errors are in
// head.go). They are preallocated so that the error path allocates nothing
// either.
var (
	errHTTPMethod        = &Error{Kind: KindUnsupported, Msg: "http: method not implemented (accepted: GET)"}
	errHTTPVersion       = &Error{Kind: KindUnsupported, Msg: "http: version not supported (accepted: HTTP/1.1, HTTP/1.0)"}
	errHTTPTransferCode  = &Error{Kind: KindUnsupported, Msg: "http: Transfer-Encoding not supported (send Content-Length)"}
	errHTTPInterim       = &Error{Kind: KindUnsupported, Msg: "http: 1xx interim responses not supported"}
	errHTTPContentLength = &Error{Kind: KindMalformed, Msg: "http: invalid or conflicting Content-Length"}
	errHTTPNoLength      = &Error{Kind: KindMalformed, Msg: "http: response without Content-Length"}
	errHTTPBodyTooLarge  = &Error{Kind: KindTooLarge, Msg: "http: Content-Length over the limit"}
	errHTTPRequestID     = &Error{Kind: KindMalformed, Msg: "http: invalid X-Request-Id (want a decimal uint64)"}
	errHTTPChecksum      = &Error{Kind: KindMalformed, Msg: "http: invalid X-Checksum (want 8 hex digits)"}
	errHTTPStatusCode    = &Error{Kind: KindMalformed, Msg: "http: status code out of range 100..599"}
	errHTTPTarget        = &Error{Kind: KindMalformed, Msg: "http: request target not in origin form (/path?query)"}
	errHTTPPath          = &Error{Kind: KindMalformed, Msg: "http: unknown path (accepted: /work, /balance, /deposit, /withdraw, /transfer, /total)"}
	errHTTPEscape        = &Error{Kind: KindMalformed, Msg: "http: bad percent-encoding in a query value"}
	errParamCPU          = &Error{Kind: KindMalformed, Msg: "http: cpu: want a Go duration from 0 to the work limit"}
	errParamBlock        = &Error{Kind: KindMalformed, Msg: "http: block: want a Go duration from 0 to the work limit"}
	errParamTimeout      = &Error{Kind: KindMalformed, Msg: "http: timeout: want a Go duration from 0 to the work limit"}
	errParamSize         = &Error{Kind: KindMalformed, Msg: "http: size: want a byte count from 0 to the payload limit"}
	errParamPrio         = &Error{Kind: KindMalformed, Msg: "http: prio: want 0..255"}
	errParamAcct         = &Error{Kind: KindMalformed, Msg: "http: acct: missing or not a uint32"}
	errParamTo           = &Error{Kind: KindMalformed, Msg: "http: to: missing or not a uint32"}
	errParamAmount       = &Error{Kind: KindMalformed, Msg: "http: amount: missing or not a positive int64"}
)

// Protocol returns "http".
func (*HTTP) Protocol() string { return "http" }

// httpStatuses maps each Status to its HTTP status code and reason phrase;
// statusFromHTTP must invert it (for concbench's own responses).
var httpStatuses = [numStatuses]struct {
	code   int
	reason string
}{
	StatusOK:                {200, "OK"},
	StatusBadRequest:        {400, "Bad Request"},
	StatusTooLarge:          {413, "Content Too Large"},
	StatusNoAccount:         {404, "Not Found"},
	StatusInsufficientFunds: {409, "Conflict"},
	// Note: not 408 Request Timeout, which means the client was too slow to
	// send its request, and which clients may answer by silently retrying
	// (RFC 9110 section 15.5.9): a retried withdrawal would run twice.
	StatusTimeout:     {504, "Gateway Timeout"},
	StatusUnavailable: {503, "Service Unavailable"},
	StatusInternal:    {500, "Internal Server Error"},
	// A well-formed request the ledger cannot carry out without exceeding
	// its limit: not 400, which this server answers by closing the
	// connection, nor 409, which is insufficient funds.
	StatusOverflow: {422, "Unprocessable Content"},
}

// statusLines holds "HTTP/1.1 <code> <reason>\r\n" for each Status, so that
// encoding a response copies one string.
var statusLines = func() (l [numStatuses]string) {
	for s, h := range httpStatuses {
		l[s] = "HTTP/1.1 " + strconv.Itoa(h.code) + " " + h.reason + "\r\n"
	}
	return l
}()

// HTTPStatus returns the HTTP status code that carries s: ok 200,
// bad_request 400, too_large 413, no_account 404, insufficient_funds 409,
// timeout 504, unavailable 503, internal 500, overflow 422; an undefined
// Status gives 500.
// DecodeResponse maps each of these codes back to its Status.
func HTTPStatus(s Status) int {
	if s < numStatuses {
		return httpStatuses[s].code
	}
	return 500
}

// statusFromHTTP maps an HTTP status code (200..599) to the nearest Status.
// It inverts HTTPStatus on that function's codes, and maps the codes other
// servers send (and this package's AppendError) to the Status that means
// the same to a client. own reports whether the response is concbench's
// own (ownResponse): 422 is overflow only then. Another server's 422 means
// whatever that server means by it (a validation failure, most often),
// and is bad_request like any other 4xx: read as overflow it would tell a
// client that a foreign ledger hit its limit.
func statusFromHTTP(code int, own bool) Status {
	switch code {
	case 400, 405, 501, 505:
		return StatusBadRequest
	case 413, 414, 431:
		return StatusTooLarge
	case 404:
		return StatusNoAccount
	case 409:
		return StatusInsufficientFunds
	case 422:
		if own {
			return StatusOverflow
		}
		return StatusBadRequest
	case 408, 504:
		return StatusTimeout
	case 429, 502, 503:
		return StatusUnavailable
	}
	switch code / 100 {
	case 2:
		return StatusOK
	case 3, 4:
		return StatusBadRequest
	}
	return StatusInternal
}

// DecodeRequest decodes the HTTP request at the front of buf (see Codec and
// the package documentation for the accepted syntax). The head is checked
// as it arrives: garbage is refused at its first byte, a head over
// MaxHeader bytes as soon as buf holds MaxHeader bytes without its end, and
// a Content-Length over MaxPayload as soon as the head is complete.
func (c *HTTP) DecodeRequest(buf []byte, req *Request) (int, error) {
	lim := c.lim.WithDefaults()
	headLen, err := scanHead(buf, lim.MaxHeader, true)
	if headLen == 0 {
		return 0, err
	}
	start, headers := splitHead(buf[:headLen])
	sp1 := bytes.IndexByte(start, ' ')
	sp2 := sp1 + 1 + bytes.IndexByte(start[sp1+1:], ' ')
	method, target, version := start[:sp1], start[sp1+1:sp2], start[sp2+1:]
	if string(method) != "GET" {
		return 0, errHTTPMethod
	}
	var r Request
	keepAlive := false
	switch string(version) {
	case "HTTP/1.1":
		keepAlive = true
	case "HTTP/1.0":
	default:
		return 0, errHTTPVersion
	}
	if err := parseTarget(target, &r, &lim); err != nil {
		return 0, err
	}
	m, err := parseHeaders(headers, false, &r.ID, &keepAlive)
	if err != nil {
		return 0, err
	}
	r.Close = !keepAlive
	if m.length > uint64(lim.MaxPayload) {
		return 0, errHTTPBodyTooLarge
	}
	total := headLen + int(m.length)
	if len(buf) < total {
		return 0, nil
	}
	if total > headLen {
		r.Payload = buf[headLen:total:total]
	}
	*req = r
	return total, nil
}

// messageHeaders is what parseHeaders found.
type messageHeaders struct {
	length    uint64 // Content-Length, saturated at the maximum uint64
	hasLength bool
	checksum  uint32 // X-Checksum
	hasSum    bool
}

// parseHeaders reads the headers this package interprets and ignores the
// others: Content-Length (which may repeat, or be a list, only with equal
// values), Transfer-Encoding (refused), Connection (close and keep-alive
// update *keepAlive, with close winning), X-Request-Id (into *id) and, in a
// response, X-Checksum.
func parseHeaders(h headerLines, response bool, id *uint64, keepAlive *bool) (messageHeaders, error) {
	var m messageHeaders
	closing := false
	for {
		name, value, ok := h.next()
		if !ok {
			break
		}
		switch {
		case equalFold(name, "content-length"):
			for list := value; ; {
				var tok []byte
				tok, list = nextToken(list)
				if !isDigits(tok) {
					return m, errHTTPContentLength
				}
				n, ok := parseUint(tok)
				if !ok {
					n = 1<<64 - 1 // over any limit
				}
				if m.hasLength && n != m.length {
					return m, errHTTPContentLength
				}
				m.length, m.hasLength = n, true
				if list == nil {
					break
				}
			}
		case equalFold(name, "transfer-encoding"):
			return m, errHTTPTransferCode
		case equalFold(name, "connection"):
			for list := value; len(list) > 0; {
				var tok []byte
				tok, list = nextToken(list)
				switch {
				case equalFold(tok, "close"):
					closing = true
				case equalFold(tok, "keep-alive"):
					*keepAlive = true
				}
			}
		case equalFold(name, "x-request-id"):
			n, ok := parseUint(value)
			if !ok {
				return m, errHTTPRequestID
			}
			*id = n
		case response && equalFold(name, "x-checksum"):
			sum, ok := parseHex32(value)
			if !ok {
				return m, errHTTPChecksum
			}
			m.checksum, m.hasSum = sum, true
		}
	}
	if closing {
		*keepAlive = false
	}
	return m, nil
}

// parseHex32 parses exactly 8 hexadecimal digits (either case).
func parseHex32(b []byte) (uint32, bool) {
	if len(b) != 8 {
		return 0, false
	}
	var v uint32
	for _, c := range b {
		d, ok := unhex(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint32(d)
	}
	return v, true
}

// The query parameters; paramOf must match.
const (
	paramCPU = iota
	paramBlock
	paramSize
	paramPrio
	paramAcct
	paramTo
	paramAmount
	paramTimeout
	paramNone = -1
)

// paramOf returns the parameter named key if op uses it, else paramNone.
// The ledger parameters are ignored, like unknown ones, by ops that take no
// such argument, so that every codec gives a Request the same fields.
func paramOf(key []byte, op Op) int {
	switch string(key) {
	case "cpu":
		return paramCPU
	case "block":
		return paramBlock
	case "size":
		return paramSize
	case "prio":
		return paramPrio
	case "acct":
		if op != OpWork && op != OpTotal {
			return paramAcct
		}
	case "to":
		if op == OpTransfer {
			return paramTo
		}
	case "amount":
		if needsAmount(op) {
			return paramAmount
		}
	case "timeout":
		if op == OpWithdraw {
			return paramTimeout
		}
	}
	return paramNone
}

// maxEscapedValue bounds a query value that contains percent-encoding: it
// is decoded into a buffer of this size on the stack. Unescaped values have
// no bound beyond MaxHeader.
const maxEscapedValue = 64

// parseTarget sets r.Op from the path of an origin-form request target and
// the work and ledger fields from its query.
func parseTarget(target []byte, r *Request, lim *Limits) error {
	if len(target) == 0 || target[0] != '/' {
		return errHTTPTarget
	}
	path, query := target, []byte(nil)
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		path, query = target[:i], target[i+1:]
	}
	op, ok := opOfPath(path[1:])
	if !ok {
		return errHTTPPath
	}
	r.Op = op
	var seen [paramTimeout + 1]bool
	var scratch [maxEscapedValue]byte
	for len(query) > 0 {
		var field []byte
		field, query = cut(query, '&')
		key, raw := cut(field, '=')
		p := paramOf(key, op)
		if p == paramNone {
			continue // unknown parameters are ignored: clients add cache busters
		}
		v, ok := unescape(raw, scratch[:0])
		if !ok {
			return errHTTPEscape
		}
		seen[p] = true
		switch p {
		case paramCPU:
			if r.CPU, ok = parseWork(v, lim); !ok {
				return errParamCPU
			}
		case paramBlock:
			if r.Block, ok = parseWork(v, lim); !ok {
				return errParamBlock
			}
		case paramTimeout:
			if r.Timeout, ok = parseWork(v, lim); !ok {
				return errParamTimeout
			}
		case paramSize:
			n, ok := parseUint(v)
			if !ok || n > uint64(lim.MaxPayload) {
				return errParamSize
			}
			r.Size = int(n)
		case paramPrio:
			n, ok := parseUint(v)
			if !ok || n > 255 {
				return errParamPrio
			}
			r.Priority = uint8(n)
		case paramAcct, paramTo:
			n, ok := parseUint(v)
			if !ok || n > 1<<32-1 {
				if p == paramTo {
					return errParamTo
				}
				return errParamAcct
			}
			if p == paramTo {
				r.To = uint32(n)
			} else {
				r.Account = uint32(n)
			}
		case paramAmount:
			n, ok := parseUint(v)
			if !ok || n == 0 || n > 1<<63-1 {
				return errParamAmount
			}
			r.Amount = int64(n)
		}
	}
	switch {
	case op != OpWork && op != OpTotal && !seen[paramAcct]:
		return errParamAcct
	case op == OpTransfer && !seen[paramTo]:
		return errParamTo
	case needsAmount(op) && !seen[paramAmount]:
		return errParamAmount
	}
	return nil
}

// opOfPath returns the op whose name is path (without its leading slash).
func opOfPath(path []byte) (Op, bool) {
	for i, name := range opNames {
		if string(path) == name {
			return Op(i), true
		}
	}
	return 0, false
}

// parseWork parses a duration parameter: Go syntax, from 0 to MaxWork.
func parseWork(v []byte, lim *Limits) (time.Duration, bool) {
	d, ok := parseDuration(v)
	return d, ok && workOK(int64(d), lim)
}

// cut splits b around the first sep; rest is nil if there is none.
func cut(b []byte, sep byte) (before, rest []byte) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// unescape decodes the percent-encoding in a query value, appending to dst
// (a small buffer) if there is any; a value without '%' is returned as it
// is. '+' is a plus sign, not a space: this is a URI query (RFC 3986), not
// an HTML form.
func unescape(v, dst []byte) ([]byte, bool) {
	if bytes.IndexByte(v, '%') < 0 {
		return v, true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' {
			if i+2 >= len(v) {
				return nil, false
			}
			hi, ok1 := unhex(v[i+1])
			lo, ok2 := unhex(v[i+2])
			if !ok1 || !ok2 {
				return nil, false
			}
			c = hi<<4 | lo
			i += 2
		}
		if len(dst) == cap(dst) {
			return nil, false // longer than any valid value
		}
		dst = append(dst, c)
	}
	return dst, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case isDigit(c):
		return c - '0', true
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return c | 0x20 - 'a' + 10, true
	}
	return 0, false
}

// AppendRequest appends req as an HTTP/1.1 GET request (see Codec): the op
// is the path, and the parameters with non-zero values are the query, in
// the order cpu, block, size, prio, then the op's ledger arguments (acct,
// to and amount always, timeout if non-zero). ID is sent as X-Request-Id,
// a non-empty Payload as the body with Content-Length, and Close as
// "Connection: close". It allocates only to grow dst.
func (*HTTP) AppendRequest(dst []byte, req *Request) []byte {
	dst = append(dst, "GET /"...)
	if req.Op.Valid() {
		dst = append(dst, opNames[req.Op]...)
	} else {
		dst = append(dst, req.Op.String()...) // refused by the server, on purpose
	}
	sep := byte('?')
	if req.CPU != 0 {
		dst = appendDuration(appendKey(dst, &sep, "cpu="), req.CPU)
	}
	if req.Block != 0 {
		dst = appendDuration(appendKey(dst, &sep, "block="), req.Block)
	}
	if req.Size != 0 {
		dst = strconv.AppendInt(appendKey(dst, &sep, "size="), int64(req.Size), 10)
	}
	if req.Priority != 0 {
		dst = strconv.AppendUint(appendKey(dst, &sep, "prio="), uint64(req.Priority), 10)
	}
	if req.Op.Valid() && req.Op != OpWork && req.Op != OpTotal {
		dst = strconv.AppendUint(appendKey(dst, &sep, "acct="), uint64(req.Account), 10)
	}
	if req.Op == OpTransfer {
		dst = strconv.AppendUint(appendKey(dst, &sep, "to="), uint64(req.To), 10)
	}
	if needsAmount(req.Op) {
		dst = strconv.AppendInt(appendKey(dst, &sep, "amount="), req.Amount, 10)
	}
	if req.Op == OpWithdraw && req.Timeout != 0 {
		dst = appendDuration(appendKey(dst, &sep, "timeout="), req.Timeout)
	}
	dst = append(dst, " HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: "...)
	dst = strconv.AppendUint(dst, req.ID, 10)
	dst = append(dst, "\r\n"...)
	if len(req.Payload) > 0 {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(req.Payload)), 10)
		dst = append(dst, "\r\n"...)
	}
	if req.Close {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, req.Payload...)
}

// appendKey appends *sep ('?' before the first parameter, then '&') and
// key, which includes its '='.
func appendKey(dst []byte, sep *byte, key string) []byte {
	dst = append(dst, *sep)
	*sep = '&'
	return append(dst, key...)
}

// AppendResponse appends resp as an HTTP/1.1 response (see Codec and the
// package documentation): the status code from HTTPStatus, Content-Type
// application/octet-stream, Content-Length, X-Request-Id, X-Checksum with
// Checksum(resp.ID, resp.Payload), and "Connection: close" if resp.Close.
// It allocates only to grow dst.
//
// Note: there is no Date header, though RFC 9110 asks an origin server with
// a clock for one: it would cost a clock read and a formatting per
// response in every model, and no benchmark client reads it.
func (h *HTTP) AppendResponse(dst []byte, resp *Response) []byte {
	return appendPatternBody(h.AppendResponseHead(dst, resp), resp)
}

// AppendResponseHead is AppendResponse without a Pattern body (see Codec).
func (*HTTP) AppendResponseHead(dst []byte, resp *Response) []byte {
	if resp.Status < numStatuses {
		dst = append(dst, statusLines[resp.Status]...)
	} else {
		dst = append(dst, statusLines[StatusInternal]...)
	}
	if resp.Pattern > 0 {
		return appendHeaders(dst, "application/octet-stream", resp.ID, resp.Pattern, PatternChecksum(resp.ID, resp.Pattern), resp.Close)
	}
	return appendResponseHeaders(dst, "application/octet-stream", resp.ID, resp.Payload, resp.Close)
}

// appendResponseHeaders appends the headers after the status line, the
// empty line and the payload.
func appendResponseHeaders(dst []byte, contentType string, id uint64, payload []byte, closing bool) []byte {
	dst = appendHeaders(dst, contentType, id, len(payload), Checksum(id, payload), closing)
	return append(dst, payload...)
}

// appendHeaders appends the headers after the status line and the empty
// line, for a body of n bytes with checksum sum.
func appendHeaders(dst []byte, contentType string, id uint64, n int, sum uint32, closing bool) []byte {
	dst = append(dst, "Content-Type: "...)
	dst = append(dst, contentType...)
	dst = append(dst, "\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, "\r\nX-Request-Id: "...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, "\r\nX-Checksum: "...)
	dst = appendHex32(dst, sum)
	dst = append(dst, "\r\n"...)
	if closing {
		dst = append(dst, "Connection: close\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// appendHex32 appends v as 8 lower-case hexadecimal digits.
func appendHex32(dst []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, digits[v>>uint(shift)&0xf])
	}
	return dst
}

// AppendError appends the response to a request that failed to decode with
// err: 400 Bad Request (KindMalformed), 413 Content Too Large (KindTooLarge),
// 431 Request Header Fields Too Large (KindHeaderTooLarge), 501 Not
// Implemented (KindUnsupported), or 500 for an error that is not an *Error.
// It carries "Connection: close", X-Request-Id 0, and a one-line text body
// naming the problem.
func (*HTTP) AppendError(dst []byte, err error) []byte {
	code, reason := 500, "Internal Server Error"
	switch KindOf(err) {
	case KindMalformed:
		code, reason = 400, "Bad Request"
	case KindTooLarge:
		code, reason = 413, "Content Too Large"
	case KindHeaderTooLarge:
		code, reason = 431, "Request Header Fields Too Large"
	case KindUnsupported:
		code, reason = 501, "Not Implemented"
	}
	var a [160]byte
	body := append(a[:0], reason...)
	var e *Error
	if errors.As(err, &e) && e.Msg != "" {
		body = append(append(body, ": "...), e.Msg...)
	}
	body = append(body, '\n')

	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(append(append(dst, ' '), reason...), "\r\n"...)
	return appendResponseHeaders(dst, "text/plain; charset=utf-8", 0, body, true)
}

// DecodeResponse decodes the HTTP response at the front of buf (see Codec).
// It accepts any HTTP/1.0 or HTTP/1.1 server's response that has a
// Content-Length (one without is malformed; Transfer-Encoding and 1xx
// interim responses are unsupported) and ignores headers it does not know.
// The status code maps to the nearest Status (every 2xx to StatusOK; the
// codes HTTPStatus returns to their Status, where 422 is StatusOverflow
// only in concbench's own response, see ownResponse, and otherwise
// StatusBadRequest like any 4xx). X-Request-Id sets ID (0 if
// absent); X-Checksum sets Checksum and HasChecksum, unverified, as the
// client verifies it; Close is set by "Connection: close", or by HTTP/1.0
// without "Connection: keep-alive".
func (c *HTTP) DecodeResponse(buf []byte, resp *Response) (int, error) {
	lim := c.lim.WithDefaults()
	headLen, err := scanHead(buf, lim.MaxHeader, false)
	if headLen == 0 {
		return 0, err
	}
	start, headers := splitHead(buf[:headLen])
	// scanHead checked the syntax "HTTP/d.d ddd..."
	keepAlive := false
	switch string(start[:len(httpVersionPattern)]) {
	case "HTTP/1.1":
		keepAlive = true
	case "HTTP/1.0":
	default:
		return 0, errHTTPVersion
	}
	code := int(start[9]-'0')*100 + int(start[10]-'0')*10 + int(start[11]-'0')
	switch {
	case code < 100 || code > 599:
		return 0, errHTTPStatusCode
	case code < 200:
		return 0, errHTTPInterim
	}
	var r Response
	m, err := parseHeaders(headers, true, &r.ID, &keepAlive)
	switch {
	case err != nil:
		return 0, err
	case !m.hasLength:
		return 0, errHTTPNoLength
	case m.length > uint64(lim.MaxPayload):
		return 0, errHTTPBodyTooLarge
	}
	total := headLen + int(m.length)
	if len(buf) < total {
		return 0, nil
	}
	r.Close = !keepAlive
	r.Checksum, r.HasChecksum = m.checksum, m.hasSum
	if total > headLen {
		r.Payload = buf[headLen:total:total]
	}
	r.Status = statusFromHTTP(code, code == 422 && ownResponse(&r))
	*resp = r
	return total, nil
}

// ownResponse reports whether the decoded response r is a concbench
// server's own: it carries X-Checksum, and the checksum is that of its id
// and body, as AppendResponse and AppendError write it in every response.
// Another server's response does not carry concbench's checksum (a header
// of that name with another meaning would not match). DecodeResponse asks
// only for a 422, the one code whose meaning is concbench's own, so other
// responses cost no checksum here.
//
// Note: the reason phrase was rejected as the mark: "Unprocessable
// Content" is RFC 9110's own phrase for 422, which any server may send;
// and X-Request-Id alone was too, since proxies and frameworks add one.
func ownResponse(r *Response) bool {
	return r.HasChecksum && r.Checksum == Checksum(r.ID, r.Payload)
}
