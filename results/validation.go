package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"concbench/loadgen"
)

// Validation is the result of concbench validate: the measurement chain
// (load generator, loopback, kernel, server) checked against queueing
// theory with measured inputs.
type Validation struct {
	// Validated is the overall verdict: every judged experiment within
	// Tolerance, and at least one judged. Verdict says it in words,
	// Reasons why not.
	Validated bool     `json:"validated"`
	Verdict   string   `json:"verdict"`
	Reasons   []string `json:"reasons,omitempty"`
	// Model is the server's model (Leader/Followers, or the partitioned
	// server), Servers its threads (c; 0 in a record from before there
	// were more than one: 1), Partitioned whether each has a queue of its
	// own.
	Model       string `json:"model,omitempty"`
	Servers     int    `json:"servers,omitempty"`
	Partitioned bool   `json:"partitioned,omitempty"`
	// Tolerance is the largest |measured/predicted − 1| of the mean that
	// passes; MaxJudgedRho the largest target utilization judged.
	Tolerance    float64 `json:"tolerance"`
	MaxJudgedRho float64 `json:"max_judged_rho"`
	// Floor is the measured fixed floor; Experiments the queueing
	// experiments; Notes what was not run and why.
	Floor ChainFloor `json:"floor"`
	// ClosedService is the service time the server measured under closed
	// load (exponential work, one request in flight per connection), to
	// compare with each open-loop experiment's.
	ClosedService ServiceStats      `json:"closed_loop_service"`
	Experiments   []ChainExperiment `json:"experiments"`
	Notes         []string          `json:"notes,omitempty"`
	// ClockUncertaintyNs bounds the error of joining the two processes'
	// timestamps (the server's and the generator's calibrations, summed).
	ClockUncertaintyNs int64      `json:"clock_uncertainty_ns"`
	Provenance         Provenance `json:"provenance"`
	DurationNs         int64      `json:"duration_ns"`
}

// ChainFloor is the fixed floor of a response time: the loopback round
// trip and the server's per-request handling outside Service.Do, measured
// with zero work at a low rate, so that every request finds the server
// idle. Its samples are Dispatch + Return of the requests sent to an idle
// server.
type ChainFloor struct {
	RatePerS float64 `json:"rate_per_s"`
	Requests int     `json:"requests"`
	MeanNs   float64 `json:"mean_ns"`
	P50Ns    float64 `json:"p50_ns"`
	P99Ns    float64 `json:"p99_ns"`
	// InboundNs and ReturnNs are the means of its two parts (send →
	// service start, service end → receive).
	InboundNs     float64       `json:"inbound_ns"`
	ReturnNs      float64       `json:"return_ns"`
	Decomposition Decomposition `json:"decomposition"`
	Samples       []float64     `json:"-"`
}

// FloorOf returns the floor measured by a run's joined parts.
func FloorOf(parts []Parts, unmatched int, ratePerS float64) ChainFloor {
	idle := func(p Parts) bool { return p.Idle }
	in := Samples(parts, func(p Parts) int64 { return p.Dispatch }, idle)
	ret := Samples(parts, func(p Parts) int64 { return p.Return }, idle)
	f := ChainFloor{RatePerS: ratePerS, Requests: len(in), Decomposition: Decompose(parts, unmatched),
		InboundNs: MomentsOf(in).Mean, ReturnNs: MomentsOf(ret).Mean}
	f.Samples = make([]float64, len(in))
	for i := range in {
		f.Samples[i] = in[i] + ret[i]
	}
	f.MeanNs = MomentsOf(f.Samples).Mean
	sorted := slices.Sorted(slices.Values(f.Samples))
	f.P50Ns, f.P99Ns = quantileOf(sorted, 0.5), quantileOf(sorted, 0.99)
	return f
}

// LatencyStats are a response time's mean and percentiles, ns.
type LatencyStats struct {
	MeanNs float64 `json:"mean_ns"`
	P50Ns  float64 `json:"p50_ns"`
	P99Ns  float64 `json:"p99_ns"`
}

