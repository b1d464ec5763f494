package wire

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// unhexDump decodes a hex dump written with spaces, newlines and comments
// after '#'.
func unhexDump(t *testing.T, dump string) []byte {
	t.Helper()
	var clean strings.Builder
	for line := range strings.Lines(dump) {
		line, _, _ = strings.Cut(line, "#")
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBinaryLayout pins the frame layout that doc.go documents.
func TestBinaryLayout(t *testing.T) {
	c := &Binary{}
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{
			name: "request/op=work",
			got: c.AppendRequest(nil, &Request{ID: 0x0102030405060708, Op: OpWork, Priority: 7,
				CPU: 20 * time.Microsecond, Block: time.Millisecond, Size: 64, Payload: []byte("hi")}),
			want: `
				43 42 01 00 07 000000   # magic, version, op, priority, reserved
				0807060504030201        # id
				204e000000000000        # cpu 20000 ns
				40420f0000000000        # block 1000000 ns
				40000000                # response size 64
				02000000                # payload length 2
				6869                    # payload`,
		},
		{
			name: "request/op=withdraw",
			got:  c.AppendRequest(nil, &Request{ID: 1, Op: OpWithdraw, Account: 3, Amount: 100, Timeout: time.Second}),
			want: `
				43 42 01 03 00 000000 0100000000000000 0000000000000000 0000000000000000 00000000
				14000000                # payload length 20
				03000000                # account 3
				6400000000000000        # amount 100
				00ca9a3b00000000        # timeout 1e9 ns`,
		},
		{
			name: "request/op=transfer",
			got:  c.AppendRequest(nil, &Request{ID: 2, Op: OpTransfer, Account: 1, To: 2, Amount: 5}),
			want: `
				43 42 01 04 00 000000 0200000000000000 0000000000000000 0000000000000000 00000000
				10000000 01000000 02000000 0500000000000000`,
		},
		{
			name: "request/op=balance",
			got:  c.AppendRequest(nil, &Request{ID: 3, Op: OpBalance, Account: 9}),
			want: `43 42 01 01 00 000000 0300000000000000 0000000000000000 0000000000000000 00000000 04000000 09000000`,
		},
		{
			name: "request/op=deposit",
			got:  c.AppendRequest(nil, &Request{ID: 4, Op: OpDeposit, Account: 9, Amount: 1}),
			want: `43 42 01 02 00 000000 0400000000000000 0000000000000000 0000000000000000 00000000 0c000000 09000000 0100000000000000`,
		},
		{
			name: "request/op=total",
			got:  c.AppendRequest(nil, &Request{ID: 5, Op: OpTotal, Payload: []byte("dropped")}),
			want: `43 42 01 05 00 000000 0500000000000000 0000000000000000 0000000000000000 00000000 00000000`,
		},
		{
			name: "response",
			got:  c.AppendResponse(nil, &Response{ID: 0x0102030405060708, Status: StatusInsufficientFunds, Payload: []byte("ok")}),
			want: `
				43 52 01 04 00000000    # magic, version, status, reserved
				0807060504030201        # id
				02000000                # payload length
				` + hex.EncodeToString(le32bytes(Checksum(0x0102030405060708, []byte("ok")))) + `
				6f6b                    # payload`,
		},
		{
			name: "error",
			got:  c.AppendError(nil, ErrTooLarge),
			want: `43 52 01 02 00000000 0000000000000000 00000000 ` + hex.EncodeToString(le32bytes(Checksum(0, nil))),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if want := unhexDump(t, tc.want); !bytes.Equal(tc.got, want) {
				t.Errorf("encoded\n%s\nwant\n%s", hex.Dump(tc.got), hex.Dump(want))
			}
		})
	}
}

