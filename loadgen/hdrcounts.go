package loadgen

import (
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
)

// hdrCounts is the counts array of an HdrHistogram, with exactly the bucket
// geometry of hdrhistogram-go's hdr.New(lowest, highest, digits) (v1.4.0:
// newExactGeometry, geometryMagnitudes, getBucketsNeededToCoverValue,
// countsIndexFor), so that its V2 encoding (hdrEncoder) decodes, with
// hdr.Decode, to a histogram that Equals one the library recorded the same
// values into. It is what the .hlog's intervals are recorded, merged and
// encoded with: unlike hdr.Histogram, merging, resetting and encoding it
// allocate nothing, and all three touch only the counts up to the highest
// one recorded.
//
// It keeps no tag, times or minimum, and records only values in range: the
// caller clamps them to [0, highest], as intervals.record does. One
// goroutine at a time uses it.
type hdrCounts struct {
	lowest, highest int64 // as hdr.New keeps them: lowest clamped to ≥ 1
	digits          int32 // clamped to 1..5, as hdr.New does

	unitMagnitude               int32
	subBucketHalfCountMagnitude int32
	subBucketHalfCount          int32
	subBucketCount              int32
	subBucketMask               int64

	counts []int64
	total  int64
	top    int // the highest index with a count; -1 when empty
}

// newHdrCounts returns empty counts with the geometry of hdr.New(lowest,
// highest, digits), clamping the arguments as it does. Like hdr.New, it
// panics on a geometry that 64 bits cannot represent (Config.Validate
// rejects those).
func newHdrCounts(lowest, highest int64, digits int) *hdrCounts {
	digits = min(max(digits, 1), 5)
	lowest = max(lowest, 1)

	// geometryMagnitudes, with the same floating-point steps, so that the
	// rounding (of Log2 near a power of two) is the library's too.
	largestValueWithSingleUnitResolution := 2 * math.Pow10(digits)
	subBucketCountMagnitude := int32(math.Ceil(math.Log2(largestValueWithSingleUnitResolution)))
	halfMagnitude := max(subBucketCountMagnitude, 1) - 1
	unitMagnitude := max(int32(math.Floor(math.Log2(float64(lowest)))), 0)
	if unitMagnitude+halfMagnitude > 61 {
		panic("loadgen: histogram lowest value too large for its significant digits")
	}

	subBucketCount := int32(math.Pow(2, float64(halfMagnitude)+1))
	c := &hdrCounts{
		lowest:                      lowest,
		highest:                     highest,
		digits:                      int32(digits),
		unitMagnitude:               unitMagnitude,
		subBucketHalfCountMagnitude: halfMagnitude,
		subBucketHalfCount:          subBucketCount / 2,
		subBucketCount:              subBucketCount,
		subBucketMask:               int64(subBucketCount-1) << uint(unitMagnitude),
		top:                         -1,
	}
	bucketCount := bucketsToCover(int64(subBucketCount)<<uint(unitMagnitude), highest)
	c.counts = make([]int64, (bucketCount+1)*c.subBucketHalfCount)
	return c
}

// newCounts returns empty counts with cfg's histogram range and precision,
// the geometry of newHistogram(cfg).
func newCounts(cfg *Config) *hdrCounts {
	return newHdrCounts(int64(cfg.HistLowest), int64(cfg.HistHighest), cfg.HistDigits)
}

// bucketsToCover is getBucketsNeededToCoverValue: the number of buckets,
// each twice the range of the one before, from smallestUntrackable up to
// and including highest.
func bucketsToCover(smallestUntrackable, highest int64) int32 {
	n := int32(1)
	for smallestUntrackable <= highest {
		if smallestUntrackable > math.MaxInt64/2 {
			return n + 1
		}
		smallestUntrackable <<= 1
		n++
	}
	return n
}

// bucket returns the bucket of v (getBucketIndex).
func (c *hdrCounts) bucket(v int64) int32 {
	pow2Ceiling := int32(64 - bits.LeadingZeros64(uint64(v|c.subBucketMask)))
	return pow2Ceiling - c.unitMagnitude - (c.subBucketHalfCountMagnitude + 1)
}

// subBucket returns v's sub-bucket in bucket b (getSubBucketIdx).
func (c *hdrCounts) subBucket(v int64, b int32) int32 {
	return int32(v >> uint(b+c.unitMagnitude))
}

// index returns v's index in counts (countsIndexFor).
func (c *hdrCounts) index(v int64) int {
	b := c.bucket(v)
	return int((b+1)<<uint(c.subBucketHalfCountMagnitude) + c.subBucket(v, b) - c.subBucketHalfCount)
}

// valueAt returns the lowest value counted at index i (valueFromFlatIndex).
func (c *hdrCounts) valueAt(i int) int64 {
	b := int32(i)>>uint(c.subBucketHalfCountMagnitude) - 1
	s := int32(i)&(c.subBucketHalfCount-1) + c.subBucketHalfCount
	if b < 0 {
		s -= c.subBucketHalfCount
		b = 0
	}
	return int64(s) << uint(b+c.unitMagnitude)
}

