package connio

import (
	"concbench/wire"
)

// Buffer sizes.
const (
	// InitialIn is the input buffer's first size: room for a few pipelined
	// small requests per read.
	InitialIn = 4 << 10
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

// Out is a connection's output buffer: encoded responses not yet written.
type Out struct {
	buf []byte // buf[off:] is pending
	off int
}

// Pending returns the number of bytes waiting to be written.
func (o *Out) Pending() int { return len(o.buf) - o.off }

// Bytes returns the pending bytes. They stay pending until Advance.
func (o *Out) Bytes() []byte { return o.buf[o.off:] }

// Advance records that n pending bytes were written.
func (o *Out) Advance(n int) {
	o.off += n
	if o.off == len(o.buf) {
		o.off = 0
		o.buf = o.buf[:0]
		if cap(o.buf) > RetainLimit {
			o.buf = nil
		}
	}
}

// AppendResponse encodes resp after the pending bytes.
func (o *Out) AppendResponse(c wire.Codec, resp *wire.Response) {
	o.buf = c.AppendResponse(o.buf, resp)
}

// AppendError encodes the error response for a failed decode.
func (o *Out) AppendError(c wire.Codec, err error) {
	o.buf = c.AppendError(o.buf, err)
}