// ServiceStats describe a service-time distribution: asked (the requests'
// CPU work) or measured (the server's own timestamps of Service.Do).
type ServiceStats struct {
	Requests int     `json:"requests,omitempty"`
	MeanNs   float64 `json:"mean_ns"`
	SCV      float64 `json:"scv"` // Var/mean²: 1 exponential, 0 constant
	P50Ns    float64 `json:"p50_ns,omitempty"`
	P99Ns    float64 `json:"p99_ns,omitempty"`
}

// Gap attributes the difference between the measured mean response time
// and the plain prediction's (M/G/c with the measured service time, plus
// the floor) to the chain's parts (ns; they sum to Total): the
// generator's lateness, queueing beyond the plain model's wait, dispatch
// beyond the floor's inbound part, return beyond the floor's return part.
// It says what the plain model leaves out; the effective service time
// (ChainExperiment.Predicted) puts those parts in.
type Gap struct {
	GenLag   float64 `json:"gen_lag_ns"`
	Queue    float64 `json:"queue_ns"`
	Dispatch float64 `json:"dispatch_ns"`
	Return   float64 `json:"return_ns"`
	Total    float64 `json:"total_ns"`
}

// ChainExperiment is one queueing experiment: Servers server threads
// (one, or c sharing one queue, or c partitioned), Poisson arrivals, CPU
// work of one distribution at one target utilization.
type ChainExperiment struct {
	Name      string  `json:"name"`       // e.g. "M/M/1 ρ=0.5"
	Work      string  `json:"work"`       // "exp" or "fixed"
	TargetRho float64 `json:"target_rho"` // the offered rate × the asked mean work ÷ servers
	// Servers is c, the server's threads (0 in a record from before
	// there were more than one: 1); Partitioned whether each has a queue
	// of its own (c × M/G/1) rather than one shared (M/G/c).
	Servers     int  `json:"servers,omitempty"`
	Partitioned bool `json:"partitioned,omitempty"`
	// RatePerS is the achieved arrival rate; Rho the utilization per
	// server with the measured service time (λE[S]/c), RhoEffective with
	// the effective one (λE[S_eff]/c, see Predicted).
	RatePerS     float64      `json:"rate_per_s"`
	Rho          float64      `json:"rho"`
	RhoEffective float64      `json:"rho_effective,omitempty"`
	Asked        ServiceStats `json:"asked_service"`
	Service      ServiceStats `json:"measured_service"`
	// EffectiveServiceNs is E[S_eff] = E[S] + E[G]: the measured service
	// plus the server's own gap between two services.
	EffectiveServiceNs float64 `json:"effective_service_ns,omitempty"`
	// Measured is the response time from the intended send (the schedule,
	// the queueing model's arrival) to the kernel's receive timestamp,
	// over the joined requests; Generator is the load generator's own
	// summary of the same (latency from intended, HDR histogram).
	Measured  LatencyStats `json:"measured"`
	Generator LatencyStats `json:"generator"`
	// Textbook is the closed form with the asked work and target rate
	// (M/M/c or M/D/1; c × M/M/1 or c × M/D/1 with a random split when
	// partitioned; M/D/c simulated, having none), no floor.
	//
	// Predicted, which the verdict judges, is the queue on the effective
	// service time, from measured inputs: each request occupies its
	// server for its measured service S plus the server's own gap G
	// between two services (the busy requests' dispatch: the previous
	// response's write, epoll, this one's read), and one that finds its
	// server idle first pays the idle server's set-up U (the idle
	// requests' dispatch: loopback, wake-up, read); the response then
	// returns in the measured return time R. With one server its mean is
	// exact (SetupMean(λ, S+G, U) − E[G] + E[R]: the request's own gap
	// comes after its response), its percentiles simulated; with more,
	// all simulated (SimulateQueue), the partitioned queues fed with the
	// split the server made (the servers the requests went to, in send
	// order).
	//
	// Plain is the plain model beside it: M/G/c with the measured service
	// time alone, plus the floor measured at low load (one server: the
	// Pollaczek–Khinchine mean, exact).
	Textbook  Theory `json:"textbook"`
	Predicted Theory `json:"predicted"`
	Plain     Theory `json:"plain"`
	// Ratio is Measured.MeanNs / Predicted.MeanNs; RatioP50 and RatioP99
	// the same for the percentiles; PlainRatio and PlainRatioP99 against
	// Plain.
	Ratio         float64 `json:"ratio"`
	RatioP50      float64 `json:"ratio_p50"`
	RatioP99      float64 `json:"ratio_p99"`
	PlainRatio    float64 `json:"plain_ratio"`
	PlainRatioP99 float64 `json:"plain_ratio_p99"`
	// Judged says whether the verdict counts (target ρ ≤ MaxJudgedRho and
	// a valid load); Pass whether the mean is within the tolerance;
	// Verdict in words; Reasons why not.
	Judged  bool     `json:"judged"`
	Pass    bool     `json:"pass"`
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
	// Notes explain what the measured inputs say about the machine (a
	// service time far from the asked work: the server's CPU ran other
	// work), without changing the verdict.
	Notes []string `json:"notes,omitempty"`
	// Decomposition is the mean of each part; Gap the attribution of
	// measured − Plain.
	Decomposition Decomposition `json:"decomposition"`
	Gap           Gap           `json:"gap"`
	// ServerDropped counts requests the server's full trace did not
	// record; LoadValid and LoadReasons are the load generator's verdict.
	ServerDropped int64    `json:"server_dropped"`
	LoadValid     bool     `json:"load_valid"`
	LoadReasons   []string `json:"load_reasons,omitempty"`
}

