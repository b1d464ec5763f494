package loadgen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Part is one generator's share of a run that several generators made
// together (the agents of package loadgen/agent): its Result and the
// label its reasons and warnings are prefixed with in the merged one.
type Part struct {
	Label  string
	Result *Result
}

// Merge combines the Results of generators that drove one server at the
// same time, each with its share of the connections and the rate, into
// one Result: every histogram is merged exactly (HDR counts added, so
// the merged percentiles are those of all the requests together, never
// an average of percentiles), request and error counts and rates are
// summed, the generators' CPU and context switches summed and their
// busy, run-queue and steal fractions the largest of any, and the lag
// shares recomputed from the merged histograms. cfg is the whole run's
// configuration (all connections, the total rate); window and warm-up
// are cfg's.
//
// The verdict is invalid if any part's is, with each part's reasons
// prefixed by its label, and for the failures given (the coordinator's
// own findings: a lost agent, a clock offset too uncertain), which count
// as CheckAborted unless they name another check. Trend and SendProcess
// are per generator and not merged (each part's verdict judged its own);
// Timing is the part's with the largest send-call p99, the worst view.
// The parts' histograms must share one geometry (cfg's); a part whose
// histogram does not decode is an error.
func Merge(cfg Config, parts []Part, failures ...Failure) (*Result, error) {
	cfg = cfg.WithDefaults()
	r := &Result{
		Mode:           cfg.Mode(),
		Config:         cfg,
		WarmupNs:       int64(cfg.Warmup),
		WindowNs:       int64(cfg.Duration),
		Errors:         map[string]int64{},
		TargetRatePerS: cfg.TargetRate(),
		Histogram: HistogramParams{
			LowestNs:          int64(cfg.HistLowest),
			HighestNs:         int64(cfg.HistHighest),
			SignificantDigits: cfg.HistDigits,
		},
		Reasons:  []string{},
		Checks:   []Check{},
		Warnings: []string{},
	}
	hs := mergedHists(r, &cfg)
	g := &r.Generator
	worstSend := int64(-1)
	var cpus []string
	start := time.Time{}
	for _, p := range parts {
		pr := p.Result
		if pr == nil {
			return nil, fmt.Errorf("loadgen: merge: part %s has no result", p.Label)
		}
		for _, h := range hs {
			if err := h.add(p.Label, pr, &cfg); err != nil {
				return nil, err
			}
		}
		r.Requests.add(&pr.Requests)
		if pr.Ledger != nil {
			if r.Ledger == nil {
				r.Ledger = &Ledger{}
			}
			r.Ledger.add(pr.Ledger)
		}
		for k, n := range pr.Errors {
			r.Errors[k] += n
		}
		r.ScheduledRatePerS += pr.ScheduledRatePerS
		r.SentRatePerS += pr.SentRatePerS
		r.AchievedRatePerS += pr.AchievedRatePerS
		if start.IsZero() || pr.StartTime.Before(start) {
			start = pr.StartTime
		}
		g.add(&pr.Generator, p.Label)
		cpus = append(cpus, p.Label+": "+pr.Generator.CPUs)
		if pr.Timing.SendCall.P99Ns > worstSend {
			worstSend = pr.Timing.SendCall.P99Ns
			rx := r.Timing.ReceiveLag
			r.Timing = pr.Timing
			r.Timing.ReceiveLag = rx
		}
	}
	var kernel, user int64
	for _, p := range parts {
		kernel += p.Result.Timing.KernelStamped
		user += p.Result.Timing.UserStamped
	}
	r.Timing.KernelStamped, r.Timing.UserStamped = kernel, user
	g.CPUs = strings.Join(cpus, "; ")
	if r.Requests.Sent > 0 {
		g.CPUNsPerRequest = float64(g.WorkerUserNs+g.WorkerSystemNs) / float64(r.Requests.Sent)
	}
	r.StartTime = start
	for _, h := range hs {
		*h.dst = Summarize(h.h, h.oor)
	}
	r.SendProcess.Note = "checked per generator, each in its own verdict: the superposed sends are not one sender's"
	if !cfg.Closed {
		r.LagShares = lagShares(&cfg, &recorder{h: hs[0].h}, &recorder{h: hs[5].h}) // Latency, WithoutOwnLag
		for i := range r.LagShares {
			s := &r.LagShares[i]
			s.Exceeded = s.Judged && s.LatencyNs-s.WithoutLagNs > s.BoundNs
		}
	} else {
		r.FromIntended, r.WithoutOwnLag = Summary{}, Summary{}
	}
	mergeVerdicts(r, parts, failures)
	return r, nil
}

// mergedHist is one histogram of a merged Result: where its summary
// goes (dst), where a part's summary is (get), and the parts' histograms
// merged so far with their values out of range.
type mergedHist struct {
	dst *Summary
	get func(*Result) *Summary
	h   *hdr.Histogram
	oor int64
}

// mergedHists returns the histograms of r that Merge merges, empty, of
// cfg's geometry: the latencies and lags, Latency first and
// WithoutOwnLag sixth.
func mergedHists(r *Result, cfg *Config) []*mergedHist {
	hs := []*mergedHist{
		{dst: &r.Latency, get: func(p *Result) *Summary { return &p.Latency }},
		{dst: &r.Uncorrected, get: func(p *Result) *Summary { return &p.Uncorrected }},
		{dst: &r.SendLag, get: func(p *Result) *Summary { return &p.SendLag }},
		{dst: &r.HeldLag, get: func(p *Result) *Summary { return &p.HeldLag }},
		{dst: &r.FromIntended, get: func(p *Result) *Summary { return &p.FromIntended }},
		{dst: &r.WithoutOwnLag, get: func(p *Result) *Summary { return &p.WithoutOwnLag }},
		{dst: &r.Timing.ReceiveLag, get: func(p *Result) *Summary { return &p.Timing.ReceiveLag }},
	}
	for _, h := range hs {
		h.h = newHistogram(cfg)
	}
	return hs
}

