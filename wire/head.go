package wire

import (
	"bytes"
	"strings"
)

// This file scans the head of an HTTP/1.x message: the start line, the
// header lines and the empty line that ends them, each ending in CRLF. The
// scan checks syntax only, byte by byte from the left; what the fields mean
// is checked by the callers in http.go once the head is complete.

// Character classes of HTTP/1.1 (RFC 9110 section 5.6.2, RFC 9112).
const (
	classTchar  = 1 << iota // token character: method and header names
	classTarget             // request-target: any byte but controls and SP
	classValue              // field value and reason phrase: VCHAR, obs-text, SP, HTAB
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '\t':
			t[c] = classValue
		case c < ' ' || c == 0x7f:
			// controls: in no class
		case c == ' ':
			t[c] = classValue
		default:
			t[c] = classTarget | classValue
			if c < 0x80 && (isAlnum(byte(c)) || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0) {
				t[c] |= classTchar
			}
		}
	}
	return t
}()

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' }

func isClass(c byte, class uint8) bool { return charClass[c]&class != 0 }

// Syntax errors in the head, shared by requests and responses.
var (
	errHeadLineEnd     = &Error{Kind: KindMalformed, Msg: "http: line not ended by CRLF (bare LF)"}
	errHeadChar        = &Error{Kind: KindMalformed, Msg: "http: invalid character in header line"}
	errHeadFold        = &Error{Kind: KindMalformed, Msg: "http: obsolete line folding in header"}
	errHeadName        = &Error{Kind: KindMalformed, Msg: "http: header line without a name and a colon"}
	errHeadRequestLine = &Error{Kind: KindMalformed, Msg: "http: malformed request line (want METHOD SP /target SP HTTP/1.1)"}
	errHeadStatusLine  = &Error{Kind: KindMalformed, Msg: "http: malformed status line (want HTTP/1.1 SP 3-digit code SP reason)"}
	errHeadTooLarge    = &Error{Kind: KindHeaderTooLarge, Msg: "http: header section over the limit"}
)

// scanHead returns the length of the head at the front of buf, including the
// final empty line, or 0 if buf holds only part of it. The head may be at
// most limit bytes long. request selects the start line's grammar: a
// request line or a status line.
//
// Errors are positional: the scan reports the first byte that cannot belong
// to a valid head, or KindHeaderTooLarge once limit bytes have arrived
// without the end of the head, whichever comes first. So any prefix of a
// message yields either (0, nil) or the error the whole message yields, and
// a peer sending garbage is refused as soon as the garbage arrives.
func scanHead(buf []byte, limit int, request bool) (int, error) {
	w := buf[:min(len(buf), limit)]
	for pos, line := 0, 0; ; line++ {
		rest := w[pos:]
		lf := bytes.IndexByte(rest, '\n')
		if lf < 0 {
			// A partial line: check what has arrived; a final CR may be the
			// first half of the CRLF.
			if n := len(rest); n > 0 && rest[n-1] == '\r' {
				rest = rest[:n-1]
			}
			if err := checkHeadLine(rest, line, false, request); err != nil {
				return 0, err
			}
			if len(buf) >= limit {
				return 0, errHeadTooLarge
			}
			return 0, nil
		}
		if lf == 0 || rest[lf-1] != '\r' {
			return 0, errHeadLineEnd
		}
		content := rest[:lf-1]
		if err := checkHeadLine(content, line, true, request); err != nil {
			return 0, err
		}
		pos += lf + 1
		if line > 0 && len(content) == 0 {
			return pos, nil
		}
	}
}

// checkHeadLine checks the syntax of line number n of a head (without its
// CRLF); complete is false when more of the line may still arrive.
func checkHeadLine(l []byte, n int, complete, request bool) error {
	switch {
	case n == 0 && request:
		return checkRequestLine(l, complete)
	case n == 0:
		return checkStatusLine(l, complete)
	}
	// A header line "name: value", or the empty line that ends the head.
	if len(l) == 0 {
		return nil
	}
	if l[0] == ' ' || l[0] == '\t' {
		return errHeadFold
	}
	i := 0
	for i < len(l) && isClass(l[i], classTchar) {
		i++
	}
	switch {
	case i == len(l):
		if complete {
			return errHeadName
		}
		return nil
	case i == 0 || l[i] != ':':
		return errHeadName
	}
	for _, c := range l[i+1:] {
		if !isClass(c, classValue) {
			return errHeadChar
		}
	}
	return nil
}