func le32bytes(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// binaryFrame returns a valid OpWork request frame with payload length n
// (and no payload), changed by edit.
func binaryFrame(n uint32, edit func(h []byte)) []byte {
	h := (&Binary{}).AppendRequest(nil, &Request{ID: 1, Op: OpWork, CPU: time.Microsecond, Size: 1})
	copy(h[36:], le32bytes(n))
	if edit != nil {
		edit(h)
	}
	return h
}

func putU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// ledgerFrame returns a request frame for op with the given payload.
func ledgerFrame(op Op, payload []byte) []byte {
	return append(binaryFrame(uint32(len(payload)), func(h []byte) { h[3] = byte(op) }), payload...)
}

func TestBinaryDecodeRequestErrors(t *testing.T) {
	lim := Limits{MaxPayload: 1000, MaxWork: time.Second}
	amount := func(v int64) []byte { b := make([]byte, 8); putU64(b, uint64(v)); return b }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	acct := le32bytes(1)
	tests := []struct {
		name  string
		frame []byte
		want  ErrorKind
	}{
		{name: "magic/first-byte", frame: []byte("X"), want: KindMalformed},
		{name: "magic/second-byte", frame: []byte("CR"), want: KindMalformed},
		{name: "magic/http", frame: []byte("GET / HTTP/1.1\r\n\r\n"), want: KindMalformed},
		{name: "version=0", frame: binaryFrame(0, func(h []byte) { h[2] = 0 }), want: KindUnsupported},
		{name: "version=2", frame: binaryFrame(0, func(h []byte) { h[2] = 2 }), want: KindUnsupported},
		{name: "op=6", frame: binaryFrame(0, func(h []byte) { h[3] = 6 }), want: KindMalformed},
		{name: "op=255", frame: binaryFrame(0, func(h []byte) { h[3] = 255 }), want: KindMalformed},
		{name: "reserved/5", frame: binaryFrame(0, func(h []byte) { h[5] = 1 }), want: KindMalformed},
		{name: "reserved/7", frame: binaryFrame(0, func(h []byte) { h[7] = 0x80 }), want: KindMalformed},
		{name: "cpu/negative", frame: binaryFrame(0, func(h []byte) { putU64(h[16:], 1<<63) }), want: KindMalformed},
		{name: "cpu/over-limit", frame: binaryFrame(0, func(h []byte) { putU64(h[16:], uint64(time.Second+1)) }), want: KindMalformed},
		{name: "block/negative", frame: binaryFrame(0, func(h []byte) { putU64(h[24:], 1<<64-1) }), want: KindMalformed},
		{name: "block/over-limit", frame: binaryFrame(0, func(h []byte) { putU64(h[24:], uint64(2*time.Second)) }), want: KindMalformed},
		{name: "size/over-limit", frame: binaryFrame(0, func(h []byte) { copy(h[32:], le32bytes(1001)) }), want: KindMalformed},
		{name: "payload/over-limit/header-only", frame: binaryFrame(1001, nil), want: KindTooLarge},
		{name: "payload/max-u32", frame: binaryFrame(1<<32-1, nil), want: KindTooLarge},
		{name: "payload/over-limit/ledger", frame: binaryFrame(1<<31, func(h []byte) { h[3] = byte(OpBalance) }), want: KindTooLarge},
		{name: "balance/short", frame: ledgerFrame(OpBalance, []byte{1, 0, 0}), want: KindMalformed},
		{name: "balance/long", frame: ledgerFrame(OpBalance, cat(acct, amount(1))), want: KindMalformed},
		{name: "deposit/short", frame: ledgerFrame(OpDeposit, acct), want: KindMalformed},
		{name: "deposit/amount=0", frame: ledgerFrame(OpDeposit, cat(acct, amount(0))), want: KindMalformed},
		{name: "deposit/amount<0", frame: ledgerFrame(OpDeposit, cat(acct, amount(-5))), want: KindMalformed},
		{name: "withdraw/short", frame: ledgerFrame(OpWithdraw, cat(acct, amount(1))), want: KindMalformed},
		{name: "withdraw/amount=0", frame: ledgerFrame(OpWithdraw, cat(acct, amount(0), amount(0))), want: KindMalformed},
		{name: "withdraw/timeout<0", frame: ledgerFrame(OpWithdraw, cat(acct, amount(1), amount(-1))), want: KindMalformed},
		{name: "withdraw/timeout-over-limit", frame: ledgerFrame(OpWithdraw, cat(acct, amount(1), amount(int64(time.Second)+1))), want: KindMalformed},
		{name: "transfer/short", frame: ledgerFrame(OpTransfer, cat(acct, acct)), want: KindMalformed},
		{name: "transfer/amount<0", frame: ledgerFrame(OpTransfer, cat(acct, acct, amount(-1<<63))), want: KindMalformed},
		{name: "total/payload", frame: ledgerFrame(OpTotal, []byte{0}), want: KindMalformed},
	}
	c := newCodec(t, "binary", lim)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrorPrefixes(t, c.DecodeRequest, tc.frame, tc.want)
		})
	}
}

