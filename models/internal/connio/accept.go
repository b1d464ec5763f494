package connio

import (
	"errors"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"concbench/handleset"
	"concbench/models"
)

// MaxAcceptsPerEvent bounds the connections one accept batch takes, so
// that a listener with a long backlog cannot hold a thread from the
// connections it already serves (fairness, as MaxReadsPerEvent for reads).
const MaxAcceptsPerEvent = 64

// The bounds of the accept back-off.
const (
	MinAcceptBackoff = time.Millisecond
	MaxAcceptBackoff = time.Second
)

// Listener is what an accept batch takes connections from:
// *handleset.Listener, or a test's stand-in that scripts the errors.
type Listener interface {
	Accept() (fd int, peer netip.AddrPort, err error)
}

var _ Listener = (*handleset.Listener)(nil)

// acceptAction is what the accept error policy does with one result of
// accept.
type acceptAction int

const (
	acceptOK      acceptAction = iota // a connection: hand it on
	acceptDone                        // EAGAIN: the backlog is empty
	acceptRetry                       // EINTR, ECONNABORTED: try again at once
	acceptBackoff                     // descriptors or memory ran out: wait
	acceptFailed                      // anything else: report it
)

// acceptPolicy is the one accept error policy, shared by the accept batch
// and the blocking acceptors (AcceptFailed):
//
//   - EAGAIN: the backlog is empty; a batch is done.
//   - EINTR: a signal interrupted the call; nothing was consumed.
//     ECONNABORTED: the client reset a connection while it sat in the
//     backlog; it is gone and the next one may be fine. Both are retried
//     at once, uncounted (handleset.Listener.Accept already retries them;
//     the policy holds for any Listener all the same).
//   - EMFILE, ENFILE, ENOBUFS, ENOMEM (handleset.IsTemporary): the process
//     or the system ran out of descriptors or memory. Retrying at once
//     would spin, since the connection stays in the backlog and the
//     shortage lasts until some connection closes: back off, counted as
//     models.ErrAcceptBackoff.
//   - Anything else (EPERM from a firewall rule, EINVAL on a listener shut
//     down): returned, so that the caller counts it as models.ErrAccept.
func acceptPolicy(err error) acceptAction {
	switch {
	case err == nil:
		return acceptOK
	case handleset.IsWouldBlock(err):
		return acceptDone
	case errors.Is(err, syscall.EINTR), errors.Is(err, syscall.ECONNABORTED):
		return acceptRetry
	case handleset.IsTemporary(err):
		return acceptBackoff
	}
	return acceptFailed
}

// AcceptBackoff is the exponential delay of an acceptor that ran out of
// descriptors or memory (see AcceptBatch). The zero value starts at
// MinAcceptBackoff.
type AcceptBackoff struct{ next time.Duration }

// Next returns the delay to wait now and doubles the following one, up to
// MaxAcceptBackoff.
func (b *AcceptBackoff) Next() time.Duration {
	d := max(b.next, MinAcceptBackoff)
	b.next = min(2*d, MaxAcceptBackoff)
	return d
}

// Reset starts the next back-off at MinAcceptBackoff again (after an accept
// succeeded).
func (b *AcceptBackoff) Reset() { b.next = 0 }

