package wire

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// Op is the operation a request asks the service to perform.
type Op uint8

// The operations. OpWork is the synthetic request every model benchmark uses;
// the ledger operations exercise the stateful OLTP service.
const (
	OpWork     Op = 0 // run CPU work then blocking work; respond with Size bytes of Body
	OpBalance  Op = 1 // respond with the balance of Account
	OpDeposit  Op = 2 // add Amount to Account; respond with the new balance
	OpWithdraw Op = 3 // take Amount from Account, waiting up to Timeout for funds; respond with the new balance
	OpTransfer Op = 4 // move Amount from Account to To; respond with Account's new balance
	OpTotal    Op = 5 // respond with the sum of all balances (an audit)
	numOps        = 6
)

var opNames = [numOps]string{"work", "balance", "deposit", "withdraw", "transfer", "total"}

// String returns the operation's name as used in HTTP paths ("/work") and flags.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Valid reports whether o is a defined operation.
func (o Op) Valid() bool { return o < numOps }

// ParseOp returns the operation named s.
func ParseOp(s string) (Op, error) {
	if op, ok := opOfPath([]byte(s)); ok {
		return op, nil
	}
	return 0, fmt.Errorf("unknown op %q (accepted: work, balance, deposit, withdraw, transfer, total)", s)
}

// Status is the outcome of a request, carried in every response.
type Status uint8

// The statuses. HTTP maps them onto status codes (see HTTPStatus).
const (
	StatusOK                Status = 0
	StatusBadRequest        Status = 1 // malformed request; the server closes the connection
	StatusTooLarge          Status = 2 // payload or header over the limit; the server closes the connection
	StatusNoAccount         Status = 3 // ledger: account does not exist
	StatusInsufficientFunds Status = 4 // ledger: withdrawal or transfer would overdraw
	StatusTimeout           Status = 5 // ledger: a guarded withdrawal waited Timeout without funds
	StatusUnavailable       Status = 6 // the server is shutting down or overloaded
	StatusInternal          Status = 7 // a server bug; never expected
	StatusOverflow          Status = 8 // ledger: a deposit would take the ledger's money above its limit (math.MaxInt64)
	numStatuses                    = 9
)

// NumStatuses is the number of defined statuses, 0..NumStatuses-1: a
// decoder refuses any other value.
const NumStatuses = numStatuses

var statusNames = [numStatuses]string{"ok", "bad_request", "too_large", "no_account",
	"insufficient_funds", "timeout", "unavailable", "internal", "overflow"}

// String returns the status's name.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Request is one decoded request. It is a plain value: decoders fill it in
// place so that steady-state decoding does not allocate.
//
// Ownership: Payload aliases the buffer passed to DecodeRequest and is valid
// only until the caller modifies or reuses that buffer.
type Request struct {
	ID       uint64        // chosen by the client; echoed in the response
	Op       Op            // the operation
	Priority uint8         // 0 (lowest) … 255; models with priority lanes use it
	CPU      time.Duration // CPU work, run as a calibrated amount of computation
	Block    time.Duration // blocking work: the handler sleeps in a system call
	Size     int           // OpWork: bytes of response payload asked for
	Account  uint32        // ledger: the account (source of a transfer)
	To       uint32        // ledger: the destination of a transfer
	Amount   int64         // ledger: the amount (> 0)
	Timeout  time.Duration // ledger: how long a withdrawal may wait for funds
	Payload  []byte        // request payload (binary protocol, or an HTTP body); opaque to OpWork
	Close    bool          // the client asked the server to close after responding
}

// Response is one response. Ownership: Payload is owned by whoever built the
// Response; encoders copy it into their output and retain nothing.
type Response struct {
	ID      uint64 // the request's ID
	Payload []byte // the body
	// Pattern, when positive, says that the body is the OpWork body of
	// request ID of this many bytes (AppendBody(ID, Pattern)) and is not
	// held in Payload, which is then empty. A server sends such a body
	// from a shared read-only table as its peer drains the connection
	// (AppendResponseHead, then BodyWindow), so that a response of a
	// megabyte costs no memory per connection. Decoders never set it.
	Pattern int
	// Checksum is what DecodeResponse read off the wire (binary frame field,
	// or the HTTP X-Checksum header; HasChecksum reports whether one was
	// present). Encoders ignore it and always compute Checksum(ID, Payload).
	Checksum uint32
	Status   Status // the outcome
	Close    bool   // the server closes the connection after this response
	// HasChecksum: see Checksum. (The small fields come last, packed: 48
	// bytes in all; Half-Sync/Half-Reactive allocates a Response inside
	// every request object, and the gate counts bytes per request.)
	HasChecksum bool
}

// MaxInlineBody is the largest OpWork body a server materialises among its
// output bytes; a larger one travels as a Response.Pattern. Small bodies
// are copied so that pipelined responses still leave in one write.
const MaxInlineBody = 4 << 10

