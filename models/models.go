package models

import (
	"cmp"
	"fmt"
	"net/netip"
	"time"

	"concbench/service"
	"concbench/wire"
)

// Server is a running concurrency model.
type Server interface {
	// Addr returns the address the server listens on.
	Addr() netip.AddrPort
	// Stats returns a snapshot of the server's counters. It is safe to call
	// at any time, from any goroutine, including after Close.
	Stats() Stats
	// Close stops accepting, closes every connection, waits for every thread
	// the server started to exit, and closes every descriptor it opened.
	// Requests in progress are abandoned (their connections are closed).
	// Close is idempotent.
	Close() error
}

// Config is what every model is started with. Model-specific settings are
// the model package's own Options.
type Config struct {
	// Addr is the listen address, e.g. "127.0.0.1:0".
	Addr string
	// Threads is the number of OS threads the model runs its pattern with
	// (its meaning per model is in the model's doc.go); 0 means the model's
	// default.
	Threads int
	// Backlog is the listen backlog; 0 means the default.
	Backlog int
	// Codec is the wire protocol, shared by all connections.
	Codec wire.Codec
	// Service is the application work, shared by all threads.
	Service *service.Service
	// MaxPendingOutput bounds the response bytes a connection may have
	// waiting for its client to read; past it the server stops reading that
	// connection's requests until the client catches up (back-pressure
	// against a slow reader). 0 means DefaultMaxPendingOutput.
	MaxPendingOutput int
	// HeaderTimeout is how long a connection may hold an incomplete
	// request (a slow or stalled client's partial header or body) before
	// the server closes it, counted as ErrHeaderTimeout; like nginx's
	// client_header_timeout. A connection with no partial request (idle
	// between requests, or not yet sending) is not timed. 0 means
	// DefaultHeaderTimeout; a negative value disables the timeout.
	HeaderTimeout time.Duration
	// MaxConns caps the connections the server holds open at once (serve
	// --max-conns). Past it a new client is refused at once and nothing
	// else is affected: it gets status unavailable (HTTP 503) with a
	// one-line reason that names the cap, its connection is closed, and
	// it is counted as ErrRefused (models/internal/connio.Limit). With
	// the cap the server's memory for connections is bounded by MaxConns
	// × ConnMemoryBound (see the package documentation, "Memory per
	// connection"). 0 means no cap.
	MaxConns int
}

// DefaultHeaderTimeout is Config.HeaderTimeout's default, nginx's
// client_header_timeout.
const DefaultHeaderTimeout = 60 * time.Second

// DefaultMaxPendingOutput is Config.MaxPendingOutput's default.
const DefaultMaxPendingOutput = 256 << 10

// ConnMemoryBound is the most heap a connection served under c holds while
// its client sends requests of at most maxRequest encoded bytes (see the
// package documentation, "Memory per connection"): its input buffer
// (4 KiB, or up to twice maxRequest, never more than the codec's largest
// request), its output bound plus one response with an inline body and
// its head, and what its requests in flight hold: at most MaxInFlight
// of them, each a slot of the in-order ring, a record of at most
// InFlightRecord bytes, a copy of the request's payload, and a body
// buffer of at most wire.MaxInlineBody.
func ConnMemoryBound(c Config, maxRequest int) int {
	out := c.MaxPendingOutput
	out = cmp.Or(out, DefaultMaxPendingOutput)
	lim := c.Codec.Limits().WithDefaults()
	in := min(max(InitialInput, 2*maxRequest), lim.MaxHeader+lim.MaxPayload+64)
	inFlight := MaxInFlight * (8 + InFlightRecord + maxRequest + wire.MaxInlineBody)
	return in + out + wire.MaxInlineBody + 512 + inFlight
}

// MaxInFlight is the most requests of one connection that a model which
// hands requests to other threads (Half-Sync/Half-Reactive, Active
// Object) has in flight: decoded and handed off, response not yet
// written to the connection's output. At the bound the connection is not
// read. Every such model admits requests by the same rule with this bound
// and ResponseOverhead (models/internal/connio.Ring, whose documentation
// says why these values), so that back-pressure does not differ between
// them.
const MaxInFlight = 64

// ResponseOverhead is what a model that hands requests off reserves of a
// connection's output bound (MaxPendingOutput) for each request in flight
// besides the body the request asks for (OpWork's Size): room for the
// longest response head of either protocol and a ledger result.
const ResponseOverhead = 256

// InFlightRecord is the most bytes a model keeps for a request in flight
// besides its payload and its response body: Half-Sync/Half-Reactive's
// request object, Active Object's slot and future. Each model checks at
// compile time that its record fits.
const InFlightRecord = 256

// InitialInput is the size of a connection's input buffer while its
// requests are small: room for a few pipelined small requests per read.
const InitialInput = 4 << 10

