package harness

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

// SLO is a workload's latency objective: the Percentile of the corrected
// latency must stay within Bound. It is a user's statement of what is
// fast enough, not a measurement; the search (Experiment.SLOProbes)
// finds each configuration's highest open-loop rate that meets it.
type SLO struct {
	// Percentile is one of SLOPercentiles; 0 means DefaultSLOPercentile.
	Percentile float64  `json:"percentile,omitempty"`
	Bound      Duration `json:"bound"`
}

// DefaultSLOPercentile is an SLO's percentile when none is given.
const DefaultSLOPercentile = 99

// SLOPercentiles are the percentiles an SLO may bound: those the load
// generator reports and judges (loadgen.Summary, Result.Trusted).
var SLOPercentiles = []float64{50, 90, 99, 99.9}

// Limits of the latency-objective search.
const (
	MinSLOBound  = 10 * time.Microsecond
	MaxSLOBound  = 10 * time.Second
	MaxSLOProbes = 16
	// SLOResolution is the fraction of the capacity at which the search
	// stops early: once its bracket is narrower, a further probe would
	// not tell rates apart that the windows' noise does.
	SLOResolution = 0.01
	// SLOPriorWidth is the half-width of the narrow bracket a search
	// checks around the earlier repetitions' median result, as a
	// fraction of it (see sloNext).
	SLOPriorWidth = 0.1
)

// Defaults of the search's settings when a workload has an SLO.
const (
	DefaultSLOProbes   = 3
	DefaultSLOWarmup   = 100 * time.Millisecond
	DefaultSLODuration = 300 * time.Millisecond
)

// percentile is the SLO's percentile, its default applied.
func (s *SLO) percentile() float64 {
	if s.Percentile == 0 {
		return DefaultSLOPercentile
	}
	return s.Percentile
}

// String names the objective: "p99 ≤ 1ms".
func (s *SLO) String() string {
	return results.ObjectiveText(s.percentile(), time.Duration(s.Bound))
}

// validate returns what is wrong with s, or nil.
func (s *SLO) validate() error {
	if !slices.Contains(SLOPercentiles, s.percentile()) {
		return fmt.Errorf("SLO percentile %g not supported (accepted: %v, or 0 for %d)", s.Percentile, SLOPercentiles, DefaultSLOPercentile)
	}
	if b := time.Duration(s.Bound); b < MinSLOBound || b > MaxSLOBound {
		return fmt.Errorf("SLO bound %v out of range (accepted: %v..%v)", b, MinSLOBound, MaxSLOBound)
	}
	return nil
}

// probeOutcome is what a probe tells the search.
type probeOutcome int

const (
	probePass      probeOutcome = iota // valid verdict, percentile within the bound
	probeFail                          // the server missed: over capacity, rate missed, percentile above the bound, died
	probeGenerator                     // the generator's own fault: the probe says nothing of the server
)

// sloProbe is one probe's rate and outcome, with why it did not pass.
type sloProbe struct {
	rate    float64
	outcome probeOutcome
	why     string
}

// sloSearch is one repetition's search: its bounds and the probes so far.
type sloSearch struct {
	capacity float64 // the upper bracket: closed-loop capacity (req/s)
	prior    float64 // median of earlier repetitions' results (0: none)
	probes   int     // the probes that judge the server, at most this many before the search extends downward
}

// maxProbes is the most probes a search runs: its probes, as many more
// halving the rate while none has passed (sloNext), and one repeat of a
// probe the generator spoiled.
func (s *sloSearch) maxProbes() int { return 2*s.probes + 1 }

// bracket returns the highest passing rate (0: none) and the lowest
// failing one (the capacity if none) of done.
func (s *sloSearch) bracket(done []sloProbe) (lo, hi float64) {
	hi = s.capacity
	for _, p := range done {
		switch {
		case p.outcome == probePass && p.rate > lo:
			lo = p.rate
		case p.outcome == probeFail && p.rate < hi:
			hi = p.rate
		}
	}
	return lo, hi
}

// spoiled counts the probes of done that the generator spoiled.
func spoiled(done []sloProbe) int {
	n := 0
	for _, p := range done {
		if p.outcome == probeGenerator {
			n++
		}
	}
	return n
}

