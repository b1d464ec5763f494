package activeobject

import (
	"errors"
	"sync/atomic"
	"time"

	"concbench/internal/futex"
	"concbench/models/internal/connio"
	"concbench/service"
	"concbench/wire"
)

// ErrClosed is the error of a Future whose method request was not executed
// because the active object was closing (its status is StatusUnavailable).
var ErrClosed = errors.New("activeobject: closed")

// Future states (Future.state).
const (
	futurePending = 0 // no result yet, nobody waits
	futureReady   = 1 // the result is stored
	futureWaited  = 2 // no result yet, a client sleeps on the parker
)

// Future is the result of a method invocation on the active object, returned
// by the Proxy at once and filled in later by a scheduler thread (the
// pattern's future: it reserves space for the result; the client rendezvous
// with it by blocking in Wait or by polling Ready).
//
// The result fields are written once, by the thread that completes the
// future, before it becomes ready; Value, Err, Status and Payload may be read
// only after Ready reports true or Wait returns. One goroutine at a time may
// wait on a Future.
//
// A future that belongs to a connection (the network side) is not waited on:
// its completion posts the connection to the completing scheduler's
// completion port, and an I/O thread encodes the response. Such futures are
// reused for the connection's next requests.
type Future struct {
	state  atomic.Uint32 // futurePending, futureReady or futureWaited
	parker futex.Parker  // where a waiting client sleeps

	value   int64
	err     error
	status  wire.Status
	payload []byte // OpWork's response body
	// pattern, when positive, replaces payload for a connection's large
	// OpWork body: its length, sent as a wire.Response.Pattern (streamed
	// by the connection's output, never materialised).
	pattern int

	// conn is the connection whose response this future carries, or nil.
	// It never changes once set (the future lives in the connection's slot).
	conn *conn
}

// complete stores the result and makes the future ready: it wakes a waiting
// client, or posts the future's connection to the completing scheduler's
// completion port (by is nil when the future is completed on the I/O side,
// which encodes it itself). After the state changes the completing thread
// touches nothing in f: a connection may reuse it at once.
func (f *Future) complete(by *scheduler, v int64, err error) {
	f.value, f.err = v, err
	switch {
	case err == nil:
		f.status = wire.StatusOK
	case errors.Is(err, ErrClosed):
		f.status = wire.StatusUnavailable
	case errors.Is(err, errBadOp):
		f.status = wire.StatusBadRequest
	default:
		f.status = service.StatusOf(err)
	}
	c := f.conn
	for {
		old := f.state.Load()
		if f.state.CompareAndSwap(old, futureReady) {
			if old == futureWaited {
				f.parker.Unpark()
			}
			break
		}
	}
	if c != nil && by != nil {
		by.port.post(c)
	}
}

// reset makes a ready connection future pending again for the next request,
// keeping its payload buffer (unless it grew too large to retain).
func (f *Future) reset() {
	f.value, f.err, f.status, f.pattern = 0, nil, wire.StatusOK, 0
	if cap(f.payload) > connio.RetainLimit {
		f.payload = nil
	} else {
		f.payload = f.payload[:0]
	}
	f.state.Store(futurePending)
}

// Ready reports whether the result is available.
func (f *Future) Ready() bool { return f.state.Load() == futureReady }

// Wait blocks the calling thread until the result is available. The thread
// sleeps in the kernel on the future's own futex word.
func (f *Future) Wait() {
	for !f.Ready() {
		if f.state.CompareAndSwap(futurePending, futureWaited) || f.state.Load() == futureWaited {
			f.parker.Park()
		}
	}
}

// WaitTimeout is Wait bounded by d; it reports whether the result is
// available.
func (f *Future) WaitTimeout(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !f.Ready() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		if f.state.CompareAndSwap(futurePending, futureWaited) || f.state.Load() == futureWaited {
			f.parker.ParkTimeout(left)
		}
	}
	return true
}

// Value returns the result: the balance for Balance, Deposit and Withdraw,
// the source account's new balance for Transfer, the conserved total for
// Total; 0 for Work and on error.
func (f *Future) Value() int64 { return f.value }

// Err returns the method's error: nil, one of the service's ledger errors
// (service.ErrNoAccount, ErrInsufficientFunds, ErrTimeout, ErrBadAmount,
// ErrOverflow), or ErrClosed.
func (f *Future) Err() error { return f.err }

// Status returns the wire status of the result (service.StatusOf of Err, or
// StatusUnavailable for ErrClosed).
func (f *Future) Status() wire.Status { return f.status }

// Payload returns a Work method's response body (empty for the ledger
// methods). It is owned by the future.
func (f *Future) Payload() []byte { return f.payload }
