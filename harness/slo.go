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

// sloProbe is one probe's rate and outcome, with why it did not pass, and
// the percentile it measured (ns; 0: none).
type sloProbe struct {
	rate    float64
	outcome probeOutcome
	why     string
	pctNs   float64
}

// sloSearch is one repetition's search: its upper bracket, its bound and
// the probes it may run. Nothing in it comes from another repetition: the
// bracket is this repetition's own closed-loop capacity (or the load
// generator's ceiling, the same for every configuration), so that
// repetitions are independent and their spread is the spread between
// runs. (Until 2026-12 each search started from the median of the earlier
// repetitions' results: their spread understated the spread between
// runs, and a simulation of it called two identical configurations
// different in 2–37 % of runs, against the 2.5 % the rule states;
// docs/findings.md.)
type sloSearch struct {
	capacity float64 // the upper bracket (req/s)
	boundNs  float64 // the objective's bound, for the interpolation
	probes   int     // the probes that judge the server, at most this many before the search extends downward
	// capped says the upper bracket is the load generator's ceiling,
	// not the server's capacity: a search that passes every probe is then
	// a lower bound (results.SLOResult.Censored).
	capped bool
}

// maxProbes is the most probes a search runs: its probes, as many more
// halving the rate while none has passed (sloNext), and one repeat of a
// probe the generator spoiled.
func (s *sloSearch) maxProbes() int { return 2*s.probes + 1 }