// MaxThreads is the largest Threads value any model accepts.
const MaxThreads = 4096

// MaxBacklog is the largest Backlog accepted: listen(2) takes an int, and
// the kernel caps it at net.core.somaxconn anyway.
const MaxBacklog = 1 << 20

// WithDefaults returns c with zero-valued settings replaced by their
// defaults; defThreads is the model's default thread count.
func (c Config) WithDefaults(defThreads int) Config {
	c.Threads = cmp.Or(c.Threads, defThreads)
	c.MaxPendingOutput = cmp.Or(c.MaxPendingOutput, DefaultMaxPendingOutput)
	c.HeaderTimeout = cmp.Or(c.HeaderTimeout, DefaultHeaderTimeout)
	return c
}

// Resolve validates c and returns it with its defaults (WithDefaults),
// what a model's Start does first (Leader/Followers in two steps: it
// checks its lanes against the threads asked before the default).
func (c Config) Resolve(defThreads int) (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c.WithDefaults(defThreads), nil
}

// Validate reports the first setting of c outside its accepted range.
func (c Config) Validate() error {
	switch {
	case c.Codec == nil:
		return fmt.Errorf("models: config has no codec")
	case c.Service == nil:
		return fmt.Errorf("models: config has no service")
	case c.Threads < 0 || c.Threads > MaxThreads:
		return fmt.Errorf("threads %d out of range (accepted: 0 for the model's default, or 1..%d)", c.Threads, MaxThreads)
	case c.Backlog < 0 || c.Backlog > MaxBacklog:
		return fmt.Errorf("backlog %d out of range (accepted: 0 for the default, or 1..%d; the kernel caps it at net.core.somaxconn)", c.Backlog, MaxBacklog)
	case c.MaxConns < 0:
		return fmt.Errorf("max conns %d out of range (accepted: 0 for no cap, or a positive number of connections)", c.MaxConns)
	case c.MaxPendingOutput < 0 || c.MaxPendingOutput > 1<<30:
		return fmt.Errorf("max pending output %d out of range (accepted: 0 for the default %d, or 1..%d bytes)",
			c.MaxPendingOutput, DefaultMaxPendingOutput, 1<<30)
	}
	return nil
}

// Stats is a snapshot of a server's counters. Field names carry their units
// in JSON.
type Stats struct {
	Model   string `json:"model"`
	Variant string `json:"variant,omitempty"` // e.g. "promotion=lifo"
	Threads int    `json:"threads"`           // configured threads

	Requests      uint64 `json:"requests"`       // responses produced
	BytesRead     uint64 `json:"bytes_read"`     // from clients
	BytesWritten  uint64 `json:"bytes_written"`  // to clients
	ConnsAccepted uint64 `json:"conns_accepted"` // connections accepted
	ConnsClosed   uint64 `json:"conns_closed"`   // connections closed (by either side)

	// Errors counts failures by kind (see the Err constants); kinds that
	// never happened are absent.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// PerThread has one entry per thread of the model's pool, in a stable
	// order; models without a thread pool leave it empty.
	PerThread []ThreadStats `json:"per_thread,omitempty"`
	// Counters holds model-specific counters (queue high-water marks,
	// hand-offs, …), documented in each model's doc.go.
	Counters map[string]uint64 `json:"counters,omitempty"`
}

// ThreadStats counts what one thread of a pool did.
type ThreadStats struct {
	TID        int    `json:"tid"`        // the OS thread id (0 if not yet started)
	Role       string `json:"role"`       // e.g. "pool", "reactor", "worker", "scheduler"
	Events     uint64 `json:"events"`     // handle-set events dispatched by this thread
	Requests   uint64 `json:"requests"`   // requests processed by this thread
	Promotions uint64 `json:"promotions"` // times this thread was promoted to leader
	// Accepted counts the connections this thread accepted, in models
	// where a thread owns the connections it accepts for their whole life
	// (the connection balance across threads is computed from it); 0
	// elsewhere.
	Accepted uint64 `json:"accepted,omitempty"`
}

// Error kinds counted in Stats.Errors. The decode-error kinds are
// wire.ErrorKind names (malformed, too_large, header_too_large, unsupported).
const (
	ErrTruncated     = "truncated"      // the peer closed with part of a request unread
	ErrPeerReset     = "peer_reset"     // the connection was reset or broke mid-stream
	ErrIO            = "io"             // another read or write failure
	ErrAcceptBackoff = "accept_backoff" // accept hit a descriptor or memory limit; the acceptor backed off
	ErrAccept        = "accept"         // accept failed for another reason
	ErrRefused       = "refused"        // a connection refused at the server's limit (Config.MaxConns, or a thread cap): answered with status unavailable and closed
	ErrHeaderTimeout = "header_timeout" // a connection closed because its request stayed incomplete past HeaderTimeout
)
