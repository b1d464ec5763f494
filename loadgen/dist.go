package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// DistKind names a distribution family.
type DistKind string

// The distribution families a Dist can draw from.
const (
	DistFixed   DistKind = "fixed"   // always A
	DistExp     DistKind = "exp"     // exponential with mean A
	DistBimodal DistKind = "bimodal" // A with probability P, otherwise B
)

// Dist is a distribution of one request attribute (CPU work, blocking work,
// response size, priority). Its values are in the attribute's unit, which
// the Config field's JSON name carries (cpu_ns, size_bytes, …). The zero
// Dist is fixed 0.
type Dist struct {
	Kind DistKind `json:"kind"`
	A    float64  `json:"a"`           // fixed: the value; exp: the mean; bimodal: the first value
	B    float64  `json:"b,omitempty"` // bimodal: the second value
	P    float64  `json:"p,omitempty"` // bimodal: the probability of A, 0..1
}

// Fixed returns the distribution that is always v.
func Fixed(v float64) Dist { return Dist{Kind: DistFixed, A: v} }

// Exp returns the exponential distribution with the given mean.
func Exp(mean float64) Dist { return Dist{Kind: DistExp, A: mean} }

// Bimodal returns the distribution that is a with probability p and b
// otherwise.
func Bimodal(p, a, b float64) Dist { return Dist{Kind: DistBimodal, A: a, B: b, P: p} }

// kind returns d's family, with the zero value's empty kind read as fixed.
func (d Dist) kind() DistKind {
	if d.Kind == "" {
		return DistFixed
	}
	return d.Kind
}

// Mean returns the distribution's mean.
func (d Dist) Mean() float64 {
	if d.kind() == DistBimodal {
		return d.P*d.A + (1-d.P)*d.B
	}
	return d.A
}

// isFinite reports whether f is neither NaN nor infinite. (finite, in
// hist.go, maps such values to 0 instead.)
func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// validate checks d's parameters against [0, max] in the attribute's unit;
// name and unit (a formatter for values) go into the message.
func (d Dist) validate(name string, max float64, unit func(float64) string) error {
	bad := func(what string, v float64) error {
		return fmt.Errorf("loadgen: %s: %s %s out of range (accepted: 0..%s)", name, what, unit(v), unit(max))
	}
	switch d.kind() {
	case DistFixed:
		if !isFinite(d.A) || d.A < 0 || d.A > max {
			return bad("value", d.A)
		}
	case DistExp:
		if !isFinite(d.A) || d.A < 0 || d.A > max {
			return bad("mean", d.A)
		}
	case DistBimodal:
		if !isFinite(d.P) || d.P < 0 || d.P > 1 {
			return fmt.Errorf("loadgen: %s: bimodal probability %g out of range (accepted: 0..1)", name, d.P)
		}
		if !isFinite(d.A) || d.A < 0 || d.A > max {
			return bad("bimodal first value", d.A)
		}
		if !isFinite(d.B) || d.B < 0 || d.B > max {
			return bad("bimodal second value", d.B)
		}
	default:
		return fmt.Errorf("loadgen: %s: unknown distribution %q (accepted: fixed, exp, bimodal)", name, d.Kind)
	}
	return nil
}

// draw returns one value of d from rng, rounded to an integer and clamped
// to [0, max]; clamped reports whether the clamp changed it (exponential
// tails can exceed a limit the mean respects). It does not allocate.
func (d Dist) draw(rng *rand.Rand, max int64) (v int64, clamped bool) {
	var f float64
	switch d.kind() {
	case DistExp:
		f = rng.ExpFloat64() * d.A
	case DistBimodal:
		if rng.Float64() < d.P {
			f = d.A
		} else {
			f = d.B
		}
	default:
		f = d.A
	}
	f = math.Round(f)
	if f > float64(max) {
		return max, true
	}
	return int64(f), false
}

// format writes d in the syntax ParseDurationDist and ParseIntDist read,
// with values formatted by unit.
func (d Dist) format(unit func(float64) string) string {
	switch d.kind() {
	case DistExp:
		return "exp:" + unit(d.A)
	case DistBimodal:
		return "bimodal:" + strconv.FormatFloat(d.P, 'g', -1, 64) + ":" + unit(d.A) + ":" + unit(d.B)
	}
	return unit(d.A)
}

// FormatDuration returns d, whose values are nanoseconds, as a flag value
// ParseDurationDist reads: "20us", "exp:10us", "bimodal:0.9:10us:1ms".
func (d Dist) FormatDuration() string { return d.format(formatNs) }

// FormatInt returns d, whose values are counts (bytes, priority levels), as
// a flag value ParseIntDist reads: "64", "exp:512", "bimodal:0.9:64:4096".
func (d Dist) FormatInt() string { return d.format(formatCount) }

func formatNs(v float64) string    { return time.Duration(math.Round(v)).String() }
func formatCount(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ParseDurationDist parses a distribution of durations: "V" or "fixed:V",
// "exp:MEAN", or "bimodal:P:A:B", where V, MEAN, A and B are Go durations
// ("10us", "1.5ms", "0") and P is the probability of A. Values are
// nanoseconds.
func ParseDurationDist(s string) (Dist, error) {
	return parseDist(s, func(v string) (float64, error) {
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not a Go duration (e.g. 10us, 1.5ms, 0)", v)
		}
		return float64(d), nil
	})
}

// ParseIntDist parses a distribution of counts (bytes, priority levels):
// "V" or "fixed:V", "exp:MEAN", or "bimodal:P:A:B", with non-negative
// numbers as values and P the probability of A.
func ParseIntDist(s string) (Dist, error) {
	return parseDist(s, func(v string) (float64, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	})
}

func parseDist(s string, value func(string) (float64, error)) (Dist, error) {
	parts := strings.Split(s, ":")
	wrap := func(err error) (Dist, error) {
		return Dist{}, fmt.Errorf("distribution %q: %w (accepted: V, fixed:V, exp:MEAN, bimodal:P:A:B)", s, err)
	}
	var d Dist
	var err error
	switch {
	case len(parts) == 1:
		d.Kind = DistFixed
		d.A, err = value(parts[0])
	case len(parts) == 2 && (parts[0] == "fixed" || parts[0] == "exp"):
		d.Kind = DistKind(parts[0])
		d.A, err = value(parts[1])
	case len(parts) == 4 && parts[0] == "bimodal":
		d.Kind = DistBimodal
		if d.P, err = strconv.ParseFloat(parts[1], 64); err != nil {
			return wrap(fmt.Errorf("probability %q is not a number", parts[1]))
		}
		if d.A, err = value(parts[2]); err == nil {
			d.B, err = value(parts[3])
		}
	default:
		return wrap(fmt.Errorf("unknown form"))
	}
	if err != nil {
		return wrap(err)
	}
	return d, nil
}
