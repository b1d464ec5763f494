package wire

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// checkParseDuration checks parseDuration(s) against time.ParseDuration(s):
// both accept or both refuse, with the same value.
func checkParseDuration(t *testing.T, s string) {
	t.Helper()
	want, wantErr := time.ParseDuration(s)
	got, ok := parseDuration([]byte(s))
	if ok != (wantErr == nil) || ok && got != want {
		t.Errorf("parseDuration(%q) = %d, %v; time.ParseDuration = %d, %v", s, got, ok, want, wantErr)
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "empty", in: ""},
		{name: "zero", in: "0"},
		{name: "zero/signed", in: "-0"},
		{name: "zero/plus", in: "+0"},
		{name: "zero/double", in: "00"},
		{name: "zero/unit", in: "0s"},
		{name: "sign-only", in: "-"},
		{name: "no-unit", in: "20"},
		{name: "unit-only", in: "s"},
		{name: "dot", in: "."},
		{name: "dot-unit", in: ".s"},
		{name: "signed-dot-unit", in: "-.s"},
		{name: "trailing-dot", in: "1.s"},
		{name: "leading-dot", in: ".5s"},
		{name: "ns", in: "20ns"},
		{name: "us", in: "20us"},
		{name: "micro-sign", in: "20\u00b5s"},
		{name: "greek-mu", in: "20\u03bcs"},
		{name: "ms/fraction", in: "1.5ms"},
		{name: "h", in: "3h"},
		{name: "compound", in: "1h2m3s4ms5us6ns"},
		{name: "compound/fractions", in: "1.5h0.25m.125s"},
		{name: "compound/repeated-unit", in: "1s1s"},
		{name: "negative", in: "-1.5h"},
		{name: "upper-case", in: "1S"},
		{name: "unknown-unit", in: "1d"},
		{name: "exponent", in: "1e3s"},
		{name: "space", in: "1s "},
		{name: "leading-space", in: " 1s"},
		{name: "double-sign", in: "--1s"},
		{name: "sign-inside", in: "1s-1s"},
		{name: "two-dots", in: "1.2.3s"},
		{name: "max", in: "9223372036854775807ns"},
		{name: "max+1", in: "9223372036854775808ns"},
		{name: "min", in: "-9223372036854775808ns"},
		{name: "min-1", in: "-9223372036854775809ns"},
		{name: "max/hours", in: "2562047h47m16.854775807s"},
		{name: "max+1/hours", in: "2562047h47m16.854775808s"},
		{name: "min/hours", in: "-2562047h47m16.854775808s"},
		{name: "overflow/integer", in: "99999999999999999999ns"},
		{name: "overflow/unit", in: "2562048h"},
		{name: "overflow/sum", in: "9223372036854775807ns1ns"},
		{name: "fraction/long", in: "0.1234567890123456789012345678901234567890s"},
		{name: "fraction/tiny", in: "0.00000000000000000000000000001h"},
		{name: "fraction/rounding", in: "0.3333333333333333333h"},
		{name: "fraction/leading-zeros", in: "1.0000000000000000000000001h"},
		{name: "leading-zeros", in: "00000000000000000000000000000001s"},
		{name: "utf8-garbage", in: "1\xc2s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkParseDuration(t, tc.in) })
	}
}

// TestParseDurationRandom compares the parser with time.ParseDuration on
// random strings over the alphabet of durations (a deterministic sample;
// FuzzParseDuration explores further).
func TestParseDurationRandom(t *testing.T) {
	alphabet := []string{"0", "1", "5", "9", ".", "+", "-", "n", "s", "u", "m", "h", "\u00b5", "\u03bc", "x", " "}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkParseDuration(t, b.String())
	}
}

func TestAppendDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{d: 0, want: "0"},
		{d: 1, want: "1ns"},
		{d: 1001, want: "1001ns"},
		{d: 20 * time.Microsecond, want: "20us"},
		{d: 1500 * time.Microsecond, want: "1500us"},
		{d: time.Millisecond, want: "1ms"},
		{d: 2 * time.Second, want: "2s"},
		{d: time.Hour, want: "3600s"},
		{d: -3 * time.Millisecond, want: "-3ms"},
		{d: math.MaxInt64, want: "9223372036854775807ns"},
		{d: math.MinInt64, want: "-9223372036854775808ns"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			got := string(appendDuration(nil, tc.d))
			if got != tc.want {
				t.Errorf("appendDuration(%d) = %q, want %q", tc.d, got, tc.want)
			}
			if d, err := time.ParseDuration(got); err != nil || d != tc.d {
				t.Errorf("time.ParseDuration(%q) = %v, %v; want %v", got, d, err, tc.d)
			}
			if d, ok := parseDuration([]byte(got)); !ok || d != tc.d {
				t.Errorf("parseDuration(%q) = %v, %v; want %v", got, d, ok, tc.d)
			}
		})
	}
}

func TestParseUint(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{in: "", ok: false},
		{in: "0", want: 0, ok: true},
		{in: "007", want: 7, ok: true},
		{in: "18446744073709551615", want: math.MaxUint64, ok: true},
		{in: "18446744073709551616", ok: false},
		{in: "99999999999999999999", ok: false},
		{in: "+1", ok: false},
		{in: "-1", ok: false},
		{in: "1 ", ok: false},
		{in: "0x1", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseUint([]byte(tc.in))
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseUint(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseDurationZeroAllocs(t *testing.T) {
	in := []byte("1h2m3.5s")
	if n := testing.AllocsPerRun(100, func() { _, _ = parseDuration(in) }); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}