// ChainInput is what AnalyzeChain needs of one experiment.
type ChainInput struct {
	Name      string
	Work      string  // "exp" or "fixed"
	AskedNs   float64 // the asked mean CPU work
	TargetRho float64 // per server
	// Servers is the server's threads, c (0 means 1); Partitioned says
	// each has a queue of its own.
	Servers     int
	Partitioned bool
	// Load is the load generator's result, with its Trace; Server the
	// server's trace records and how many it dropped.
	Load          *loadgen.Result
	Server        []ServiceRecord
	ServerDropped int64
	Floor         ChainFloor
	Tolerance     float64
	MaxJudgedRho  float64
	Seed          uint64
}

// simRequests is the number of requests each prediction simulates.
const simRequests = 200_000

// chainSamples are one experiment's measured inputs to its predictions
// (ns): service S, the idle server's set-up U, the busy server's gap G,
// the return R, and the split (the server index of each request, in send
// order) that the partitioned queues are fed with.
type chainSamples struct {
	service, setup, gap, ret []float64
	split                    []int
}

// AnalyzeChain joins, decomposes and judges one experiment. The server
// serves its connections in the order the kernel reports them ready, not
// strictly first come first served; the mean wait is the same for every
// work-conserving order that does not look at service times (Kleinrock's
// conservation law), so the judged mean holds, while the simulated
// percentiles assume FCFS.
func AnalyzeChain(in ChainInput) ChainExperiment {
	c := max(in.Servers, 1)
	e := ChainExperiment{Name: in.Name, Work: in.Work, TargetRho: in.TargetRho, ServerDropped: in.ServerDropped, Servers: c, Partitioned: in.Partitioned}
	gen := e.takeLoad(in.Load)
	e.Asked = ServiceStats{MeanNs: in.AskedNs}
	if in.Work == "exp" {
		e.Asked.SCV = 1
	}
	e.Textbook = textbook(in.Work, in.AskedNs, in.TargetRho*float64(c)*1e9/in.AskedNs, c, in.Partitioned, in.Seed)

	parts, unmatched := Join(gen, in.Server)
	e.Decomposition = Decompose(parts, unmatched)
	if len(parts) == 0 {
		e.Verdict = "not validated"
		e.Reasons = append(e.Reasons, "no request could be joined with the server's trace")
		return e
	}
	idle := func(p Parts) bool { return p.Idle }
	busy := func(p Parts) bool { return !p.Idle }
	dispatch := func(p Parts) int64 { return p.Dispatch }
	x := chainSamples{
		service: Samples(parts, func(p Parts) int64 { return p.Service }, nil),
		setup:   Samples(parts, dispatch, idle),
		gap:     Samples(parts, dispatch, busy),
		ret:     Samples(parts, func(p Parts) int64 { return p.Return }, nil),
	}
	if in.Partitioned {
		x.split = SplitOf(gen, in.Server)
	}
	sm := MomentsOf(x.service)
	e.Service = ServiceStatsOf(x.service)
	e.Service.Requests = len(x.service)
	e.EffectiveServiceNs = sm.Mean + MomentsOf(x.gap).Mean
	e.Rho = e.RatePerS * sm.Mean / 1e9 / float64(c)
	e.RhoEffective = e.RatePerS * e.EffectiveServiceNs / 1e9 / float64(c)
	e.noteInputs(gen, in, sm)

	total := Samples(parts, Parts.Sum, nil)
	slices.Sort(total)
	e.Measured = LatencyStats{MeanNs: e.Decomposition.Total, P50Ns: quantileOf(total, 0.5), P99Ns: quantileOf(total, 0.99)}

	e.Plain = e.plainPrediction(x, in.Floor, in.Seed)
	e.Predicted = e.effectivePrediction(x, in.Seed+1)
	if e.Plain.Stable {
		wait := e.Plain.MeanNs - sm.Mean - in.Floor.MeanNs
		e.Gap = Gap{
			GenLag:   e.Decomposition.GenLag,
			Queue:    e.Decomposition.Queue - wait,
			Dispatch: e.Decomposition.Dispatch - in.Floor.InboundNs,
			Return:   e.Decomposition.Return - in.Floor.ReturnNs,
		}
		e.Gap.Total = e.Gap.GenLag + e.Gap.Queue + e.Gap.Dispatch + e.Gap.Return
	}
	ratio := func(m, p float64) float64 {
		if p <= 0 {
			return 0
		}
		return m / p
	}
	e.Ratio = ratio(e.Measured.MeanNs, e.Predicted.MeanNs)
	e.RatioP50 = ratio(e.Measured.P50Ns, e.Predicted.P50Ns)
	e.RatioP99 = ratio(e.Measured.P99Ns, e.Predicted.P99Ns)
	e.PlainRatio = ratio(e.Measured.MeanNs, e.Plain.MeanNs)
	e.PlainRatioP99 = ratio(e.Measured.P99Ns, e.Plain.P99Ns)
	e.judge(in)
	return e
}