// highestEquivalent returns the highest value counted with v
// (highestEquivalentValue).
func (c *hdrCounts) highestEquivalent(v int64) int64 {
	b := c.bucket(v)
	s := c.subBucket(v, b)
	lowest := int64(s) << uint(b+c.unitMagnitude)
	if s >= c.subBucketCount {
		b++
	}
	return lowest + int64(1)<<uint(c.unitMagnitude+b) - 1
}

// record counts v, which must be in [0, highest].
func (c *hdrCounts) record(v int64) {
	i := c.index(v)
	c.counts[i]++
	c.total++
	if i > c.top {
		c.top = i
	}
}

// add adds o's counts, which must have c's geometry, to c.
func (c *hdrCounts) add(o *hdrCounts) {
	if o.top < 0 {
		return
	}
	dst := c.counts[:o.top+1]
	for i, n := range o.counts[:len(dst)] {
		dst[i] += n
	}
	c.total += o.total
	c.top = max(c.top, o.top)
}

// reset empties c.
func (c *hdrCounts) reset() {
	clear(c.counts[:c.top+1])
	c.total = 0
	c.top = -1
}

// count returns the number of values recorded.
func (c *hdrCounts) count() int64 { return c.total }

// max returns the largest value recorded as hdr.Histogram.Max reports it:
// the highest value equivalent to it; for no value, the highest equivalent
// to 0.
func (c *hdrCounts) max() int64 {
	if c.top < 0 {
		return c.highestEquivalent(0)
	}
	return c.highestEquivalent(c.valueAt(c.top))
}

// The V2 encoding's cookies and header size (hdr_encoding.go).
const (
	v2EncodingCookie           = 0x1c849303 | 0x10
	v2CompressedEncodingCookie = 0x1c849304 | 0x10
	v2HeaderSize               = 40
)

// hdrEncoder encodes hdrCounts as hdrhistogram-go's EncodeV2 does, into
// buffers it keeps: after the first calls have grown them (and made the
// zlib writer, which Reset reuses), encoding allocates nothing. One
// goroutine at a time uses it.
type hdrEncoder struct {
	raw []byte       // the uncompressed encoding: header and counts
	out byteSink     // the compressed encoding: cookie, length, zlib stream
	zw  *zlib.Writer // nil until the first call
}

// byteSink is an io.Writer appending to itself; it never fails.
type byteSink []byte

// Write appends p.
func (s *byteSink) Write(p []byte) (int, error) {
	*s = append(*s, p...)
	return len(p), nil
}

// appendV2Compressed appends to dst the base64 (StdEncoding) of c's V2
// compressed encoding, as hdr.Histogram.EncodeV2 writes it: the compressed
// cookie, the length of the zlib stream, and the stream (BestCompression,
// as the library compresses) of the header and the counts up to the
// index of the maximum, in zigzag LEB128 with runs of zeros as negative
// lengths (dumpV2CompressedEncoding, encodeIntoByteBuffer,
// fillBufferFromCountsArray).
func (e *hdrEncoder) appendV2Compressed(dst []byte, c *hdrCounts) []byte {
	b := e.raw[:0]
	b = binary.BigEndian.AppendUint32(b, v2EncodingCookie)
	b = binary.BigEndian.AppendUint32(b, 0) // the payload's length, below
	b = binary.BigEndian.AppendUint32(b, 0) // normalizing index offset: always 0 here
	b = binary.BigEndian.AppendUint32(b, uint32(c.digits))
	b = binary.BigEndian.AppendUint64(b, uint64(c.lowest))
	b = binary.BigEndian.AppendUint64(b, uint64(c.highest))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(1)) // integer-to-double ratio
	limit := c.index(c.max()) + 1
	for i := 0; i < limit; {
		n := c.counts[i]
		i++
		if n == 0 {
			zeros := int64(1)
			for i < limit && c.counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				n = -zeros
			}
		}
		b = appendZigZag(b, n)
	}
	binary.BigEndian.PutUint32(b[4:8], uint32(len(b)-v2HeaderSize))
	e.raw = b

	e.out = binary.BigEndian.AppendUint32(e.out[:0], v2CompressedEncodingCookie)
	e.out = binary.BigEndian.AppendUint32(e.out, 0) // the stream's length, below
	if e.zw == nil {
		// BestCompression is a valid level: NewWriterLevel cannot fail.
		e.zw, _ = zlib.NewWriterLevel(&e.out, zlib.BestCompression)
	} else {
		e.zw.Reset(&e.out)
	}
	// Writes to a byteSink cannot fail, and neither can the zlib writer
	// over it.
	_, _ = e.zw.Write(b)
	_ = e.zw.Close()
	binary.BigEndian.PutUint32(e.out[4:8], uint32(len(e.out)-8))
	return base64.StdEncoding.AppendEncode(dst, e.out)
}

// appendZigZag appends v in the library's zigzag LEB128 (zig_zag_encode_i64):
// seven bits a byte, low bits first, with the ninth byte, if any, carrying
// the last eight bits whole.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			return append(b, byte(u))
		}
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}