// Codec is one wire protocol: how a server decodes requests and encodes
// responses, and how a client does the reverse. Every model uses the same
// Codec values, so protocol handling is identical across models.
//
// A Codec is stateless and safe for concurrent use. Decoding is incremental:
// the caller appends bytes read from a connection to a buffer and calls a
// Decode method repeatedly; each call decodes at most one message from the
// front of the buffer.
type Codec interface {
	// Protocol returns the protocol's name: "binary" or "http".
	Protocol() string

	// Limits returns the limits the codec enforces (defaults applied). A
	// server sizes its per-connection input buffer from them.
	Limits() Limits

	// DecodeRequest decodes the request at the front of buf into req and
	// returns the number of bytes it occupies. It returns (0, nil) when buf
	// holds only part of a request; the caller reads more and calls again.
	// An error (an *Error) means the input can never become a valid request:
	// the caller sends AppendError's bytes and closes the connection.
	// It does not allocate.
	DecodeRequest(buf []byte, req *Request) (int, error)

	// AppendResponse appends the encoding of resp to dst and returns the
	// extended slice. A Pattern body is materialised.
	AppendResponse(dst []byte, resp *Response) []byte

	// AppendResponseHead is AppendResponse without a Pattern body: for
	// resp.Pattern > 0 it appends everything before the body (whose length
	// and checksum it states), and the caller sends the body's bytes next
	// (BodyWindow); otherwise it is AppendResponse.
	AppendResponseHead(dst []byte, resp *Response) []byte

	// AppendError appends the response a server sends for a request that
	// failed to decode with err (from DecodeRequest), just before closing the
	// connection.
	AppendError(dst []byte, err error) []byte

	// AppendRequest appends the encoding of req to dst (the client side).
	// req.Payload is sent as the body; HTTP sends ID as X-Request-Id.
	AppendRequest(dst []byte, req *Request) []byte

	// DecodeResponse decodes the response at the front of buf into resp, with
	// the same incremental contract as DecodeRequest. resp.Payload aliases buf.
	DecodeResponse(buf []byte, resp *Response) (int, error)
}

// Limits bound what a server accepts, so that no client can make it buffer
// or compute without bound. The zero value of a field means its default.
type Limits struct {
	MaxPayload int           // request payload and response size; default DefaultMaxPayload
	MaxHeader  int           // HTTP request line + headers; default DefaultMaxHeader
	MaxWork    time.Duration // CPU, Block and Timeout each; default DefaultMaxWork
}

// The default limits.
const (
	DefaultMaxPayload = 1 << 20
	DefaultMaxHeader  = 8 << 10
	DefaultMaxWork    = 10 * time.Second
)

// MaxPayloadLimit is the largest MaxPayload a codec accepts (the binary
// length field is 32 bits; beyond this a single request is a denial of service).
const MaxPayloadLimit = 64 << 20

// WithDefaults returns l with zero fields replaced by their defaults.
func (l Limits) WithDefaults() Limits {
	l.MaxPayload = cmp.Or(l.MaxPayload, DefaultMaxPayload)
	l.MaxHeader = cmp.Or(l.MaxHeader, DefaultMaxHeader)
	l.MaxWork = cmp.Or(l.MaxWork, DefaultMaxWork)
	return l
}

// Validate reports the first field of l (after defaults) outside its range,
// naming the value and the accepted range.
func (l Limits) Validate() error {
	l = l.WithDefaults()
	switch {
	case l.MaxPayload < 0 || l.MaxPayload > MaxPayloadLimit:
		return fmt.Errorf("max payload %d out of range (accepted: 0 for the default %d, or 1..%d bytes)",
			l.MaxPayload, DefaultMaxPayload, MaxPayloadLimit)
	case l.MaxHeader < 256 || l.MaxHeader > 1<<20:
		return fmt.Errorf("max header %d out of range (accepted: 0 for the default %d, or 256..%d bytes)",
			l.MaxHeader, DefaultMaxHeader, 1<<20)
	case l.MaxWork < 0 || l.MaxWork > time.Hour:
		return fmt.Errorf("max work %v out of range (accepted: 0 for the default %v, or up to 1h)",
			l.MaxWork, DefaultMaxWork)
	}
	return nil
}

// Protocols lists the protocol names New accepts.
var Protocols = []string{"binary", "http"}

// New returns the codec for protocol ("binary" or "http") with limits lim.
func New(protocol string, lim Limits) (Codec, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	lim = lim.WithDefaults()
	switch protocol {
	case "binary":
		return &Binary{lim: lim}, nil
	case "http":
		return &HTTP{lim: lim}, nil
	}
	return nil, fmt.Errorf("unknown protocol %q (accepted: binary, http)", protocol)
}

