package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Sampler is a service-time distribution SimulateQueue draws from (ns).
type Sampler interface {
	// Sample draws one service time from r.
	Sample(r *rand.Rand) float64
	// Moments are the distribution's exact first two moments.
	Moments() Moments
}

// The shapes of a ServiceDist.
const (
	ShapeConst     = "const"     // always the mean
	ShapeExp       = "exp"       // exponential
	ShapeLognormal = "lognormal" // e^{m+σZ}, Z standard normal
	ShapeBimodal   = "bimodal"   // short with probability P, else R × short
)

// ServiceDist is a service-time distribution of a given shape and mean,
// for comparing queues at the same mean service time (concbench theory).
// It is a Sampler.
type ServiceDist struct {
	Shape  string  `json:"shape"` // ShapeConst, ShapeExp, ShapeLognormal or ShapeBimodal
	MeanNs float64 `json:"mean_ns"`
	// Sigma is the lognormal's σ, the standard deviation of the
	// logarithm: SCV e^{σ²} − 1.
	Sigma float64 `json:"sigma,omitempty"`
	// P is the bimodal's probability of the short value, and Ratio the
	// long value over the short one.
	P     float64 `json:"p,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
}

var _ Sampler = ServiceDist{}

// ParseServiceDist parses a shape — "const" (or "fixed"), "exp",
// "lognormal:SIGMA" (default σ 1), "bimodal:P:RATIO" (default 0.99:200,
// the suite's bimodal workload's shape: 5 µs 99 % of the time, 1 ms
// otherwise) — and gives it the mean meanNs.
func ParseServiceDist(spec string, meanNs float64) (ServiceDist, error) {
	if !(meanNs > 0) || math.IsInf(meanNs, 0) {
		return ServiceDist{}, fmt.Errorf("service distribution %q: mean %g ns out of range (accepted: > 0)", spec, meanNs)
	}
	name, args, _ := strings.Cut(spec, ":")
	params := strings.Split(args, ":")
	if args == "" {
		params = nil
	}
	num := func(i int, def float64) (float64, error) {
		if i >= len(params) {
			return def, nil
		}
		v, err := strconv.ParseFloat(params[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("service distribution %q: %q is not a number", spec, params[i])
		}
		return v, nil
	}
	d := ServiceDist{MeanNs: meanNs}
	var err error
	switch name {
	case "const", "fixed":
		d.Shape = ShapeConst
	case ShapeExp:
		d.Shape = ShapeExp
	case ShapeLognormal:
		d.Shape = ShapeLognormal
		if d.Sigma, err = num(0, 1); err == nil && !(d.Sigma > 0 && d.Sigma <= 3) {
			err = fmt.Errorf("service distribution %q: σ %g out of range (accepted: 0 < σ ≤ 3)", spec, d.Sigma)
		}
	case ShapeBimodal:
		d.Shape = ShapeBimodal
		if d.P, err = num(0, 0.99); err == nil {
			d.Ratio, err = num(1, 200)
		}
		if err == nil && !(d.P > 0 && d.P < 1 && d.Ratio > 1) {
			err = fmt.Errorf("service distribution %q: P %g or ratio %g out of range (accepted: 0 < P < 1, ratio > 1)", spec, d.P, d.Ratio)
		}
	default:
		return ServiceDist{}, fmt.Errorf("service distribution %q unknown (accepted: const, exp, lognormal:SIGMA, bimodal:P:RATIO)", spec)
	}
	if err != nil {
		return ServiceDist{}, err
	}
	if len(params) > map[string]int{ShapeLognormal: 1, ShapeBimodal: 2}[d.Shape] {
		return ServiceDist{}, fmt.Errorf("service distribution %q: too many parameters", spec)
	}
	return d, nil
}

// String returns d's shape in ParseServiceDist's syntax.
func (d ServiceDist) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch d.Shape {
	case ShapeLognormal:
		return ShapeLognormal + ":" + f(d.Sigma)
	case ShapeBimodal:
		return ShapeBimodal + ":" + f(d.P) + ":" + f(d.Ratio)
	}
	return d.Shape
}

// short returns the bimodal's short value: P·a + (1−P)·R·a = mean.
func (d ServiceDist) short() float64 { return d.MeanNs / (d.P + (1-d.P)*d.Ratio) }

// Sample draws one service time.
func (d ServiceDist) Sample(r *rand.Rand) float64 {
	switch d.Shape {
	case ShapeExp:
		return r.ExpFloat64() * d.MeanNs
	case ShapeLognormal:
		return d.MeanNs * math.Exp(d.Sigma*r.NormFloat64()-d.Sigma*d.Sigma/2)
	case ShapeBimodal:
		if r.Float64() < d.P {
			return d.short()
		}
		return d.Ratio * d.short()
	}
	return d.MeanNs
}

// Moments returns d's exact moments.
func (d ServiceDist) Moments() Moments {
	m := d.MeanNs
	switch d.Shape {
	case ShapeExp:
		return Moments{Mean: m, Second: 2 * m * m}
	case ShapeLognormal:
		return Moments{Mean: m, Second: m * m * math.Exp(d.Sigma*d.Sigma)}
	case ShapeBimodal:
		a := d.short()
		return Moments{Mean: m, Second: a * a * (d.P + (1-d.P)*d.Ratio*d.Ratio)}
	}
	return Moments{Mean: m, Second: m * m}
}

// empirical resamples measured values (uniformly, with replacement).
type empirical struct {
	xs []float64
	m  Moments
}

func (e empirical) Sample(r *rand.Rand) float64 { return e.xs[r.IntN(len(e.xs))] }
func (e empirical) Moments() Moments            { return e.m }

// shifted is a Sampler with a constant d added to every value.
type shifted struct {
	s Sampler
	d float64
}

func (s shifted) Sample(r *rand.Rand) float64 { return s.s.Sample(r) + s.d }
func (s shifted) Moments() Moments            { return s.s.Moments().Plus(Moments{Mean: s.d, Second: s.d * s.d}) }

// Shifted returns s with the constant d (ns) added to every value: a
// fixed per-request overhead on top of a service time.
func Shifted(s Sampler, d float64) Sampler {
	if d == 0 {
		return s
	}
	return shifted{s: s, d: d}
}
