package wire

import (
	"encoding/binary"
	"time"
)

// The binary frame layout; doc.go documents it for outside clients and must
// match these constants.
const (
	binaryVersion     = 1
	requestHeaderLen  = 40
	responseHeaderLen = 24
)

// Binary is the binary framed protocol (see the package documentation for
// the byte layout). Get one from New, which validates the limits; the zero
// value uses the default limits.
type Binary struct{ lim Limits }

var _ Codec = (*Binary)(nil)

// Decode errors of the binary protocol. They are preallocated so that the
// error path allocates nothing either.
var (
	errBinMagic      = &Error{Kind: KindMalformed, Msg: `binary: bad magic (want "CB" for a request, "CR" for a response)`}
	errBinVersion    = &Error{Kind: KindUnsupported, Msg: "binary: unsupported version (accepted: 1)"}
	errBinOp         = &Error{Kind: KindMalformed, Msg: "binary: unknown op"}
	errBinStatus     = &Error{Kind: KindMalformed, Msg: "binary: unknown status"}
	errBinReserved   = &Error{Kind: KindMalformed, Msg: "binary: reserved header bytes not zero"}
	errBinCPU        = &Error{Kind: KindMalformed, Msg: "binary: cpu work negative or over the limit"}
	errBinBlock      = &Error{Kind: KindMalformed, Msg: "binary: block work negative or over the limit"}
	errBinSize       = &Error{Kind: KindMalformed, Msg: "binary: response size over the limit"}
	errBinTooLarge   = &Error{Kind: KindTooLarge, Msg: "binary: payload length over the limit"}
	errBinLedgerLen  = &Error{Kind: KindMalformed, Msg: "binary: wrong payload length for the ledger op"}
	errBinAmount     = &Error{Kind: KindMalformed, Msg: "binary: amount not positive"}
	errBinTimeout    = &Error{Kind: KindMalformed, Msg: "binary: timeout negative or over the limit"}
	errBinRespLength = &Error{Kind: KindTooLarge, Msg: "binary: response payload length over the limit"}
)

// ledgerArgLen is the payload length of each ledger op's arguments; -1 means
// any length (OpWork's payload is opaque).
var ledgerArgLen = [numOps]int{
	OpWork:     -1,
	OpBalance:  4,  // account
	OpDeposit:  12, // account, amount
	OpWithdraw: 20, // account, amount, timeout
	OpTransfer: 16, // from, to, amount
	OpTotal:    0,
}

// Protocol returns "binary".
func (*Binary) Protocol() string { return "binary" }

// checkRequestHeader validates the header fields wholly inside h, a prefix of
// a request frame, in offset order. Because every check needs only its own
// field and those before it, a frame's first error is reported as soon as
// the bytes that show it arrive, and the same error is reported however the
// frame is split across reads.
func checkRequestHeader(h []byte, lim *Limits) error {
	if len(h) >= 1 && h[0] != 'C' || len(h) >= 2 && h[1] != 'B' {
		return errBinMagic
	}
	if len(h) >= 3 && h[2] != binaryVersion {
		return errBinVersion
	}
	if len(h) >= 4 && !Op(h[3]).Valid() {
		return errBinOp
	}
	for i := 5; i < min(len(h), 8); i++ {
		if h[i] != 0 {
			return errBinReserved
		}
	}
	if len(h) >= 24 && !workOK(int64(le64(h[16:])), lim) {
		return errBinCPU
	}
	if len(h) >= 32 && !workOK(int64(le64(h[24:])), lim) {
		return errBinBlock
	}
	if len(h) >= 36 && le32(h[32:]) > uint64(lim.MaxPayload) {
		return errBinSize
	}
	if len(h) >= 40 {
		n := le32(h[36:])
		if n > uint64(lim.MaxPayload) {
			return errBinTooLarge
		}
		if want := ledgerArgLen[h[3]]; want >= 0 && n != uint64(want) {
			return errBinLedgerLen
		}
	}
	return nil
}

// workOK reports whether ns is an acceptable CPU, Block or Timeout duration.
func workOK(ns int64, lim *Limits) bool {
	return ns >= 0 && time.Duration(ns) <= lim.MaxWork
}