// checkRequestLine checks "METHOD SP target SP HTTP/d.d". Which methods and
// versions are supported is checked later; the target's meaning too.
func checkRequestLine(l []byte, complete bool) error {
	i := 0
	for i < len(l) && isClass(l[i], classTchar) {
		i++
	}
	if i == len(l) {
		return partial(complete, errHeadRequestLine)
	}
	if i == 0 || l[i] != ' ' {
		return errHeadRequestLine
	}
	i++
	start := i
	for i < len(l) && isClass(l[i], classTarget) {
		i++
	}
	if i == len(l) {
		return partial(complete, errHeadRequestLine)
	}
	if i == start || l[i] != ' ' {
		return errHeadRequestLine
	}
	if !versionPrefix(l[i+1:], complete) {
		return errHeadRequestLine
	}
	return nil
}

// checkStatusLine checks "HTTP/d.d SP ddd [SP reason]". The space before an
// empty reason phrase may be missing, as some servers omit it.
func checkStatusLine(l []byte, complete bool) error {
	const codeEnd = len("HTTP/1.1 200")
	for i, c := range l {
		var ok bool
		switch {
		case i < len(httpVersionPattern):
			ok = versionByte(i, c)
		case i == len(httpVersionPattern) || i == codeEnd:
			ok = c == ' '
		case i < codeEnd:
			ok = isDigit(c)
		default:
			ok = isClass(c, classValue)
		}
		if !ok {
			return errHeadStatusLine
		}
	}
	if complete && len(l) < codeEnd {
		return errHeadStatusLine
	}
	return nil
}

// partial returns err if a line that ended here is complete (it is
// truncated), and nil if more of it may still arrive.
func partial(complete bool, err error) error {
	if complete {
		return err
	}
	return nil
}

// httpVersionPattern is the syntax of an HTTP version: 0 stands for a digit.
const httpVersionPattern = "HTTP/0.0"

// versionByte reports whether c may be byte i of an HTTP version.
func versionByte(i int, c byte) bool {
	if httpVersionPattern[i] == '0' {
		return isDigit(c)
	}
	return c == httpVersionPattern[i]
}

// versionPrefix reports whether v is "HTTP/d.d" (a digit at d), or, if
// complete is false, a prefix of such a string.
func versionPrefix(v []byte, complete bool) bool {
	if len(v) > len(httpVersionPattern) || complete && len(v) < len(httpVersionPattern) {
		return false
	}
	for i, c := range v {
		if !versionByte(i, c) {
			return false
		}
	}
	return true
}

// headerLines iterates over the header lines of a complete head that
// scanHead accepted, after the start line.
type headerLines struct{ rest []byte }

// next returns the next header's name and its value with optional
// whitespace trimmed; ok is false after the last header.
func (h *headerLines) next() (name, value []byte, ok bool) {
	lf := bytes.IndexByte(h.rest, '\n')
	if lf <= 1 { // the empty line ("\r\n") that ends the head
		return nil, nil, false
	}
	line := h.rest[:lf-1]
	h.rest = h.rest[lf+1:]
	colon := bytes.IndexByte(line, ':')
	return line[:colon], trimOWS(line[colon+1:]), true
}

// splitHead splits a complete head into its start line (without CRLF) and
// an iterator over its header lines.
func splitHead(head []byte) ([]byte, headerLines) {
	lf := bytes.IndexByte(head, '\n')
	return head[:lf-1], headerLines{rest: head[lf+1:]}
}

// trimOWS removes spaces and tabs around b.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold reports whether b equals lower (which must be lower case) with
// ASCII letters compared case-insensitively.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// nextToken splits a comma-separated list: it returns the first element with
// whitespace trimmed, and the rest after the comma.
func nextToken(list []byte) (tok, rest []byte) {
	i := bytes.IndexByte(list, ',')
	if i < 0 {
		return trimOWS(list), nil
	}
	return trimOWS(list[:i]), list[i+1:]
}