// takeLoad takes the load generator's verdict, summary and achieved rate
// into e, and returns its trace records.
func (e *ChainExperiment) takeLoad(load *loadgen.Result) []loadgen.TraceRecord {
	if load == nil {
		return nil
	}
	e.LoadValid, e.LoadReasons = load.Valid, load.Reasons
	e.Generator = LatencyStats{MeanNs: load.FromIntended.MeanNs, P50Ns: float64(load.FromIntended.P50Ns), P99Ns: float64(load.FromIntended.P99Ns)}
	if load.WindowNs > 0 {
		e.RatePerS = float64(load.Requests.OK) * 1e9 / float64(load.WindowNs)
	}
	if load.Trace == nil {
		return nil
	}
	return load.Trace.Records
}

// noteInputs notes what the measured inputs say about the machine.
func (e *ChainExperiment) noteInputs(gen []loadgen.TraceRecord, in ChainInput, sm Moments) {
	if n := userStamped(gen); n > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d of %d responses carry no kernel receive timestamp: their return part includes the generator's delay in reading them", n, len(gen)))
	}
	if r := sm.Mean / in.AskedNs; r > 1.2 || r < 0.8 {
		e.Notes = append(e.Notes, fmt.Sprintf("the server measured a service time %.2f× the asked work (SCV %.2f, asked %.0f): its CPU ran other work too (another process, the hypervisor), or the calibration does not hold; the prediction uses the measured one",
			r, sm.SCV(), e.Asked.SCV))
	}
	if e.Partitioned && e.Servers > 1 {
		e.Notes = append(e.Notes, "the partitioned queues are fed with the split the server made (each connection bound to one thread, the load generator's round-robin over its connections): not a random split, so not c × M/M/1 at λ/c (the textbook column assumes one)")
	}
}