// AcceptBatch is one listener event of a model whose threads wait on a
// handle set: it accepts up to MaxAcceptsPerEvent connections from the
// non-blocking listener ln and hands each to add, under the one accept
// error policy:
//
//   - EAGAIN ends the batch: every pending connection was taken.
//   - EINTR and ECONNABORTED are retried (each try counts towards the
//     batch's bound, so a batch never spins).
//   - EMFILE, ENFILE, ENOBUFS and ENOMEM end the batch, counted in sh as
//     models.ErrAcceptBackoff, and AcceptBatch returns the back-off's
//     next delay: the caller leaves the listener disarmed for that long
//     (ListenPause, or a timer in the handle set), so that the threads
//     keep serving their connections instead of spinning on a listener
//     that stays readable.
//   - Any other error ends the batch and is returned, wrapped with the
//     system call's name ("accept4") if it is not already; the caller
//     counts it (models.ErrAccept) and re-arms the listener as usual:
//     such an error concerns the one connection it consumed.
//
// A connection accepted resets the back-off. add reports false to end
// the batch (the server is closing); it counts the connection itself,
// since only it knows whether registering it succeeded. Only the thread
// that owns the listener's event calls AcceptBatch, so b needs no lock.
//
// Note: the Proactor does not use it: its accept is an io_uring multishot
// operation, whose completions carry one connection or one error each,
// and which must be re-armed after any error; it shares AcceptBackoff.
func AcceptBatch(ln Listener, b *AcceptBackoff, sh *models.Shard, add func(fd int) bool) (wait time.Duration, err error) {
	return AcceptUpTo(ln, MaxAcceptsPerEvent, b, sh, add)
}

// AcceptAdmitted is one listener event of a model that admits every
// connection it accepts under its cap and counts it before registering it
// (Leader/Followers, the shared queue, Active Object): an accept batch
// whose connections are admitted and counted in sh (Limit.Accept; one past
// the cap is refused) and handed to register, with an accept error
// counted in sh as models.ErrAccept. It returns the back-off's delay, as
// AcceptBatch does, and whether register reported false: the handle set
// is closed, and the server is stopping.
func AcceptAdmitted(ln Listener, b *AcceptBackoff, limit *Limit, sh *models.Shard, register func(fd int) bool) (wait time.Duration, closed bool) {
	_, wait, closed = AcceptAdmittedUpTo(ln, MaxAcceptsPerEvent, b, limit, sh, register)
	return wait, closed
}

// AcceptAdmittedUpTo is AcceptAdmitted with a bound of its own, n tries
// (as AcceptUpTo), that also returns how many connections it took,
// admitted or refused: for the shared queue, whose acceptor takes one
// per operation and goes on while the backlog yields one.
func AcceptAdmittedUpTo(ln Listener, n int, b *AcceptBackoff, limit *Limit, sh *models.Shard, register func(fd int) bool) (took int, wait time.Duration, closed bool) {
	wait, err := AcceptUpTo(ln, n, b, sh, func(fd int) bool {
		took++
		if !limit.Accept(fd, sh) {
			return true
		}
		closed = !register(fd)
		return !closed
	})
	if err != nil {
		sh.AddError(models.ErrAccept)
	}
	return took, wait, closed
}

// AcceptUpTo is AcceptBatch with a bound of its own, n tries (1 to
// MaxAcceptsPerEvent), under the same policy: for a model that accepts
// fewer connections per listener event than the batch does, such as an
// nginx worker without multi_accept, which takes one per event.
func AcceptUpTo(ln Listener, n int, b *AcceptBackoff, sh *models.Shard, add func(fd int) bool) (wait time.Duration, err error) {
	for range min(max(n, 1), MaxAcceptsPerEvent) {
		fd, _, err := ln.Accept()
		switch acceptPolicy(err) {
		case acceptOK:
			b.Reset()
			if !add(fd) {
				return 0, nil
			}
		case acceptDone:
			return 0, nil
		case acceptRetry:
		case acceptBackoff:
			sh.AddError(models.ErrAcceptBackoff)
			return b.Next(), nil
		default:
			if _, ok := err.(*os.SyscallError); !ok {
				err = os.NewSyscallError("accept4", err)
			}
			return 0, err
		}
	}
	return 0, nil
}

