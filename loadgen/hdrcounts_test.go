package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// hdrGeometry is one histogram range and precision under test.
type hdrGeometry struct {
	lowest, highest int64
	digits          int
}

// testGeometries are the ranges and precisions the hdrCounts tests cover:
// the default range and a narrow one, from 1 and from 1000, at every
// precision.
func testGeometries() []hdrGeometry {
	var gs []hdrGeometry
	for _, lowest := range []int64{1, 1000} {
		for _, highest := range []int64{60e9, 1e6} {
			for digits := 1; digits <= 5; digits++ {
				gs = append(gs, hdrGeometry{lowest: lowest, highest: highest, digits: digits})
			}
		}
	}
	return gs
}

// randomValue draws a value in [0, highest]: log-uniform over the range
// mostly (so that every bucket gets some), sometimes an end of it.
func randomValue(r *rand.Rand, highest int64) int64 {
	switch r.IntN(20) {
	case 0:
		return 0
	case 1:
		return highest
	default:
		return min(int64(math.Exp(r.Float64()*math.Log(float64(highest)))), highest)
	}
}

// checkSame fails t unless c, encoded, decodes to a histogram equal to h,
// with the same total and max, and encodes to the very bytes the library
// writes.
func checkSame(t *testing.T, enc *hdrEncoder, c *hdrCounts, h *hdr.Histogram) {
	t.Helper()
	got := enc.appendV2Compressed(nil, c)
	d, err := hdr.Decode(got)
	if err != nil {
		t.Fatalf("hdr.Decode: %v", err)
	}
	if !d.Equals(h) {
		t.Errorf("decoded histogram differs from the library's (count %d vs %d, max %d vs %d)",
			d.TotalCount(), h.TotalCount(), d.Max(), h.Max())
	}
	if c.count() != h.TotalCount() || c.max() != h.Max() {
		t.Errorf("count %d, max %d; the library's %d, %d", c.count(), c.max(), h.TotalCount(), h.Max())
	}
	want, err := h.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("encoding differs from the library's EncodeV2:\n got %.80s…\nwant %.80s…", got, want)
	}
}

// TestHdrCountsMatchesLibrary records random values into hdrCounts and
// hdr.New's histogram for several geometries and checks that the encoding
// decodes, with the library, to an equal histogram (same geometry, counts
// and total), with the same max, and is byte for byte the library's
// EncodeV2; and the same after add and reset.
func TestHdrCountsMatchesLibrary(t *testing.T) {
	for _, g := range testGeometries() {
		t.Run(fmt.Sprintf("lowest=%d/highest=%d/digits=%d", g.lowest, g.highest, g.digits), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(g.lowest), uint64(g.highest)+uint64(g.digits)))
			enc := &hdrEncoder{}
			c := newHdrCounts(g.lowest, g.highest, g.digits)
			h := hdr.New(g.lowest, g.highest, g.digits)
			if libCounts := (h.ByteSize() - 6*8 - 5*4) / 8; len(c.counts) != libCounts { // ByteSize's formula
				t.Fatalf("%d counts, the library %d", len(c.counts), libCounts)
			}
			checkSame(t, enc, c, h) // empty
			for _, n := range []int{1, 10, 1000, 20000} {
				for range n {
					v := randomValue(r, g.highest)
					c.record(v)
					if err := h.RecordValue(v); err != nil {
						t.Fatal(err)
					}
				}
				checkSame(t, enc, c, h)
			}

			o, oh := newHdrCounts(g.lowest, g.highest, g.digits), hdr.New(g.lowest, g.highest, g.digits)
			for range 500 {
				v := randomValue(r, g.highest/3)
				o.record(v)
				oh.RecordValue(v)
			}
			c.add(o)
			h.Merge(oh)
			checkSame(t, enc, c, h)
			o.add(c) // into the one with the lower maximum
			oh.Merge(h)
			checkSame(t, enc, o, oh)

			c.reset()
			h.Reset()
			checkSame(t, enc, c, h)
			c.record(g.highest)
			h.RecordValue(g.highest)
			checkSame(t, enc, c, h)
		})
	}
}

// TestHdrCountsEncodeAllocs checks that encoding allocates nothing once
// the encoder's buffers have grown to the histogram's size.
func TestHdrCountsEncodeAllocs(t *testing.T) {
	cfg := Config{}.WithDefaults()
	r := rand.New(rand.NewPCG(1, 2))
	c := newCounts(&cfg)
	for range 100000 {
		c.record(randomValue(r, int64(cfg.HistHighest)))
	}
	var enc hdrEncoder
	var dst []byte
	for range 3 {
		dst = enc.appendV2Compressed(dst[:0], c)
	}
	if n := testing.AllocsPerRun(20, func() { dst = enc.appendV2Compressed(dst[:0], c) }); n != 0 {
		t.Errorf("appendV2Compressed: %v allocations per call after warm-up, want 0", n)
	}
}

// TestAppendZigZag checks the zigzag LEB128 encoding of values of every
// length up to 9 bytes by decoding them as the library's
// zig_zag_decode_i64 does.
func TestAppendZigZag(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 40), 1 << 55, math.MaxInt64 / 2, math.MaxInt64, math.MinInt64 + 1} {
		b := appendZigZag(nil, v)
		var u uint64
		for i, x := range b {
			if i == 8 {
				u |= uint64(x) << 56
				break
			}
			u |= uint64(x&0x7f) << (7 * i)
		}
		if got := int64(u>>1) ^ -int64(u&1); got != v || len(b) > 9 {
			t.Errorf("appendZigZag(%d) = % x, decodes to %d", v, b, got)
		}
	}
}