// textbook returns the closed form of the experiment with the asked work
// and the target rate, no floor (see ChainExperiment.Textbook).
func textbook(work string, askedNs, rate float64, c int, partitioned bool, seed uint64) Theory {
	cs := strconv.Itoa(c)
	var t Theory
	switch {
	case work == "exp" && partitioned && c > 1:
		t = MMc(1, askedNs, rate/float64(c))
		t.C, t.Model = c, cs+" × M/M/1 (random split)"
	case work == "exp":
		t = MMc(c, askedNs, rate)
		t.Model = "M/M/" + cs
	case c == 1:
		t = MD1(askedNs, rate)
	case partitioned:
		t = MD1(askedNs, rate/float64(c))
		t.C, t.Model = c, cs+" × M/D/1 (random split)"
	default:
		t = SimulateQueue(Simulation{C: c, RatePerS: rate, Service: []float64{askedNs}, Requests: simRequests, Seed: seed})
		t.Model = "M/D/" + cs + " (sim)"
	}
	return t
}

// plainPrediction returns the plain model: M/G/c with the measured
// service time alone, plus the floor (see ChainExperiment.Plain).
func (e *ChainExperiment) plainPrediction(x chainSamples, floor ChainFloor, seed uint64) Theory {
	c, cs := e.Servers, strconv.Itoa(e.Servers)
	t := SimulateQueue(Simulation{C: c, RatePerS: e.RatePerS, Partitioned: e.Partitioned, Split: x.split,
		Service: x.service, Floor: floor.Samples, Requests: simRequests, Seed: seed})
	switch {
	case c == 1:
		t.Model = "M/G/1 (P-K) + floor"
		if pk, ok := PollaczekKhinchine(e.RatePerS, MomentsOf(x.service)); ok {
			t.MeanNs = pk + floor.MeanNs // the exact mean, not the simulated one
		}
	case e.Partitioned:
		t.Model = cs + " × M/G/1 + floor (sim)"
	default:
		t.Model = "M/G/" + cs + " + floor (sim)"
	}
	return t
}

// effectivePrediction returns the queue on the effective service time,
// which the verdict judges (see ChainExperiment.Predicted).
func (e *ChainExperiment) effectivePrediction(x chainSamples, seed uint64) Theory {
	c, cs := e.Servers, strconv.Itoa(e.Servers)
	t := SimulateQueue(Simulation{C: c, RatePerS: e.RatePerS, Partitioned: e.Partitioned, Split: x.split,
		Service: x.service, Setup: x.setup, Gap: x.gap, Floor: x.ret, Requests: simRequests, Seed: seed})
	switch {
	case c == 1:
		t.Model = "M/G/1 on S_eff (setup + gap)"
		g := MomentsOf(x.gap)
		if m, ok := SetupMean(e.RatePerS, MomentsOf(x.service).Plus(g), MomentsOf(x.setup)); ok {
			t.MeanNs = m - g.Mean + MomentsOf(x.ret).Mean // the exact mean, not the simulated one
		} else {
			t = Theory{Model: t.Model, C: 1, RatePerS: e.RatePerS, ServiceNs: t.ServiceNs, Utilization: e.RhoEffective}
		}
	case e.Partitioned:
		t.Model = cs + " × M/G/1 on S_eff (setup + gap, sim)"
	default:
		t.Model = "M/G/" + cs + " on S_eff (setup + gap, sim)"
	}
	return t
}

