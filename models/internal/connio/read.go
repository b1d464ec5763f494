package connio

import (
	"concbench/handleset"
	"concbench/models"
)

// ReadResult is what one read of a non-blocking connection found.
type ReadResult uint8

// The results of In.ReadOnce.
const (
	// ReadMore: bytes arrived and filled the space offered; more may be
	// waiting in the socket.
	ReadMore ReadResult = iota
	// ReadDrained: bytes arrived, fewer than the space offered, so the
	// socket is very likely drained. The handle set reports whatever
	// arrives meanwhile, so the read that would return EAGAIN is skipped.
	ReadDrained
	// ReadNone: nothing to read now (EAGAIN).
	ReadNone
	// ReadEnd: end of input (the peer shut down its sending side). A
	// request left incomplete in the buffer is counted already
	// (Timer.EndOfInput).
	ReadEnd
	// ReadFailed: the read failed; ReadOnce returns the error, uncounted
	// (the caller counts it with CountIOError, and may have more to undo).
	ReadFailed
)

// ReadOnce is the read step of every model that learns of readiness from a
// handle set: one read from the non-blocking descriptor fd into in's free
// space, the bytes committed to in and counted in sh. At end of input it
// counts a request left incomplete as truncated, unless t's reaper cut it
// short (Timer.EndOfInput). The caller decodes what arrived and decides
// whether to read again (ReadMore, within MaxReadsPerEvent).
func (in *In) ReadOnce(fd int, t *Timer, sh *models.Shard) (ReadResult, error) {
	sp := in.Space()
	n, err := handleset.Read(fd, sp)
	switch {
	case err == nil && n == 0:
		t.EndOfInput(sh, in.Buffered())
		return ReadEnd, nil
	case err == nil:
	case handleset.IsWouldBlock(err):
		return ReadNone, nil
	default:
		return ReadFailed, err
	}
	in.Commit(n)
	sh.AddRead(n)
	if n < len(sp) {
		return ReadDrained, nil
	}
	return ReadMore, nil
}