// sloNext returns the rate of the next probe after done, or false when
// the search is over: its probes are spent, the generator spoiled a
// probe twice, or the bracket is narrower than SLOResolution of the
// capacity.
//
// Without a prior it bisects [0, capacity]: each probe at the middle of
// the bracket of the highest passing and the lowest failing rate. With a
// prior m (the median of the earlier repetitions' results), the first
// probe is at m, the second checks the edge of a narrow bracket around
// it, m·(1+SLOPriorWidth) after a pass or m·(1−SLOPriorWidth) after a
// failure, and the rest bisect the bracket: when the earlier repetitions
// were right, 3 probes narrow the rate to SLOPriorWidth·m/2 (5% of m),
// where a bisection of [0, capacity] would leave capacity/8. While every
// probe fails, the search steps down from the last one by twice as large
// a step each time (stepOut) until one passes, and then bisects.
//
// A search whose probes all failed has found no rate that meets the
// objective, only rates that do not: it goes on halving the lowest
// failing rate, up to its number of probes again, until one passes, so
// that its result is a rate that met the objective rather than 0 for
// "not found" (a 0 stands for "no rate met it" in the comparisons, below
// every other result). A probe the generator spoiled (its own CPU or
// lateness: the probe says nothing of the server) is measured once more
// at the same rate; a second spoiled probe ends the search, invalid.
func (s *sloSearch) sloNext(done []sloProbe) (float64, bool) {
	if len(done) >= s.maxProbes() || s.capacity <= 0 {
		return 0, false
	}
	switch spoiled(done) {
	case 0:
	case 1:
		if last := done[len(done)-1]; last.outcome == probeGenerator {
			return last.rate, true
		}
	default:
		return 0, false
	}
	judged := len(done) - spoiled(done)
	lo, hi := s.bracket(done)
	switch {
	case judged >= 2*s.probes:
		return 0, false
	case judged >= s.probes && lo > 0:
		return 0, false
	case judged >= s.probes:
		// Nothing passed: halve the lowest failing rate.
		if r := math.Round(hi / 2); r >= SLOResolution*s.capacity {
			return r, true
		}
		return 0, false
	}
	if hi-lo < SLOResolution*s.capacity {
		return 0, false
	}
	var r float64
	prior := s.prior > 0 && s.prior < s.capacity
	switch {
	case prior && judged == 0:
		r = s.prior
	case prior && lo == 0:
		// Every probe failed: step down from the lowest failing rate.
		r = hi * math.Pow(1-SLOPriorWidth, stepOut(judged))
	case prior && judged == 1:
		// The first passed: check the bracket's upper edge.
		r = lo * (1 + SLOPriorWidth)
	default:
		r = (lo + hi) / 2
	}
	if r <= lo || r >= hi {
		r = (lo + hi) / 2
	}
	return math.Round(r), true
}

// stepOut is the exponent of the step down (1−SLOPriorWidth) a search
// with a prior takes after judged probes that all failed: 1, 2, 4, …, so
// that the second probe checks the lower edge of the bracket around the
// prior and each later one moves twice as far again. The prior is the
// median of the earlier results, so its first probe fails about half the
// time by chance and a second failure at the edge is not rare either (a
// stall of the machine fails a probe at any rate): a bisection of
// [0, edge] would then probe half the prior, and one pass there would
// report a rate half the truth. Stepping down puts the third probe at
// (1−SLOPriorWidth)³ ≈ 0.73 of the prior, and still reaches a fifth of it
// by the fifth probe when the earlier repetitions were far off. Only
// downward: a stall never passes a probe, so a pass is the server's, and
// the search bisects above it as before.
func stepOut(judged int) float64 { return math.Exp2(float64(judged - 1)) }

// sloResult returns the search's result after done.
func (s *sloSearch) sloResult(done []sloProbe) results.SLOResult {
	lo, hi := s.bracket(done)
	res := results.SLOResult{RatePerS: lo, LoPerS: lo, HiPerS: hi, CapacityPerS: s.capacity, PriorPerS: s.prior, Probes: len(done)}
	if n := len(done); n > 0 && done[n-1].outcome == probeGenerator {
		p := done[n-1]
		res.Invalid = fmt.Sprintf("probe at %.0f req/s: %s (the load generator's fault, not the server's, twice: the result is not used)", p.rate, p.why)
		return res
	}
	if lo == 0 {
		if len(done) == 0 {
			res.Reason = "no probe was run"
			return res
		}
		low := done[0]
		for _, p := range done {
			if p.outcome != probeGenerator && p.rate < low.rate {
				low = p
			}
		}
		res.Reason = fmt.Sprintf("no probe met the objective: the lowest, %.0f req/s, %s", low.rate, low.why)
	}
	return res
}