// ErrorKind classifies decode errors, for the per-kind error counters.
type ErrorKind uint8

// The kinds of decode error.
const (
	KindMalformed      ErrorKind = iota + 1 // not a valid message
	KindTooLarge                            // payload over MaxPayload
	KindHeaderTooLarge                      // HTTP header section over MaxHeader
	KindUnsupported                         // valid, but a feature this server does not implement
)

// Error is a decode error. The sentinel values below are returned as is (no
// allocation on the error path); compare with errors.Is.
type Error struct {
	Kind ErrorKind
	Msg  string
}

func (e *Error) Error() string { return "wire: " + e.Msg }

// Is lets errors.Is match any Error of the same kind against a sentinel.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && (t.Msg == "" || t.Msg == e.Msg)
}

// Sentinels for errors.Is; a codec may return more specific *Error values of
// the same Kind with a longer message.
var (
	ErrMalformed      = &Error{Kind: KindMalformed}
	ErrTooLarge       = &Error{Kind: KindTooLarge}
	ErrHeaderTooLarge = &Error{Kind: KindHeaderTooLarge}
	ErrUnsupported    = &Error{Kind: KindUnsupported}
)

// KindOf returns the kind of a decode error, or 0 if err is not an *Error.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// String returns the kind's name as used in error counters.
func (k ErrorKind) String() string {
	switch k {
	case KindMalformed:
		return "malformed"
	case KindTooLarge:
		return "too_large"
	case KindHeaderTooLarge:
		return "header_too_large"
	case KindUnsupported:
		return "unsupported"
	}
	return "unknown"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the checksum a response carries: CRC-32C (Castagnoli) over the
// request ID as 8 little-endian bytes followed by the payload. Clients
// recompute it to detect corrupted or misattributed responses.
//
// It does not allocate. Note: the ID's bytes go through the table by hand
// because passing a stack array to crc32.Update makes it escape (one
// allocation per response).
func Checksum(id uint64, payload []byte) uint32 {
	c := ^uint32(0)
	for i := 0; i < 8; i++ {
		c = castagnoli[byte(c)^byte(id>>(8*i))] ^ c>>8
	}
	return crc32.Update(^c, castagnoli, payload)
}

// PatternChecksum is Checksum(id, AppendBody(nil, id, size)), computed
// from the shared table without materialising the body.
func PatternChecksum(id uint64, size int) uint32 {
	c := Checksum(id, nil)
	off := int(id % 64)
	for size > 0 {
		n := min(size, len(bodyChunk)-64)
		c = crc32.Update(c, castagnoli, bodyChunk[off:off+n])
		off = (off + n) % 64
		size -= n
	}
	return c
}

// BodyWindow returns bytes [off, off+n') of the OpWork body of request id,
// n' = min(n, BodyWindowMax): a sub-slice of a shared table that the
// caller must never modify. n must be positive.
func BodyWindow(id uint64, off, n int) []byte {
	start := int((id + uint64(off)) % 64)
	return bodyChunk[start : start+min(n, BodyWindowMax)]
}

// BodyWindowMax is the most BodyWindow returns at once: the bytes one
// write of a streamed body sends at most. As large as the default output
// bound (models.DefaultMaxPendingOutput), so that one write can fill what
// a socket takes at once; the table costs that much once per process.
const BodyWindowMax = 256 << 10

// bodyAlphabet is the period of the body pattern.
const bodyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// bodyChunk holds the pattern twice-and-more over, so that any window of
// length ≤ BodyWindowMax starting at offset 0..63 is a sub-slice of it.
var bodyChunk = func() []byte {
	b := make([]byte, BodyWindowMax+64)
	for i := range b {
		b[i] = bodyAlphabet[i%64]
	}
	return b
}()

// AppendBody appends the OpWork response payload for request id of length
// size: the bytes bodyAlphabet[(id+i) mod 64] for i in [0, size). It is
// deterministic, so a client verifies a body without storing it, and
// different ids give different bodies, so a response attributed to the wrong
// request fails verification. It appends from a shared table: no allocation
// beyond dst's growth.
func AppendBody(dst []byte, id uint64, size int) []byte {
	off := int(id % 64)
	for size > 0 {
		n := min(size, len(bodyChunk)-64)
		dst = append(dst, bodyChunk[off:off+n]...)
		off = (off + n) % 64
		size -= n
	}
	return dst
}

// VerifyBody reports whether b is the OpWork body of request id.
func VerifyBody(id uint64, b []byte) bool {
	off := int(id % 64)
	for len(b) > 0 {
		n := min(len(b), len(bodyChunk)-64)
		if string(b[:n]) != string(bodyChunk[off:off+n]) {
			return false
		}
		off = (off + n) % 64
		b = b[n:]
	}
	return true
}