// DecodeRequest decodes the request frame at the front of buf (see Codec).
// Header fields are validated as soon as they are in buf, so an oversized
// payload length is rejected before any of the payload arrives. For a
// ledger op the payload holds the op's arguments, which fill Account, To,
// Amount and Timeout; Payload is then nil. Close is always false: a binary
// client closes the connection itself.
func (c *Binary) DecodeRequest(buf []byte, req *Request) (int, error) {
	lim := c.lim.WithDefaults()
	if err := checkRequestHeader(buf[:min(len(buf), requestHeaderLen)], &lim); err != nil {
		return 0, err
	}
	total := wholeFrame(buf, requestHeaderLen, 36)
	if total == 0 {
		return 0, nil
	}
	r := Request{
		ID:       le64(buf[8:]),
		Op:       Op(buf[3]),
		Priority: buf[4],
		CPU:      time.Duration(le64(buf[16:])),
		Block:    time.Duration(le64(buf[24:])),
		Size:     int(le32(buf[32:])),
	}
	p := buf[requestHeaderLen:total:total]
	switch r.Op {
	case OpWork:
		if len(p) > 0 {
			r.Payload = p
		}
	case OpBalance:
		r.Account = uint32(le32(p))
	case OpDeposit:
		r.Account, r.Amount = uint32(le32(p)), int64(le64(p[4:]))
	case OpWithdraw:
		r.Account, r.Amount, r.Timeout = uint32(le32(p)), int64(le64(p[4:])), time.Duration(le64(p[12:]))
		if !workOK(int64(r.Timeout), &lim) {
			return 0, errBinTimeout
		}
	case OpTransfer:
		r.Account, r.To, r.Amount = uint32(le32(p)), uint32(le32(p[4:])), int64(le64(p[8:]))
	}
	if needsAmount(r.Op) && r.Amount <= 0 {
		return 0, errBinAmount
	}
	*req = r
	return total, nil
}

// needsAmount reports whether op carries an amount, which must be positive.
func needsAmount(op Op) bool {
	return op == OpDeposit || op == OpWithdraw || op == OpTransfer
}

// AppendRequest appends req as a request frame (see Codec). A ledger op's
// payload is built from its arguments and req.Payload is not sent; OpWork
// sends req.Payload. Values the server would reject (negative work, an
// invalid Op) are encoded as they are, so a client can test that rejection;
// Size must lie in [0, 1<<32).
func (*Binary) AppendRequest(dst []byte, req *Request) []byte {
	n := len(req.Payload)
	if req.Op != OpWork && req.Op.Valid() {
		n = ledgerArgLen[req.Op]
	}
	dst = append(dst, 'C', 'B', binaryVersion, byte(req.Op), req.Priority, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, req.ID)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(req.CPU))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(req.Block))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(req.Size))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	switch req.Op {
	case OpBalance:
		dst = binary.LittleEndian.AppendUint32(dst, req.Account)
	case OpDeposit:
		dst = binary.LittleEndian.AppendUint32(dst, req.Account)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(req.Amount))
	case OpWithdraw:
		dst = binary.LittleEndian.AppendUint32(dst, req.Account)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(req.Amount))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(req.Timeout))
	case OpTransfer:
		dst = binary.LittleEndian.AppendUint32(dst, req.Account)
		dst = binary.LittleEndian.AppendUint32(dst, req.To)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(req.Amount))
	case OpTotal:
	default: // OpWork, or an invalid op sent on purpose
		dst = append(dst, req.Payload...)
	}
	return dst
}

// AppendResponse appends resp as a response frame (see Codec). The frame
// carries Checksum(resp.ID, resp.Payload); resp.Checksum and resp.Close are
// not sent (the server closes the connection itself).
func (b *Binary) AppendResponse(dst []byte, resp *Response) []byte {
	return appendPatternBody(b.AppendResponseHead(dst, resp), resp)
}

// appendPatternBody appends resp's Pattern body, if it has one, after the
// head that AppendResponseHead wrote: both codecs send the same body bytes,
// whatever the head.
func appendPatternBody(dst []byte, resp *Response) []byte {
	if resp.Pattern > 0 {
		dst = AppendBody(dst, resp.ID, resp.Pattern)
	}
	return dst
}