// bracket returns the highest passing probe (its rate 0: none) and the
// lowest failing one (at the upper bracket, with no percentile, if none
// failed) of done.
func (s *sloSearch) bracket(done []sloProbe) (lo, hi sloProbe) {
	hi = sloProbe{rate: s.capacity, outcome: probeFail}
	for _, p := range done {
		switch {
		case p.outcome == probePass && p.rate > lo.rate:
			lo = p
		case p.outcome == probeFail && p.rate < hi.rate:
			hi = p
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
// The first probe is at half the capacity. Each later one is where the
// percentile is expected to reach the bound (crossing): between a passing
// and a failing probe, by interpolating the logarithm of the percentile
// linearly in the rate; above the highest passing probe with no failure
// yet, where a queue whose percentile grows as 1/(1 − rate/capacity) would
// reach it. Either is kept inside the bracket, at least a tenth of its
// width from its ends, and a bracket with nothing to interpolate is
// bisected. Model-guided probes narrow a bracket faster than bisection,
// and every probe comes from this repetition's own measurements.
//
// A search whose probes all failed has found no rate that meets the
// objective, only rates that do not: it goes on halving the lowest
// failing rate, up to its number of probes again, until one passes, so
// that its result is a rate that met the objective rather than 0 for
// "not found". A probe the generator spoiled (its own CPU or lateness:
// the probe says nothing of the server) is measured once more at the same
// rate; a second spoiled probe ends the search, invalid.
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
	case judged >= s.probes && lo.rate > 0:
		return 0, false
	case judged >= s.probes:
		// Nothing passed: halve the lowest failing rate.
		if r := math.Round(hi.rate / 2); r >= SLOResolution*s.capacity {
			return r, true
		}
		return 0, false
	}
	if hi.rate-lo.rate < SLOResolution*s.capacity {
		return 0, false
	}
	r := (lo.rate + hi.rate) / 2
	if judged > 0 {
		if x, ok := s.crossing(lo, hi); ok {
			edge := 0.1 * (hi.rate - lo.rate)
			r = min(max(x, lo.rate+edge), hi.rate-edge)
		}
	}
	return math.Round(r), true
}

// crossing returns the rate at which the percentile is expected to reach
// the bound, from the highest passing probe lo and the lowest failing one
// hi (the upper bracket if none failed): interpolated between their
// logarithms when both measured a percentile above 0 and hi's is beyond
// the bound; with no failing probe, from lo alone, as a queue whose
// percentile grows as 1/(1 − rate/capacity). False when neither applies
// (nothing passed, or the failing probe's percentile does not bracket the
// bound: it failed for another reason).
func (s *sloSearch) crossing(lo, hi sloProbe) (float64, bool) {
	b := s.boundNs
	switch {
	case lo.rate <= 0 || lo.pctNs <= 0 || b <= 0 || lo.pctNs > b:
		return 0, false
	case hi.pctNs > b:
		f := (math.Log(b) - math.Log(lo.pctNs)) / (math.Log(hi.pctNs) - math.Log(lo.pctNs))
		return lo.rate + f*(hi.rate-lo.rate), true
	case hi.pctNs == 0 && hi.rate >= s.capacity && lo.rate < s.capacity:
		// p(r) = p0 / (1 − r/C): p0 from lo, then p(r) = b.
		p0 := lo.pctNs * (1 - lo.rate/s.capacity)
		return s.capacity * (1 - p0/b), true
	}
	return 0, false
}

// sloResult returns the search's result after done: the rate at which
// the percentile reaches the bound (crossing) between the highest
// passing and the lowest failing probe, within them (the midpoint when
// the failing probe's percentile does not bracket the bound); the highest
// passing probe when none failed; 0 when none passed (Reason says why).
func (s *sloSearch) sloResult(done []sloProbe) results.SLOResult {
	lo, hi := s.bracket(done)
	res := results.SLOResult{RatePerS: lo.rate, LoPerS: lo.rate, HiPerS: hi.rate, CapacityPerS: s.capacity, Probes: len(done)}
	if n := len(done); n > 0 && done[n-1].outcome == probeGenerator {
		p := done[n-1]
		res.Invalid = fmt.Sprintf("probe at %.0f req/s: %s (the load generator's fault, not the server's, twice: the result is not used)", p.rate, p.why)
		return res
	}
	switch {
	case lo.rate == 0:
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
	case hi.rate >= s.capacity:
		// Every probe passed: the result is the highest, and a lower
		// bound when the bracket was the generator's ceiling.
		res.Censored = s.capped
	default:
		x, ok := s.crossing(lo, hi)
		if !ok || x < lo.rate || x > hi.rate {
			x = (lo.rate + hi.rate) / 2
		}
		res.RatePerS = math.Round(x)
	}
	return res
}

// judgeProbe classifies a measured probe against the objective. A probe
// fails for what the server did: it died or never answered, a response
// failed, the verdict is invalid for a server check (over capacity, rate
// missed, …: results.Point.Fault, as the gate tells them apart), or the
// percentile is above the bound. It is the generator's fault when the
// load could not be run, or the verdict is invalid for the generator's
// own reasons (its CPU, its timers). The generator's own lateness is
// judged against the bound, never against the probe's own percentile (a
// fast configuration's probes would be spoiled more often than a slow
// one's by the same lateness): it only adds latency, so a probe within
// the bound with it passes, and one above the bound is the generator's
// only when the latency without its lateness is within the bound.
func judgeProbe(p *results.Point, slo *SLO) (probeOutcome, string) {
	switch {
	case p.Status == results.StatusUnavailable:
		return probeFail, "the model is unavailable: " + p.Failure
	case p.FailedBy == results.FailedLoad:
		return probeGenerator, "the load generator could not run it: " + firstLine(p.Failure)
	case !p.Measured() || p.Load == nil:
		return probeFail, "failed: " + firstLine(p.Failure)
	}
	lagOnly := !p.Load.Valid && len(p.Load.Checks) > 0 && !slices.ContainsFunc(p.Load.Checks, func(c loadgen.Check) bool { return c != loadgen.CheckBias })
	switch p.Fault() {
	case results.ServerFault:
		if k, n := p.FailedResponses(); k != "" {
			return probeFail, fmt.Sprintf("responses failed (%s: %d)", k, n)
		}
		return probeFail, fmt.Sprintf("invalid (%s)", joinChecks(p.Load.Checks))
	case results.GeneratorFault:
		if !lagOnly {
			return probeGenerator, fmt.Sprintf("invalid (%s)", joinChecks(p.Load.Checks))
		}
	case results.HostFault:
		return probeGenerator, fmt.Sprintf("invalid (%s) while the hypervisor took %.1f%% of the server's CPUs (steal)", joinChecks(p.Load.Checks), 100*p.Server.StealFraction)
	}
	pct := slo.percentile()
	label := "p" + strconv.FormatFloat(pct, 'f', -1, 64)
	v, ok := percentileNs(&p.Load.Latency, pct)
	if !ok {
		return probeFail, "no response measured"
	}
	bound := time.Duration(slo.Bound)
	if time.Duration(v) <= bound {
		return probePass, fmt.Sprintf("%s %s ≤ %v", label, loadgen.FormatNs(v), bound)
	}
	if lagOnly || !p.Load.Trusted(pct) {
		for _, s := range p.Load.LagShares {
			if s.Percentile == pct && time.Duration(s.WithoutLagNs) <= bound {
				return probeGenerator, fmt.Sprintf("%s %s > %v, but %s without the generator's own lateness (generator-lag)", label, loadgen.FormatNs(v), bound, loadgen.FormatNs(s.WithoutLagNs))
			}
		}
	}
	return probeFail, fmt.Sprintf("%s %s > %v", label, loadgen.FormatNs(v), bound)
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

// probePercentile returns the percentile pct a probe measured (ns), 0 if
// none.
func probePercentile(p *results.Point, pct float64) float64 {
	if p.Load == nil {
		return 0
	}
	v, ok := percentileNs(&p.Load.Latency, pct)
	if !ok {
		return 0
	}
	return float64(v)
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

// newSearch returns the search of rc's repetition rep for objective slo:
// bounded by this repetition's own capacity — never another repetition's
// measurement or result (sloSearch) —, by the load generator's ceiling
// when that capacity was beyond it (byCeiling), or by the rate its
// invalid capacity point achieved when the generator spoiled it
// (byInvalid: the server sustained at least that much).
func (r *runner) newSearch(rc *runConfig, rep int, slo *SLO) (s sloSearch, byCeiling, byInvalid bool) {
	s = sloSearch{capacity: r.capacities[rc.name][rep], boundNs: float64(time.Duration(slo.Bound)), probes: r.exp.SLOProbes}
	if s.capacity <= 0 && r.beyondIn[rc.name][rep] {
		if c := r.ceilingFor(rc.wl.Protocol); c != nil {
			s.capacity, byCeiling, s.capped = c.Bound(), true, true
		}
	}
	if s.capacity <= 0 {
		s.capacity = r.invalidCaps[rc.name][rep]
		byInvalid = s.capacity > 0
	}
	return s, byCeiling, byInvalid
}

// search runs rc's latency-objective search of repetition rep (sloSearch)
// on the server that measured its capacity, probe by probe, each written
// as a KindProbe point, then writes its result as a KindSLO point. A
// resumed run replays the probes it has, and measures the rest; a search
// whose result is in the folder is skipped whole. An interrupt stops it
// before the next probe, without a result (Resume continues it).
func (r *runner) search(ctx context.Context, rc *runConfig, rep int) error {
	slo := r.objective(&rc.wl)
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
	s, byCeiling, byInvalid := r.newSearch(rc, rep, slo)
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
			done = append(done, sloProbe{rate: p.OfferedRatePerS, outcome: o, why: why, pctNs: probePercentile(p, slo.percentile())})
		}
	}
	r.searchDone(len(done))
	sr := s.sloResult(done)
	sr.Percentile, sr.BoundNs = slo.percentile(), int64(time.Duration(slo.Bound))
	if byCeiling {
		sr.Reason = strings.TrimPrefix(sr.Reason+"; ", "; ") + fmt.Sprintf("searched up to %.0f req/s, %.0f%% of the load generator's ceiling: the closed-loop capacity is beyond what the generator measures", s.capacity, 100*CeilingFraction)
	}
	if byInvalid {
		sr.Reason = strings.TrimPrefix(sr.Reason+"; ", "; ") + fmt.Sprintf("searched up to %.0f req/s, the rate this repetition's invalid capacity point achieved: no valid capacity bounded it", s.capacity)
	}
	res.SLO = &sr
	res.StartTime = time.Now().UTC()
	res.Provenance.Time = res.StartTime
	switch reason, unavailable := r.unavailable[rc.name]; {
	case unavailable:
		res.Status, res.Failure = results.StatusUnavailable, reason
	case s.capacity <= 0:
		res.Status, res.FailedBy = results.StatusFailed, results.FailedNoRate
		res.Failure = fmt.Sprintf("no capacity measurement of %s in repetition %d to bound the search", rc.name, rep)
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