// judgeProbe classifies a measured probe against the objective. A probe
// fails for what the server did: it died or never answered, a response
// failed, the verdict is invalid for a server check (over capacity, rate
// missed, …: results.Point.Fault, as the gate tells them apart), or the
// percentile is above the bound. It is the generator's fault when the
// load could not be run, or the verdict is invalid for the generator's
// own reasons (its CPU, its timers), or it does not trust the percentile.
func judgeProbe(p *results.Point, slo *SLO) (probeOutcome, string) {
	switch {
	case p.Status == results.StatusUnavailable:
		return probeFail, "the model is unavailable: " + p.Failure
	case p.FailedBy == results.FailedLoad:
		return probeGenerator, "the load generator could not run it: " + firstLine(p.Failure)
	case !p.Measured() || p.Load == nil:
		return probeFail, "failed: " + firstLine(p.Failure)
	}
	switch p.Fault() {
	case results.ServerFault:
		if k, n := p.FailedResponses(); k != "" {
			return probeFail, fmt.Sprintf("responses failed (%s: %d)", k, n)
		}
		return probeFail, fmt.Sprintf("invalid (%s)", joinChecks(p.Load.Checks))
	case results.GeneratorFault:
		return probeGenerator, fmt.Sprintf("invalid (%s)", joinChecks(p.Load.Checks))
	}
	pct := slo.percentile()
	label := "p" + strconv.FormatFloat(pct, 'f', -1, 64)
	if !p.Load.Trusted(pct) {
		return probeGenerator, label + " untrusted (generator-lag)"
	}
	v, ok := percentileNs(&p.Load.Latency, pct)
	if !ok {
		return probeFail, "no response measured"
	}
	if time.Duration(v) > time.Duration(slo.Bound) {
		return probeFail, fmt.Sprintf("%s %s > %v", label, loadgen.FormatNs(v), time.Duration(slo.Bound))
	}
	return probePass, fmt.Sprintf("%s %s ≤ %v", label, loadgen.FormatNs(v), time.Duration(slo.Bound))
}

// percentileNs returns percentile pct (one of SLOPercentiles) of s.
func percentileNs(s *loadgen.Summary, pct float64) (int64, bool) {
	if s.Count == 0 {
		return 0, false
	}
	switch pct {
	case 50:
		return s.P50Ns, true
	case 90:
		return s.P90Ns, true
	case 99:
		return s.P99Ns, true
	case 99.9:
		return s.P999Ns, true
	}
	return 0, false
}

func joinChecks(cs []loadgen.Check) string {
	if len(cs) == 0 {
		return string(results.UnclassifiedCheck)
	}
	s := string(cs[0])
	for _, c := range cs[1:] {
		s += ", " + string(c)
	}
	return s
}

// lowestInvalidCapacity returns the lowest rate that an invalid capacity
// point of configuration name achieved in repetitions 0..rep, or 0.
func (r *runner) lowestInvalidCapacity(name string, rep int) float64 {
	low := 0.0
	for k, v := range r.invalidCaps[name] {
		if k <= rep && v > 0 && (low == 0 || v < low) {
			low = v
		}
	}
	return low
}

// probeKey names one probe of a run.
type probeKey struct {
	name       string
	rep, probe int
}

// dropStaleProbes removes the stored probes of configuration name's
// repetition rep after probe i, which was just measured anew: they came
// from an earlier search whose probe i (or its result) was lost, and
// their rates followed from outcomes this search no longer has. Left in
// the folder they would count as points of a search they are not part
// of.
func (r *runner) dropStaleProbes(name string, rep, i int) {
	for k, p := range r.probes {
		if k.name == name && k.rep == rep && k.probe > i {
			os.Remove(filepath.Join(r.dir, results.PointsDir, results.PointFileName(p)))
			delete(r.probes, k)
		}
	}
}

