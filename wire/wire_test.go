package wire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// TestChecksum checks Checksum against its definition: CRC-32C of the ID as
// 8 little-endian bytes followed by the payload.
func TestChecksum(t *testing.T) {
	tests := []struct {
		name    string
		id      uint64
		payload []byte
	}{
		{name: "zero"},
		{name: "id-bytes-differ", id: 0x0102030405060708, payload: []byte("x")},
		{name: "max-id", id: 1<<64 - 1, payload: AppendBody(nil, 3, 5000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := binary.LittleEndian.AppendUint64(nil, tc.id)
			want := crc32.Checksum(append(msg, tc.payload...), crc32.MakeTable(crc32.Castagnoli))
			if got := Checksum(tc.id, tc.payload); got != want {
				t.Errorf("Checksum = %08x, want %08x", got, want)
			}
		})
	}
	p := []byte("payload")
	if n := testing.AllocsPerRun(100, func() { _ = Checksum(42, p) }); n != 0 {
		t.Errorf("Checksum: %v allocations per run, want 0", n)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		protocol string
		lim      Limits
		ok       bool
	}{
		{name: "binary", protocol: "binary", ok: true},
		{name: "http", protocol: "http", ok: true},
		{name: "unknown", protocol: "grpc"},
		{name: "bad-limit", protocol: "http", lim: Limits{MaxHeader: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.protocol, tc.lim)
			if (err == nil) != tc.ok {
				t.Fatalf("New(%q, %+v) error %v, want ok %v", tc.protocol, tc.lim, err, tc.ok)
			}
			if err == nil && c.Protocol() != tc.protocol {
				t.Errorf("Protocol() = %q, want %q", c.Protocol(), tc.protocol)
			}
		})
	}
}

// TestErrorsIs checks that the codecs' specific errors match the sentinel
// of their kind.
func TestErrorsIs(t *testing.T) {
	sentinel := map[ErrorKind]error{KindMalformed: ErrMalformed, KindTooLarge: ErrTooLarge,
		KindHeaderTooLarge: ErrHeaderTooLarge, KindUnsupported: ErrUnsupported}
	for _, err := range []*Error{errBinMagic, errBinVersion, errBinTooLarge, errHeadTooLarge, errHTTPPath, errHTTPMethod} {
		if !errors.Is(err, sentinel[err.Kind]) {
			t.Errorf("errors.Is(%v, sentinel of kind %v) = false", err, err.Kind)
		}
	}
}
