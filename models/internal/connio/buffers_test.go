package connio

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"concbench/models/modeltest"
	"concbench/wire"
)

// TestOutStreamsPatternBodies: responses with Pattern bodies interleaved
// with inline ones leave as exactly the bytes of the materialised
// responses, in order, however the writes split them, while the buffer
// holds only heads and inline bodies.
func TestOutStreamsPatternBodies(t *testing.T) {
	for _, proto := range wire.Protocols {
		codec := modeltest.Codec(t, proto, wire.Limits{})
		rng := rand.New(rand.NewPCG(1, 2))
		for round := range 50 {
			var out Out
			var want []byte
			buffered := 0
			for id := range uint64(1 + rng.IntN(6)) {
				size := []int{0, 10, wire.MaxInlineBody + 1, 200 << 10, 1 << 20}[rng.IntN(5)]
				body := wire.AppendBody(nil, id, size)
				want = codec.AppendResponse(want, &wire.Response{ID: id, Payload: body})
				resp := &wire.Response{ID: id, Payload: body}
				if size > wire.MaxInlineBody {
					resp = &wire.Response{ID: id, Pattern: size}
				} else {
					buffered += size
				}
				out.AppendResponse(codec, resp)
			}
			if out.Pending() != len(want) {
				t.Fatalf("%s round %d: pending %d, want %d", proto, round, out.Pending(), len(want))
			}
			if b := out.Buffered(); b > buffered+6*256 {
				t.Fatalf("%s round %d: %d bytes buffered for %d bytes of inline bodies", proto, round, b, buffered)
			}
			var got []byte
			for out.Pending() > 0 {
				seg := out.Bytes()
				if len(seg) == 0 {
					t.Fatalf("%s round %d: empty segment with %d pending", proto, round, out.Pending())
				}
				n := 1 + rng.IntN(len(seg)) // a partial write
				got = append(got, seg[:n]...)
				out.Advance(n)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s round %d: %d bytes written differ from the %d materialised", proto, round, len(got), len(want))
			}
			if out.Buffered() != 0 || len(out.streams) != 0 || out.streamed != 0 {
				t.Fatalf("%s round %d: drained output still holds %d bytes, %d streams", proto, round, out.Buffered(), len(out.streams))
			}
		}
	}
}

// TestOutAppendWhileStreaming: a response appended while a stream is
// being written (pipelining, or a pool's worker completing) leaves after
// it.
func TestOutAppendWhileStreaming(t *testing.T) {
	codec := modeltest.Codec(t, "binary", wire.Limits{})
	var out Out
	var want []byte
	want = codec.AppendResponse(want, &wire.Response{ID: 1, Payload: wire.AppendBody(nil, 1, 100<<10)})
	out.AppendResponse(codec, &wire.Response{ID: 1, Pattern: 100 << 10})
	var got []byte
	for i := 0; out.Pending() > 0; i++ {
		seg := out.Bytes()
		n := min(len(seg), 5000)
		got = append(got, seg[:n]...)
		out.Advance(n)
		if i == 3 {
			want = codec.AppendResponse(want, &wire.Response{ID: 2, Payload: []byte("x")})
			out.AppendResponse(codec, &wire.Response{ID: 2, Payload: []byte("x")})
			want = codec.AppendResponse(want, &wire.Response{ID: 3, Payload: wire.AppendBody(nil, 3, 70<<10)})
			out.AppendResponse(codec, &wire.Response{ID: 3, Pattern: 70 << 10})
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes written differ from the %d expected", len(got), len(want))
	}
}