// add merges the histogram of part pr, labelled label, into h. A
// histogram that does not decode, is missing, or has values beyond cfg's
// range is an error.
func (h *mergedHist) add(label string, pr *Result, cfg *Config) error {
	s := h.get(pr)
	if s.Histogram == "" {
		if s.Count > 0 {
			return fmt.Errorf("loadgen: merge: part %s: a summary of %d values has no histogram", label, s.Count)
		}
		return nil
	}
	ph, err := DecodeHistogram(s.Histogram)
	if err != nil {
		return fmt.Errorf("loadgen: merge: part %s: %w", label, err)
	}
	if dropped := h.h.Merge(ph); dropped > 0 {
		return fmt.Errorf("loadgen: merge: part %s: %d values beyond the merged histogram's range %v..%v (the parts' histograms must share one range)",
			label, dropped, cfg.HistLowest, cfg.HistHighest)
	}
	h.oor += s.OutOfRange
	return nil
}

// add adds the counts c to q.
func (q *Counts) add(c *Counts) {
	q.Scheduled += c.Scheduled
	q.Sent += c.Sent
	q.Completed += c.Completed
	q.InWindow += c.InWindow
	q.OK += c.OK
	q.Failed += c.Failed
	q.Held += c.Held
	q.Unsent += c.Unsent
	q.Resent += c.Resent
	q.Reconnects += c.Reconnects
	q.ServerCloses += c.ServerCloses
	q.ClampedDraws += c.ClampedDraws
	q.Warmup += c.Warmup
	q.WarmupErrors += c.WarmupErrors
	q.Kills += c.Kills
	q.Abandoned += c.Abandoned
	q.Refused += c.Refused
}

// add adds the ledger flow o of another generator to l.
func (l *Ledger) add(o *Ledger) {
	l.Amount = o.Amount
	l.Deposits += o.Deposits
	l.Withdrawals += o.Withdrawals
	l.Refused += o.Refused
	l.Unknown += o.Unknown
	l.Totals += o.Totals
}

// add adds the costs of generator pg, labelled label, to g: its CPU,
// context switches, steal and GC summed, its fractions the largest of
// any. CPUs and CPUNsPerRequest are left to Merge.
func (g *Generator) add(pg *Generator, label string) {
	g.Workers += pg.Workers
	g.WorkerUserNs += pg.WorkerUserNs
	g.WorkerSystemNs += pg.WorkerSystemNs
	g.ProcessCPUNs += pg.ProcessCPUNs
	g.WorkerRunQueueNs += pg.WorkerRunQueueNs
	g.WorkerVoluntaryCtxsw += pg.WorkerVoluntaryCtxsw
	g.WorkerInvoluntaryCtxsw += pg.WorkerInvoluntaryCtxsw
	g.StealNs += pg.StealNs
	g.GCPauseNs += pg.GCPauseNs
	g.GCCycles += pg.GCCycles
	g.BusyFraction = max(g.BusyFraction, pg.BusyFraction)
	g.RunQueueFraction = max(g.RunQueueFraction, pg.RunQueueFraction)
	g.StealFraction = max(g.StealFraction, pg.StealFraction)
	g.GOMAXPROCS = max(g.GOMAXPROCS, pg.GOMAXPROCS)
	if pg.StealUnavailable != "" {
		g.StealUnavailable = label + ": " + pg.StealUnavailable
	}
	g.AllocsPerRequest = max(g.AllocsPerRequest, pg.AllocsPerRequest)
}

// mergeVerdicts sets r's verdict from the parts' and the failures: every
// part's reasons and warnings prefixed with its label, then the
// failures (CheckAborted unless they name a check), the main reason
// first, as judge orders them.
func mergeVerdicts(r *Result, parts []Part, failures []Failure) {
	for _, p := range parts {
		pr := p.Result
		for i, reason := range pr.Reasons {
			ch := CheckAborted
			if i < len(pr.Checks) {
				ch = pr.Checks[i]
			}
			r.Reasons = append(r.Reasons, p.Label+": "+reason)
			r.Checks = append(r.Checks, ch)
		}
		r.OverCapacity = r.OverCapacity || pr.OverCapacity
		for _, w := range pr.Warnings {
			r.Warnings = append(r.Warnings, p.Label+": "+w)
		}
	}
	if len(parts) == 0 {
		failures = append(failures, Failure{Check: CheckNoResponses, Text: "no generator's result to merge"})
	}
	for _, f := range failures {
		ch := f.Check
		if ch == "" {
			ch = CheckAborted
		}
		r.Reasons = append(r.Reasons, f.Text)
		r.Checks = append(r.Checks, ch)
	}
	idx := make([]int, len(r.Checks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return checkOrder(r.Checks[a]) - checkOrder(r.Checks[b]) })
	reasons, checks := make([]string, len(idx)), make([]Check, len(idx))
	for i, j := range idx {
		reasons[i], checks[i] = r.Reasons[j], r.Checks[j]
	}
	r.Reasons, r.Checks = reasons, checks
	r.Valid = len(r.Reasons) == 0
}

// Failure is a reason a merged run is invalid that none of its parts
// reported: Check is its code (CheckAborted if empty), Text the sentence.
type Failure struct {
	Check Check
	Text  string
}