// judge sets the experiment's verdict.
func (e *ChainExperiment) judge(in ChainInput) {
	if !e.Predicted.Stable {
		e.Reasons = append(e.Reasons, fmt.Sprintf("the measured utilization %.2f (%.2f on the effective service time) has no steady state", e.Rho, e.RhoEffective))
	}
	if !e.LoadValid {
		e.Reasons = append(e.Reasons, "the load generator judged the run invalid")
	}
	if n := e.Decomposition.Unmatched; n > 0 {
		e.Reasons = append(e.Reasons, fmt.Sprintf("%d measured requests have no server record", n))
	}
	if e.ServerDropped > 0 {
		e.Reasons = append(e.Reasons, fmt.Sprintf("the server's trace was full: %d requests not recorded", e.ServerDropped))
	}
	if n := e.Decomposition.Negative; n > 0 {
		e.Reasons = append(e.Reasons, fmt.Sprintf("%d requests have a negative part (the processes' clocks disagree)", n))
	}
	e.Judged = in.TargetRho <= in.MaxJudgedRho+1e-9
	e.Pass = len(e.Reasons) == 0 && math.Abs(e.Ratio-1) <= in.Tolerance
	switch {
	case !e.Judged:
		e.Verdict = fmt.Sprintf("not judged (ρ > %g)", in.MaxJudgedRho)
	case e.Pass:
		e.Verdict = "validated"
	default:
		e.Verdict = "not validated"
		if len(e.Reasons) == 0 {
			e.Reasons = append(e.Reasons, fmt.Sprintf("mean %.2f× the prediction (accepted: within ±%.0f%%)", e.Ratio, 100*in.Tolerance))
		}
	}
}

// Judge sets v's overall verdict from its experiments.
func (v *Validation) Judge() {
	judged, failed := 0, 0
	v.Reasons = nil
	for _, e := range v.Experiments {
		if !e.Judged {
			continue
		}
		judged++
		if !e.Pass {
			failed++
			for _, r := range e.Reasons {
				v.Reasons = append(v.Reasons, e.Name+": "+r)
			}
		}
	}
	v.Validated = judged > 0 && failed == 0
	switch {
	case judged == 0:
		v.Verdict = "not validated: no experiment was judged"
	case v.Validated:
		v.Verdict = fmt.Sprintf("validated on this machine: %d of %d judged experiments within ±%.0f%% of the %s prediction on the effective service time, on the mean", judged, judged, 100*v.Tolerance, v.queue())
	default:
		v.Verdict = fmt.Sprintf("not validated on this machine: %d of %d judged experiments outside ±%.0f%% of the %s prediction on the effective service time, on the mean", failed, judged, 100*v.Tolerance, v.queue())
	}
}

// queue names the validation's queueing model: M/G/1, M/G/c, c × M/G/1.
func (v *Validation) queue() string {
	c := strconv.Itoa(max(v.Servers, 1))
	switch {
	case v.Servers <= 1:
		return "M/G/1"
	case v.Partitioned:
		return c + " × M/G/1"
	}
	return "M/G/" + c
}

// userStamped counts the records whose receive time is the generator's
// read, not the kernel's timestamp.
func userStamped(gen []loadgen.TraceRecord) int {
	n := 0
	for _, g := range gen {
		if !g.Kernel {
			n++
		}
	}
	return n
}

// ServiceStatsOf describes the service times xs (ns).
func ServiceStatsOf(xs []float64) ServiceStats {
	m := MomentsOf(xs)
	sorted := slices.Sorted(slices.Values(xs))
	return ServiceStats{MeanNs: m.Mean, SCV: m.SCV(), P50Ns: quantileOf(sorted, 0.5), P99Ns: quantileOf(sorted, 0.99)}
}
