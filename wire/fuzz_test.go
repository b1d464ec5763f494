package wire

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// The fuzz targets check, for any input: decoding never panics; it reports
// an *Error of a defined kind or a length within the input; every prefix of
// the input decodes consistently with the whole (incremental decoding); and
// a decoded message re-encodes to one that decodes the same. Their seed
// corpora are in testdata/fuzz/<target>, beside the samples added here.

// fuzzLimits are small, so that the fuzzer reaches every limit.
var fuzzLimits = Limits{MaxPayload: 4096, MaxHeader: 512}

func FuzzDecodeRequestBinary(f *testing.F) { fuzzDecodeRequest(f, "binary") }

func FuzzDecodeRequestHTTP(f *testing.F) { fuzzDecodeRequest(f, "http") }

func FuzzDecodeResponseBinary(f *testing.F) { fuzzDecodeResponse(f, "binary") }

func FuzzDecodeResponseHTTP(f *testing.F) { fuzzDecodeResponse(f, "http") }

func fuzzDecodeRequest(f *testing.F, protocol string) {
	c := newCodec(f, protocol, fuzzLimits)
	for _, tc := range sampleRequests() {
		if len(tc.req.Payload) <= fuzzLimits.MaxPayload && tc.req.Size <= fuzzLimits.MaxPayload {
			f.Add(c.AppendRequest(nil, &tc.req))
		}
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		req, n := checkFuzzDecode(t, c.DecodeRequest, buf)
		if n == 0 {
			return
		}
		enc := c.AppendRequest(nil, &req)
		if protocol == "binary" && !bytes.Equal(enc, buf[:n]) {
			// The binary encoding is canonical: a frame that decodes has
			// exactly one encoding.
			t.Errorf("re-encoded %q\nfrom %q", enc, buf[:n])
		}
		again := mustDecode(t, c.DecodeRequest, enc, len(enc))
		if !sameRequest(req, again) {
			t.Errorf("round trip changed the request:\n%+v\n%+v", req, again)
		}
	})
}

func fuzzDecodeResponse(f *testing.F, protocol string) {
	c := newCodec(f, protocol, fuzzLimits)
	for _, tc := range sampleResponses() {
		if len(tc.resp.Payload) <= fuzzLimits.MaxPayload {
			f.Add(c.AppendResponse(nil, &tc.resp))
		}
	}
	f.Add(c.AppendError(nil, errHTTPPath))
	f.Fuzz(func(t *testing.T, buf []byte) {
		resp, n := checkFuzzDecode(t, c.DecodeResponse, buf)
		if n == 0 {
			return
		}
		enc := c.AppendResponse(nil, &resp)
		valid := resp.HasChecksum && resp.Checksum == Checksum(resp.ID, resp.Payload)
		if protocol == "binary" && bytes.Equal(enc, buf[:n]) != valid {
			t.Errorf("re-encoded %q\nfrom %q (checksum valid: %v)", enc, buf[:n], valid)
		}
		again := mustDecode(t, c.DecodeResponse, enc, len(enc))
		if again.ID != resp.ID || again.Status != resp.Status || again.Close != resp.Close ||
			!bytes.Equal(again.Payload, resp.Payload) {
			t.Errorf("round trip changed the response:\n%+v\n%+v", resp, again)
		}
		if !again.HasChecksum || again.Checksum != Checksum(again.ID, again.Payload) {
			t.Errorf("re-encoded checksum %08x does not verify", again.Checksum)
		}
	})
}

// checkFuzzDecode decodes the fuzzer's input buf and checks the results
// (checkDecodeResult) and the decoding of buf's prefixes
// (checkIncremental), the checks every fuzz target makes of any input. It
// returns the message and its length, 0 if buf held none.
func checkFuzzDecode[M any](t *testing.T, decode func([]byte, *M) (int, error), buf []byte) (M, int) {
	t.Helper()
	var m M
	n, err := decode(buf, &m)
	checkDecodeResult(t, buf, n, err)
	checkIncremental(t, decode, buf, n, err)
	return m, n
}

// checkDecodeResult checks the contract of one decode call's results.
func checkDecodeResult(t *testing.T, buf []byte, n int, err error) {
	t.Helper()
	switch e, ok := err.(*Error); {
	case err != nil && !ok:
		t.Fatalf("error %T %v is not an *Error", err, err)
	case err != nil && (e.Kind < KindMalformed || e.Kind > KindUnsupported):
		t.Fatalf("error %v has undefined kind %d", err, e.Kind)
	case err != nil && n != 0:
		t.Fatalf("error %v with length %d", err, n)
	case n < 0 || n > len(buf):
		t.Fatalf("length %d outside the %d-byte buffer", n, len(buf))
	}
}

// checkIncremental checks that the prefixes of buf decode consistently with
// buf, which decoded to (n, err): a prefix shorter than a decoded message is
// incomplete, the message itself decodes to n, and a prefix of a bad input
// is incomplete or fails with the same kind.
func checkIncremental[M any](t *testing.T, decode func([]byte, *M) (int, error), buf []byte, n int, err error) {
	t.Helper()
	end := len(buf)
	if n > 0 {
		end = n
	}
	// A sample of the prefixes, and the longest: checking all would make an
	// execution quadratic in the input, and the fuzzer's minimization of
	// each new input (which runs the target for every candidate, and does
	// not show in the exec count) that much slower.
	step := max(1, end/32)
	var m M
	for k := 0; k < end; k += step {
		if k+step >= end {
			k = end - 1
		}
		got, gotErr := decode(buf[:k], &m)
		if got != 0 || gotErr != nil && (err == nil || KindOf(gotErr) != KindOf(err)) {
			t.Fatalf("the first %d of %d bytes decode to %d, %v; the whole to %d, %v", k, len(buf), got, gotErr, n, err)
		}
	}
	if n > 0 {
		if got, gotErr := decode(buf[:n], &m); got != n || gotErr != nil {
			t.Fatalf("the first %d bytes decode to %d, %v; want %d, nil", n, got, gotErr, n)
		}
	}
}

// sameRequest compares requests, with an empty payload equal to nil.
func sameRequest(a, b Request) bool {
	if !bytes.Equal(a.Payload, b.Payload) {
		return false
	}
	a.Payload, b.Payload = nil, nil
	return reflect.DeepEqual(a, b)
}

// FuzzParseDuration checks that parseDuration accepts exactly what
// time.ParseDuration accepts, with the same value, and that appendDuration
// writes what both parse back.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "20us", "1.5ms", "1h2m", "7\u00b5s", "-9223372036854775808ns", ".5s", "1e3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseDuration(t, s)
		if d, ok := parseDuration([]byte(s)); ok {
			enc := appendDuration(nil, d)
			if back, ok := parseDuration(enc); !ok || back != d {
				t.Errorf("appendDuration(%d) = %q, parsed back as %d, %v", d, enc, back, ok)
			}
			if back, err := time.ParseDuration(string(enc)); err != nil || back != d {
				t.Errorf("appendDuration(%d) = %q, time.ParseDuration: %d, %v", d, enc, back, err)
			}
		}
	})
}
