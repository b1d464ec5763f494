package connio

import (
	"fmt"
	"sync/atomic"

	"concbench/handleset"
	"concbench/models"
	"concbench/wire"
)

// Limit is a server's connection cap, models.Config.MaxConns: the most
// connections it holds open at once. Every model takes a place for each
// connection it accepts (Admit) before it counts or registers it, and
// gives the place back when that connection closes (Release). Past the
// cap the new connection is refused at once, with a reason its client can
// read (Refuse with Refusal), and nothing else is affected: the
// connections open keep their service and the listener keeps accepting.
//
// A Limit is safe for use by any number of threads. Without a cap
// (MaxConns 0) Admit always succeeds and neither method touches shared
// memory.
//
// Note: the count is the Limit's own, not the models.Counters' accepted
// minus closed: those are sharded per thread and summed only by Stats, and
// a cap must be exact at the moment of each accept.
type Limit struct {
	max     int64        // 0: no cap
	open    atomic.Int64 // places taken
	refusal []byte       // the response that refuses a connection past the cap
}

// NewLimit returns the connection cap of cfg (cfg.MaxConns) for the model
// named model, which the refusal's reason names.
func NewLimit(cfg *models.Config, model string) *Limit {
	l := &Limit{max: int64(cfg.MaxConns)}
	if l.max > 0 {
		l.refusal = Refusal(cfg.Codec, fmt.Sprintf(
			"%s: all %d connections are taken (--max-conns); try again later", model, cfg.MaxConns))
	}
	return l
}

// Admit takes a place for a connection just accepted and reports whether
// there was one. A connection admitted must Release its place when it
// closes; one refused must be answered with Refuse and the Limit's
// Refusal.
func (l *Limit) Admit() bool {
	if l.max == 0 {
		return true
	}
	// A CAS loop rather than add-then-undo, so that a refusal never
	// comes from another connection's transient over-count.
	for {
		n := l.open.Load()
		if n >= l.max {
			return false
		}
		if l.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Accept admits fd, a connection just accepted, and counts it accepted in
// sh; past the cap it refuses fd instead (Refuse with the Refusal) and
// reports false. It is the step after accept of every model that counts a
// connection before it registers it; one whose registration fails then
// closes it as any other (Release, and the close counted).
func (l *Limit) Accept(fd int, sh *models.Shard) bool {
	if !l.Admit() {
		Refuse(fd, l.refusal, sh)
		return false
	}
	sh.AddAccepted()
	return true
}

// Release gives back the place of an admitted connection that closed. A
// model calls it after closing the descriptor and before counting the
// close (models.Shard.AddClosed), so that whoever sees the close in Stats
// finds the place free.
func (l *Limit) Release() {
	if l.max > 0 {
		l.open.Add(-1)
	}
}

// Open returns the places taken: the admitted connections not yet closed
// (0 without a cap, which counts nothing).
func (l *Limit) Open() int { return int(l.open.Load()) }

// Refusal returns the response that refuses a connection past the cap
// (nil without a cap). It is shared and read-only.
func (l *Limit) Refusal() []byte { return l.refusal }

// Refusal encodes the response that refuses a connection at a server's
// limit: status unavailable (HTTP 503 Service Unavailable), request id 0,
// closing the connection, with reason and a newline as its payload, so
// that a client (and the load generator's priming error) can say why.
func Refusal(codec wire.Codec, reason string) []byte {
	return codec.AppendResponse(nil, &wire.Response{ID: 0, Status: wire.StatusUnavailable, Close: true,
		Payload: []byte(reason + "\n")})
}

// Refuse counts fd, a connection just accepted, in sh as accepted, closed
// and refused (CountRefused), then answers it with refusal (see Refusal),
// shuts it down and closes it. Counted first, so that a client that has
// read the refusal or the end of the stream finds it counted: counted
// after the close, a snapshot taken on the client's answer could miss it
// (TestThreadCap failed so under load). The write cannot block for long,
// even on a blocking socket: a new connection's send buffer is empty and
// the refusal is small. The FIN follows the response, so a client that
// reads finds the reason before the end of the stream. A client that is
// gone already needs no answer: write and shutdown errors are ignored.
func Refuse(fd int, refusal []byte, sh *models.Shard) {
	CountRefused(sh)
	_, _ = handleset.Write(fd, refusal)
	_ = handleset.Shutdown(fd)
	_ = handleset.Close(fd)
}

// CountRefused counts in sh a connection refused at the server's limit:
// accepted, closed, and the error kind models.ErrRefused. A model that
// answers and closes the connection by other means (Go's net.Conn) calls
// it itself.
func CountRefused(sh *models.Shard) {
	sh.AddAccepted()
	sh.AddClosed()
	sh.AddError(models.ErrRefused)
}
