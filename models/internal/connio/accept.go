package connio

import (
	"time"

	"concbench/handleset"
	"concbench/models"
)

// The bounds of the accept back-off.
const (
	MinAcceptBackoff = time.Millisecond
	MaxAcceptBackoff = time.Second
)

// AcceptBackoff is the exponential delay of an acceptor that ran out of
// descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): retrying at once
// would spin, since the condition lasts until some connection closes. The
// zero value starts at MinAcceptBackoff.
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

// AcceptFailed handles a failed accept in a blocking acceptor: it counts the
// error in sh and, for a resource shortage, waits out the back-off unless
// stop closes first. It reports false if stop closed (the acceptor should
// return).
func (b *AcceptBackoff) AcceptFailed(err error, sh *models.Shard, stop <-chan struct{}) bool {
	if !handleset.IsTemporary(err) {
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
