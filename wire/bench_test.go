package wire

import (
	"strconv"
	"testing"
	"time"
)

// The benchmarks measure one message of the size the model benchmarks use
// (cpu, block, a 64-byte body), so that -benchmem shows the steady-state
// allocation contract: 0 allocs/op for decoding, and for encoding into a
// buffer with room.

var benchRequest = Request{ID: 123456789, Op: OpWork, CPU: 20 * time.Microsecond, Block: 0, Size: 64}

func benchCodecs(b *testing.B) []Codec { return testCodecs(b, Limits{}) }

func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range benchCodecs(b) {
		b.Run("protocol="+c.Protocol(), func(b *testing.B) {
			benchDecode(b, c.DecodeRequest, c.AppendRequest(nil, &benchRequest))
		})
	}
}

// benchDecode measures decode of buf, one whole message, into one reused
// message, as a server's connection loop decodes.
func benchDecode[M any](b *testing.B, decode func([]byte, *M) (int, error), buf []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	var m M
	for b.Loop() {
		if n, err := decode(buf, &m); n != len(buf) || err != nil {
			b.Fatalf("decode = %d, %v", n, err)
		}
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	for _, c := range benchCodecs(b) {
		b.Run("protocol="+c.Protocol(), func(b *testing.B) {
			b.ReportAllocs()
			dst := c.AppendRequest(nil, &benchRequest)
			b.SetBytes(int64(len(dst)))
			for b.Loop() {
				dst = c.AppendRequest(dst[:0], &benchRequest)
			}
		})
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	for _, size := range []int{64, 4096} {
		resp := Response{ID: benchRequest.ID, Payload: AppendBody(nil, benchRequest.ID, size)}
		for _, c := range benchCodecs(b) {
			b.Run("protocol="+c.Protocol()+"/size="+strconv.Itoa(size), func(b *testing.B) {
				b.ReportAllocs()
				dst := c.AppendResponse(nil, &resp)
				b.SetBytes(int64(len(dst)))
				for b.Loop() {
					dst = c.AppendResponse(dst[:0], &resp)
				}
			})
		}
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	resp := Response{ID: benchRequest.ID, Payload: AppendBody(nil, benchRequest.ID, 64)}
	for _, c := range benchCodecs(b) {
		b.Run("protocol="+c.Protocol(), func(b *testing.B) {
			benchDecode(b, c.DecodeResponse, c.AppendResponse(nil, &resp))
		})
	}
}

func BenchmarkParseDuration(b *testing.B) {
	for _, s := range []string{"20us", "1.5ms", "1h2m3s"} {
		in := []byte(s)
		b.Run("in="+s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := parseDuration(in); !ok {
					b.Fatal("parse failed")
				}
			}
		})
	}
}
