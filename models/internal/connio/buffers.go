package connio

import (
	"concbench/models"
	"concbench/wire"
)

// Buffer sizes.
const (
	// InitialIn is the input buffer's first size (the bound the models
	// package documents).
	InitialIn = models.InitialInput
	// RetainLimit is the largest buffer kept while empty; larger ones are
	// dropped and reallocated on demand.
	RetainLimit = 64 << 10
)

// In is a connection's input buffer: bytes read but not yet decoded.
//
// Ownership: a Request decoded by Next aliases the buffer (its Payload) and
// is valid until the next call to Space.
type In struct {
	buf []byte // buf[off:] holds undecoded bytes
	off int
	max int // the buffer never grows beyond this
}

// NewIn returns an input buffer that grows up to max bytes: enough for the
// largest request the codec limits allow.
func NewIn(max int) In { return In{max: max} }

// MaxRequest returns the largest encoded request the limits allow: a header
// section or frame header plus the largest payload.
func MaxRequest(lim wire.Limits) int {
	lim = lim.WithDefaults()
	return lim.MaxHeader + lim.MaxPayload + 64
}

// Buffered returns the number of undecoded bytes.
func (in *In) Buffered() int { return len(in.buf) - in.off }

// Space returns free space to read into, moving undecoded bytes to the front
// and growing the buffer when they fill it. It returns an empty slice only
// when the buffer is at its bound and full, which a codec with matching
// limits never allows (it reports the request as too large first).
func (in *In) Space() []byte {
	if in.off > 0 {
		n := copy(in.buf[:cap(in.buf)], in.buf[in.off:])
		in.buf = in.buf[:n]
		in.off = 0
	}
	if len(in.buf) == 0 && cap(in.buf) > RetainLimit {
		in.buf = nil
	}
	if in.buf == nil {
		in.buf = make([]byte, 0, min(InitialIn, in.max))
	}
	if len(in.buf) == cap(in.buf) && cap(in.buf) < in.max {
		nb := make([]byte, len(in.buf), min(2*cap(in.buf), in.max))
		copy(nb, in.buf)
		in.buf = nb
	}
	return in.buf[len(in.buf):cap(in.buf)]
}

// Commit records that n bytes were read into the slice Space returned.
func (in *In) Commit(n int) { in.buf = in.buf[:len(in.buf)+n] }

// Append copies p into the buffer (for drivers that receive data in their
// own buffers, such as io_uring provided buffers). It returns how many bytes
// fitted.
func (in *In) Append(p []byte) int {
	done := 0
	for done < len(p) {
		sp := in.Space()
		if len(sp) == 0 {
			break
		}
		n := copy(sp, p[done:])
		in.Commit(n)
		done += n
	}
	return done
}

// Next decodes the next complete request into req. It reports false with a
// nil error when no complete request is buffered.
func (in *In) Next(c wire.Codec, req *wire.Request) (bool, error) {
	if in.off == len(in.buf) {
		return false, nil
	}
	n, err := c.DecodeRequest(in.buf[in.off:], req)
	if err != nil || n == 0 {
		return false, err
	}
	in.off += n
	return true, nil
}

// Out is a connection's output: encoded responses not yet written. Their
// bytes are held in one buffer, except the bodies sent as a
// wire.Response.Pattern, which are not materialised: each is a stream,
// sent from the codec's shared table (wire.BodyWindow) at its place among
// the buffered bytes. So a response of a megabyte occupies a few dozen
// bytes of the buffer, and what a connection holds is its small responses
// and heads, bounded by the caller's output bound (Session.OutputFull),
// which counts every pending byte, streamed or not.
//
// Bytes returns one segment at a time (buffered bytes up to the next
// stream, or a window of the stream); Advance must be given at most its
// length. Writers loop: for Pending() > 0 { write Bytes(); Advance(n) }.
type Out struct {
	buf      []byte   // buf[off:] is pending
	off      int      //
	streams  []stream // streams[head:] are pending, in order
	head     int      //
	streamed int      // pending bytes of the streams
}

// stream is a Pattern body among the output: it is sent once the buffer's
// bytes before position at have been written.
type stream struct {
	at   int    // its place in buf
	id   uint64 // the request whose body it is
	sent int    // bytes already written
	size int    // its length
}

// Pending returns the number of bytes waiting to be written, streamed
// bodies included.
func (o *Out) Pending() int { return len(o.buf) - o.off + o.streamed }

// Buffered returns the number of pending bytes held in memory: Pending
// without the streamed bodies.
func (o *Out) Buffered() int { return len(o.buf) - o.off }

// Bytes returns the next segment of pending bytes. It stays pending until
// Advance. It must not be modified: a streamed body's window is shared.
func (o *Out) Bytes() []byte {
	if o.head < len(o.streams) {
		s := &o.streams[o.head]
		if s.at == o.off {
			return wire.BodyWindow(s.id, s.sent, s.size-s.sent)
		}
		return o.buf[o.off:s.at]
	}
	return o.buf[o.off:]
}

// Advance records that n bytes of the segment Bytes returned were written.
func (o *Out) Advance(n int) {
	if o.head < len(o.streams) && o.streams[o.head].at == o.off {
		s := &o.streams[o.head]
		s.sent += n
		o.streamed -= n
		if s.sent < s.size {
			return
		}
		o.streams[o.head] = stream{}
		o.head++
		if o.head == len(o.streams) {
			o.head, o.streams = 0, o.streams[:0]
		}
		n = 0 // the bytes after the stream come next
	}
	o.off += n
	if o.off < len(o.buf) {
		return
	}
	// Every buffered byte is written; the pending streams, if any, all
	// sit at its end: rebase them on an empty buffer.
	for i := o.head; i < len(o.streams); i++ {
		o.streams[i].at -= o.off
	}
	o.off = 0
	o.buf = o.buf[:0]
	if cap(o.buf) > RetainLimit {
		o.buf = nil
	}
}

// AppendResponse encodes resp after the pending bytes; a Pattern body
// becomes a stream.
func (o *Out) AppendResponse(c wire.Codec, resp *wire.Response) {
	if resp.Pattern <= 0 {
		o.buf = c.AppendResponse(o.buf, resp)
		return
	}
	o.buf = c.AppendResponseHead(o.buf, resp)
	o.streams = append(o.streams, stream{at: len(o.buf), id: resp.ID, size: resp.Pattern})
	o.streamed += resp.Pattern
}

// AppendError encodes the error response for a failed decode.
func (o *Out) AppendError(c wire.Codec, err error) {
	o.buf = c.AppendError(o.buf, err)
}