// AcceptFailed handles a failed accept in a blocking acceptor (one thread
// in accept(2), or Go's net.Listener) under the same policy as AcceptBatch:
// EINTR and ECONNABORTED are retried uncounted; a resource shortage is
// counted as models.ErrAcceptBackoff and the back-off waited out unless
// stop closes first; any other error is counted as models.ErrAccept. It
// reports false if stop closed (the acceptor should return).
func (b *AcceptBackoff) AcceptFailed(err error, sh *models.Shard, stop <-chan struct{}) bool {
	switch acceptPolicy(err) {
	case acceptRetry:
		return true
	case acceptBackoff:
	default:
		sh.AddError(models.ErrAccept)
		b.Reset()
		return true
	}
	sh.AddError(models.ErrAcceptBackoff)
	select {
	case <-stop:
		return false
	default:
	}
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// ThreadAcceptor is the accepting thread of a model that gives each
// connection a thread of its own (thread per connection, the front end):
// blocking accepts under the one accept error policy (AcceptFailed), then
// two caps. Each connection takes a place under Limit and a token of
// Slots, whose capacity is the model's thread cap; past either cap it is
// refused at once with a reason its client can read (Refuse, with the
// Limit's refusal or with Refusal), rather than left hanging in the listen
// backlog until a connection ends.
type ThreadAcceptor struct {
	Listener Listener        // a blocking listener
	Shard    *models.Shard   // the acceptor thread's own
	Stop     <-chan struct{} // closed when the server closes
	Limit    *Limit
	Slots    chan struct{} // a token per connection thread running
	Refusal  []byte        // the response past the thread cap (Refusal)
}

// Run is the acceptor thread's loop. It locks the thread — which exits
// still locked, so that the runtime destroys it rather than reuse it —
// records its TID in Shard, and accepts until Stop closes. It hands each
// connection admitted under both caps to start, with its place and its
// token taken; start reports false when the server is closing, having
// given both back, and Run returns.
func (a *ThreadAcceptor) Run(start func(fd int) bool) {
	runtime.LockOSThread()
	a.Shard.SetTID(models.CurrentThreadID())
	var backoff AcceptBackoff
	var slice Slice
	for {
		slice.Refresh()
		fd, _, err := a.Listener.Accept()
		if err != nil {
			select {
			case <-a.Stop:
				return // the listener was shut down
			default:
			}
			if !backoff.AcceptFailed(err, a.Shard, a.Stop) {
				return
			}
			continue
		}
		backoff.Reset()
		if !a.Limit.Admit() {
			Refuse(fd, a.Limit.Refusal(), a.Shard)
			continue
		}
		select {
		case a.Slots <- struct{}{}:
		default:
			a.Limit.Release()
			Refuse(fd, a.Refusal, a.Shard)
			continue
		}
		if !start(fd) {
			return
		}
	}
}

// ListenPause is when a listener that backed off (AcceptBatch returned a
// delay) is to be re-armed, for a model whose threads wait on the handle
// set with a timeout: every waiting thread bounds its wait by Timeout,
// and after its events the first to see the pause over (End) re-arms the
// listener. So the back-off costs no thread and no handle. Any thread may
// call its methods. The zero value is no pause.
//
// Note: a timerfd in the handle set (Leader/Followers' retryTimer) does the
// same without a timeout on every wait; it suits a pool whose threads take
// turns on the set, where a timeout would wake the leader alone anyway.
type ListenPause struct{ until atomic.Int64 } // monoNow when to re-arm; 0: none

// Start begins a pause of d.
func (p *ListenPause) Start(d time.Duration) { p.until.Store(monoNow() + int64(d)) }

// Timeout returns how long a thread may wait in the handle set: until the
// pause ends (0 if it has), or -1 (without bound) if there is none.
func (p *ListenPause) Timeout() time.Duration {
	at := p.until.Load()
	if at == 0 {
		return -1
	}
	return time.Duration(max(at-monoNow(), 0))
}

// End reports whether the pause is over, to one caller only: that caller
// re-arms the listener.
func (p *ListenPause) End() bool {
	at := p.until.Load()
	return at != 0 && monoNow() >= at && p.until.CompareAndSwap(at, 0)
}