// sloPrior returns the median of configuration name's valid SLO
// capacities in repetitions before rep that found a passing rate, or 0.
func (r *runner) sloPrior(name string, rep int) float64 {
	var xs []float64
	for k, v := range r.sloRates[name] {
		if k < rep && v > 0 {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return results.Summarize(xs).Median
}

// mostProbes is the most probes a search of the run takes
// (sloSearch.maxProbes).
func (r *runner) mostProbes() int { return (&sloSearch{probes: r.exp.SLOProbes}).maxProbes() }

// planSearches counts n more searches in the run's points, each at its
// most probes and its result, and among those the ETA has left.
func (r *runner) planSearches(n int) {
	r.sum.Points += n * (r.mostProbes() + 1)
	r.searches.left += n
}

// searchDone counts a search that took probes of its most: the run's
// points give back the rest, and the ETA learns how many a search takes.
func (r *runner) searchDone(probes int) {
	r.sum.Points -= r.mostProbes() - probes
	r.searches.left--
	r.searches.done++
	r.searches.probes += probes
}

// search runs rc's latency-objective search of repetition rep (sloSearch)
// on the server that measured its capacity, probe by probe, each written
// as a KindProbe point, then writes its result as a KindSLO point. A
// resumed run replays the probes it has, and measures the rest; a search
// whose result is in the folder is skipped whole. An interrupt stops it
// before the next probe, without a result (Resume continues it).
func (r *runner) search(ctx context.Context, rc *runConfig, rep int) error {
	slo := rc.wl.SLO
	res := r.newPoint(rc, pointLoad{kind: results.KindSLO}, rep)
	if results.HasPoint(r.dir, res) {
		n := 0
		for i := range r.mostProbes() {
			if _, ok := r.probes[probeKey{rc.name, rep, i}]; ok {
				n++
			}
		}
		r.pointIdx += n + 1
		r.sum.Skipped += n + 1
		r.searchDone(n)
		return nil
	}
	s := sloSearch{capacity: r.capacity(rc.name, rep), prior: r.sloPrior(rc.name, rep), probes: r.exp.SLOProbes}
	byCeiling, byInvalid := false, false
	if s.capacity <= 0 && r.beyond[rc.name] {
		// The capacity is beyond what the generator measures: the search
		// can still find the rate at the objective below that limit.
		if c := r.ceilingFor(rc.wl.Protocol); c != nil {
			s.capacity, byCeiling = c.Fraction*c.PerS, true
		}
	}
	if s.capacity <= 0 {
		// No valid capacity yet (the generator spoiled it): the lowest
		// rate an invalid capacity point achieved bounds the search
		// instead — the server sustained at least that much.
		s.capacity = r.lowestInvalidCapacity(rc.name, rep)
		byInvalid = s.capacity > 0
	}
	var done []sloProbe
	if _, unavailable := r.unavailable[rc.name]; !unavailable {
		for i := 0; ; i++ {
			rate, ok := s.sloNext(done)
			if !ok {
				break
			}
			if ctx.Err() != nil {
				r.sum.Interrupted = true
				return nil
			}
			p, ok := r.probes[probeKey{rc.name, rep, i}]
			if ok {
				r.pointIdx++
				r.sum.Skipped++
			} else {
				l := pointLoad{kind: results.KindProbe, rate: rate, probe: i, capacity: s.capacity,
					seedIdx: 1 + len(r.exp.Fractions) + len(r.exp.Rates) + len(r.exp.RatesFromSlowest) + i}
				p = r.newPoint(rc, l, rep)
				verdict := func(p *results.Point) string {
					o, why := judgeProbe(p, slo)
					switch o {
					case probePass:
						return "pass: " + why
					case probeGenerator:
						return "GENERATOR: " + why
					}
					return "fail: " + why
				}
				if err := r.pointAt(rc, p, l.seedIdx, verdict); err != nil {
					return err
				}
				r.dropStaleProbes(rc.name, rep, i)
			}
			o, why := judgeProbe(p, slo)
			done = append(done, sloProbe{rate: p.OfferedRatePerS, outcome: o, why: why})
		}
	}
	r.searchDone(len(done))
	sr := s.sloResult(done)
	sr.Percentile, sr.BoundNs = slo.percentile(), int64(time.Duration(slo.Bound))
	if byCeiling {
		sr.Reason = strings.TrimPrefix(sr.Reason+"; ", "; ") + fmt.Sprintf("searched up to %.0f req/s, %.0f%% of the load generator's ceiling: the closed-loop capacity is beyond what the generator measures", s.capacity, 100*CeilingFraction)
	}
	if byInvalid {
		sr.Reason = strings.TrimPrefix(sr.Reason+"; ", "; ") + fmt.Sprintf("searched up to %.0f req/s, the lowest rate an invalid capacity point of repetitions 0..%d achieved: no valid capacity bounded it", s.capacity, rep)
	}
	res.SLO = &sr
	res.StartTime = time.Now().UTC()
	res.Provenance.Time = res.StartTime
	switch reason, unavailable := r.unavailable[rc.name]; {
	case unavailable:
		res.Status, res.Failure = results.StatusUnavailable, reason
	case s.capacity <= 0:
		res.Status, res.FailedBy = results.StatusFailed, results.FailedNoRate
		res.Failure = fmt.Sprintf("no valid capacity measurement of %s in repetitions 0..%d to bound the search", rc.name, rep)
	default:
		res.Status = results.StatusOK
	}
	r.pointIdx++
	if err := results.WritePoint(r.dir, res); err != nil {
		r.sum.Interrupted, r.run.Interrupted = true, true
		return fmt.Errorf("harness: %w", err)
	}
	r.remember(res)
	r.count(res)
	r.progress(res, nil)
	return nil
}