// TestBinaryDecodeRequestLimits checks the accepted edges of each limit.
func TestBinaryDecodeRequestLimits(t *testing.T) {
	lim := Limits{MaxPayload: 1000, MaxWork: time.Second}
	c := newCodec(t, "binary", lim)
	tests := []struct {
		name string
		req  Request
	}{
		{name: "work=max", req: Request{Op: OpWork, CPU: time.Second, Block: time.Second}},
		{name: "size=max", req: Request{Op: OpWork, Size: 1000}},
		{name: "payload=max", req: Request{Op: OpWork, Payload: make([]byte, 1000)}},
		{name: "timeout=max", req: Request{Op: OpWithdraw, Amount: 1, Timeout: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := c.AppendRequest(nil, &tc.req)
			mustDecode(t, c.DecodeRequest, b, len(b))
		})
	}
}

func TestBinaryDecodeResponseErrors(t *testing.T) {
	c := newCodec(t, "binary", Limits{MaxPayload: 1000})
	frame := func(edit func(h []byte)) []byte {
		h := c.AppendResponse(nil, &Response{ID: 1})
		edit(h)
		return h
	}
	tests := []struct {
		name  string
		frame []byte
		want  ErrorKind
	}{
		{name: "magic/request", frame: frame(func(h []byte) { h[1] = 'B' }), want: KindMalformed},
		{name: "magic/http", frame: []byte("HTTP/1.1 200 OK\r\n"), want: KindMalformed},
		{name: "version=2", frame: frame(func(h []byte) { h[2] = 2 }), want: KindUnsupported},
		{name: "status=undefined", frame: frame(func(h []byte) { h[3] = byte(numStatuses) }), want: KindMalformed},
		{name: "reserved/4", frame: frame(func(h []byte) { h[4] = 1 }), want: KindMalformed},
		{name: "reserved/7", frame: frame(func(h []byte) { h[7] = 1 }), want: KindMalformed},
		{name: "payload/over-limit/header-only", frame: frame(func(h []byte) { copy(h[16:], le32bytes(1001)) }), want: KindTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrorPrefixes(t, c.DecodeResponse, tc.frame, tc.want)
		})
	}
}

// TestBinaryDecodeResponseKeepsBadChecksum checks that DecodeResponse
// reports the frame's checksum without verifying it.
func TestBinaryDecodeResponseKeepsBadChecksum(t *testing.T) {
	c := &Binary{}
	b := c.AppendResponse(nil, &Response{ID: 9, Payload: []byte("data")})
	b[20] ^= 0xff
	got := mustDecode(t, c.DecodeResponse, b, len(b))
	if !got.HasChecksum || got.Checksum == Checksum(9, got.Payload) {
		t.Errorf("checksum %08x (present %v): want the corrupted value", got.Checksum, got.HasChecksum)
	}
}