// AppendResponseHead is AppendResponse without a Pattern body (see Codec).
func (*Binary) AppendResponseHead(dst []byte, resp *Response) []byte {
	if resp.Pattern > 0 {
		return appendFrameHead(dst, resp.ID, resp.Status, resp.Pattern, PatternChecksum(resp.ID, resp.Pattern))
	}
	return appendResponseFrame(dst, resp.ID, resp.Status, resp.Payload)
}

func appendResponseFrame(dst []byte, id uint64, st Status, payload []byte) []byte {
	dst = appendFrameHead(dst, id, st, len(payload), Checksum(id, payload))
	return append(dst, payload...)
}

// appendFrameHead appends a response frame's header for a body of n bytes
// with checksum sum.
func appendFrameHead(dst []byte, id uint64, st Status, n int, sum uint32) []byte {
	dst = append(dst, 'C', 'R', binaryVersion, byte(st), 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, id)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	return binary.LittleEndian.AppendUint32(dst, sum)
}

// AppendError appends the response frame for a request that failed to
// decode with err: ID 0, an empty payload and StatusTooLarge for
// KindTooLarge and KindHeaderTooLarge, StatusBadRequest for KindMalformed
// and KindUnsupported, StatusInternal for an error that is not an *Error.
func (*Binary) AppendError(dst []byte, err error) []byte {
	return appendResponseFrame(dst, 0, errorStatus(KindOf(err)), nil)
}

// errorStatus is the Status of the response to a request that failed to
// decode with an error of kind k.
func errorStatus(k ErrorKind) Status {
	switch k {
	case KindMalformed, KindUnsupported:
		return StatusBadRequest
	case KindTooLarge, KindHeaderTooLarge:
		return StatusTooLarge
	}
	return StatusInternal
}

// checkResponseHeader is checkRequestHeader for a response frame.
func checkResponseHeader(h []byte, lim *Limits) error {
	if len(h) >= 1 && h[0] != 'C' || len(h) >= 2 && h[1] != 'R' {
		return errBinMagic
	}
	if len(h) >= 3 && h[2] != binaryVersion {
		return errBinVersion
	}
	if len(h) >= 4 && h[3] >= numStatuses {
		return errBinStatus
	}
	for i := 4; i < min(len(h), 8); i++ {
		if h[i] != 0 {
			return errBinReserved
		}
	}
	if len(h) >= 20 && le32(h[16:]) > uint64(lim.MaxPayload) {
		return errBinRespLength
	}
	return nil
}

// DecodeResponse decodes the response frame at the front of buf (see
// Codec). It sets Checksum and HasChecksum from the frame but does not
// verify the checksum: the client does, so that it can count checksum
// failures apart from malformed frames. Close is always false.
func (c *Binary) DecodeResponse(buf []byte, resp *Response) (int, error) {
	lim := c.lim.WithDefaults()
	if err := checkResponseHeader(buf[:min(len(buf), responseHeaderLen)], &lim); err != nil {
		return 0, err
	}
	total := wholeFrame(buf, responseHeaderLen, 16)
	if total == 0 {
		return 0, nil
	}
	*resp = Response{
		ID:          le64(buf[8:]),
		Status:      Status(buf[3]),
		Checksum:    uint32(le32(buf[20:])),
		HasChecksum: true,
	}
	if total > responseHeaderLen {
		resp.Payload = buf[responseHeaderLen:total:total]
	}
	return total, nil
}

// wholeFrame returns the length of the frame at the front of buf, whose
// header is headerLen bytes long with the payload length at offset lenAt,
// or 0 while buf holds only part of it. Requests and responses are framed
// alike; the caller has checked the header.
func wholeFrame(buf []byte, headerLen, lenAt int) int {
	if len(buf) < headerLen {
		return 0
	}
	if total := headerLen + int(le32(buf[lenAt:])); len(buf) >= total {
		return total
	}
	return 0
}

// le32 returns the little-endian uint32 at the front of b, widened so that
// comparisons with limits cannot overflow.
func le32(b []byte) uint64 { return uint64(binary.LittleEndian.Uint32(b)) }

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
