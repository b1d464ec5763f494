package wire

import (
	"strconv"
	"time"
)

// durLimit is 1<<63: the magnitude of the most negative Duration, and one
// more than the largest positive one. parseDuration accumulates magnitudes
// as uint64 below or at it.
const durLimit = 1 << 63

// parseDuration parses b in Go duration syntax ("20us", "1.5ms", "1h2m",
// "0", "-3s", "µs" and "μs" for microseconds) without allocating. It accepts
// exactly the strings time.ParseDuration accepts and returns the same value,
// including its rounding of fractions (FuzzParseDuration checks this against
// the standard library). The sign is accepted here as time.ParseDuration
// accepts it: rejecting negative work is the caller's business.
//
// Note: time.ParseDuration takes a string, so calling it on a []byte from a
// connection buffer would allocate a copy on every request; that is why this
// parser exists.
func parseDuration(b []byte) (time.Duration, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if string(b) == "0" {
		return 0, true // the only number accepted without a unit
	}
	if len(b) == 0 {
		return 0, false
	}
	var sum uint64 // ≤ durLimit
	for len(b) > 0 {
		// A term: digits, optionally '.' and digits (at least one digit
		// overall), then a unit.
		var whole uint64
		i := 0
		for ; i < len(b) && isDigit(b[i]); i++ {
			if whole > durLimit/10 {
				return 0, false
			}
			whole = whole*10 + uint64(b[i]-'0')
			if whole > durLimit {
				return 0, false
			}
		}
		digits := i > 0
		b = b[i:]

		// The fraction keeps as many leading digits as fit and ignores the
		// rest; scale is 10^(digits kept).
		var frac uint64
		scale := 1.0
		if len(b) > 0 && b[0] == '.' {
			b = b[1:]
			full := false
			i = 0
			for ; i < len(b) && isDigit(b[i]); i++ {
				if full {
					continue
				}
				if frac > (durLimit-1)/10 {
					full = true
					continue
				}
				next := frac*10 + uint64(b[i]-'0')
				if next > durLimit {
					full = true
					continue
				}
				frac = next
				scale *= 10
			}
			digits = digits || i > 0
			b = b[i:]
		}
		if !digits {
			return 0, false
		}

		// The unit is everything up to the next digit or '.'.
		i = 0
		for i < len(b) && b[i] != '.' && !isDigit(b[i]) {
			i++
		}
		unit := unitNanos(b[:i])
		if unit == 0 {
			return 0, false
		}
		b = b[i:]

		if whole > durLimit/unit {
			return 0, false
		}
		whole *= unit
		if frac > 0 {
			// The same float64 arithmetic as time.ParseDuration, so that
			// results agree to the nanosecond (a fraction of an hour needs
			// float64 precision; it is at most 3.6e12 ns).
			whole += uint64(float64(frac) * (float64(unit) / scale))
			if whole > durLimit {
				return 0, false
			}
		}
		sum += whole
		if sum > durLimit {
			return 0, false
		}
	}
	if neg {
		return -time.Duration(sum), true
	}
	if sum > durLimit-1 {
		return 0, false
	}
	return time.Duration(sum), true
}

// unitNanos returns the nanoseconds in the duration unit u, or 0 if u is not
// a unit time.ParseDuration knows.
func unitNanos(u []byte) uint64 {
	switch string(u) {
	case "ns":
		return uint64(time.Nanosecond)
	case "us", "\u00b5s", "\u03bcs": // ASCII, micro sign, Greek small mu
		return uint64(time.Microsecond)
	case "ms":
		return uint64(time.Millisecond)
	case "s":
		return uint64(time.Second)
	case "m":
		return uint64(time.Minute)
	case "h":
		return uint64(time.Hour)
	}
	return 0
}

// appendDuration appends d in Go duration syntax as an integer count of the
// largest of s, ms, us, ns that represents it exactly ("20us", "1500us",
// "2s"), so that both parseDuration and time.ParseDuration return d again.
// Zero is "0".
func appendDuration(dst []byte, d time.Duration) []byte {
	if d == 0 {
		return append(dst, '0')
	}
	switch {
	case d%time.Second == 0:
		return append(strconv.AppendInt(dst, int64(d/time.Second), 10), 's')
	case d%time.Millisecond == 0:
		return append(strconv.AppendInt(dst, int64(d/time.Millisecond), 10), "ms"...)
	case d%time.Microsecond == 0:
		return append(strconv.AppendInt(dst, int64(d/time.Microsecond), 10), "us"...)
	}
	return append(strconv.AppendInt(dst, int64(d), 10), "ns"...)
}

// parseUint parses a non-empty run of decimal digits (no sign, no spaces)
// that fits in a uint64.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// isDigits reports whether b is a non-empty run of decimal digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
