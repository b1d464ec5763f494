package loadgen

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the human summary of r: the mode label, target against
// achieved rate, the percentile table (corrected and uncorrected side by
// side in open loop), requests and errors, send lag, the generator's own
// cost, and the verdict — an invalid run loudly, with its reasons.
func (r *Result) WriteText(w io.Writer) error {
	var t textOut
	r.textHeader(&t)
	r.textLatency(&t)
	r.textRequests(&t)
	r.textGenerator(&t)
	r.textVerdict(&t)
	_, err := io.WriteString(w, t.String())
	return err
}

// textOut is a text summary being written.
type textOut struct{ strings.Builder }

// p writes to t as fmt.Printf does.
func (t *textOut) p(format string, args ...any) { fmt.Fprintf(&t.Builder, format, args...) }

// textHeader writes the summary's head: the mode, the configuration
// and the rates.
func (r *Result) textHeader(t *textOut) {
	c := &r.Config
	t.p("concbench load: %s, %s, %s\n", r.Mode, c.Protocol, c.Addr)
	t.p("  %d connections, %d worker(s), depth %d", c.Conns, c.Workers, c.Depth)
	if !c.Closed {
		t.p(", at most %d in flight per connection", c.MaxInFlight)
	}
	t.p("\n  warm-up %s, window %s, verify %s, seed %d\n", FormatNs(r.WarmupNs), FormatNs(r.WindowNs), c.Verify, c.Seed)
	if c.Closed {
		t.p("rate: achieved %.0f req/s (closed loop: the server sets the rate)\n", r.AchievedRatePerS)
	} else {
		t.p("rate: target %.0f req/s, scheduled %.0f, sent %.0f, achieved %.0f\n",
			r.TargetRatePerS, r.ScheduledRatePerS, r.SentRatePerS, r.AchievedRatePerS)
	}
}

// textLatency writes the latency percentiles: corrected, uncorrected
// and from the intended time side by side in open loop, and by priority
// class.
func (r *Result) textLatency(t *textOut) {
	c := &r.Config
	rows := []struct {
		name string
		get  func(*Summary) string
	}{
		{"p50", func(s *Summary) string { return FormatNs(s.P50Ns) }},
		{"p90", func(s *Summary) string { return FormatNs(s.P90Ns) }},
		{"p99", func(s *Summary) string { return FormatNs(s.P99Ns) }},
		{"p99.9", func(s *Summary) string { return FormatNs(s.P999Ns) }},
		{"p99.99", func(s *Summary) string { return FormatNs(s.P9999Ns) }},
		{"max", func(s *Summary) string { return FormatNs(s.MaxNs) }},
		{"mean", func(s *Summary) string { return FormatNs(int64(s.MeanNs)) }},
		{"count", func(s *Summary) string { return fmt.Sprint(s.Count) }},
	}
	t.p("\n")
	if c.Closed {
		t.p("latency (closed loop: from the actual send; coordinated omission cannot be corrected)\n")
		for _, row := range rows {
			t.p("  %-8s %12s\n", row.name, row.get(&r.Latency))
		}
	} else {
		t.p("latency   %12s %12s %14s\n", "corrected", "uncorrected", "from intended")
		for _, row := range rows {
			t.p("  %-8s %12s %12s %14s\n", row.name, row.get(&r.Latency), row.get(&r.Uncorrected), row.get(&r.FromIntended))
		}
		t.p("  (corrected: from the intended send time, but from the actual send for a request the generator sent late\n" +
			"   while none of its requests was in flight; uncorrected: from the actual send; from intended: from the\n" +
			"   intended send time always, the generator's own lateness included, as wrk2)\n")
	}
	if len(r.Classes) > 0 {
		t.p("latency by priority class (as the first column above)\n")
		for _, cl := range r.Classes {
			t.p("  %-14s p50 %10s  p99 %10s  p99.9 %10s  count %d\n", cl.Name(),
				FormatNs(cl.Latency.P50Ns), FormatNs(cl.Latency.P99Ns), FormatNs(cl.Latency.P999Ns), cl.Latency.Count)
		}
	}
}

// textRequests writes the request counts and errors and, in open loop,
// the send lag, the generator's share of each percentile and the send
// process.
func (r *Result) textRequests(t *textOut) {
	c := &r.Config
	q := &r.Requests
	if c.Closed {
		t.p("\nrequests: %d sent, %d completed, %d ok, %d failed, %d resent\n",
			q.Sent, q.Completed, q.OK, q.Failed, q.Resent)
	} else {
		t.p("\nrequests: %d scheduled, %d sent, %d completed, %d ok, %d failed, %d held, %d unsent, %d resent\n",
			q.Scheduled, q.Sent, q.Completed, q.OK, q.Failed, q.Held, q.Unsent, q.Resent)
	}
	t.p("  warm-up: %d responses, %d failures; connections: %d reconnects, %d server closes\n",
		q.Warmup, q.WarmupErrors, q.Reconnects, q.ServerCloses)
	if q.Refused > 0 {
		t.p("  refused at the server's limit: %d connections (each reopened after a backoff, its requests resent)\n", q.Refused)
	}
	if q.Kills > 0 {
		t.p("  killed on purpose: %d connections (each reopened), %d requests abandoned in flight\n", q.Kills, q.Abandoned)
	}
	if l := r.Ledger; l != nil {
		t.p("ledger: %d deposits and %d withdrawals acknowledged (money %+d), %d refused, %d of unknown outcome; %d totals checked\n",
			l.Deposits, l.Withdrawals, l.Delta(), l.Refused, l.Unknown, l.Totals)
	}
	if len(r.Errors) == 0 {
		t.p("errors: none\n")
	} else {
		var parts []string
		for _, k := range sortedKeys(r.Errors) {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.Errors[k]))
		}
		t.p("errors: %s\n", strings.Join(parts, ", "))
	}
	if !c.Closed {
		s := &r.SendLag
		t.p("send lag: p50 %s, p99 %s, p99.9 %s, max %s over %d requests; held lag p99 %s over %d\n",
			FormatNs(s.P50Ns), FormatNs(s.P99Ns), FormatNs(s.P999Ns), FormatNs(s.MaxNs), s.Count,
			FormatNs(r.HeldLag.P99Ns), r.HeldLag.Count)
		if len(r.LagShares) > 0 {
			var parts []string
			for _, ls := range r.LagShares {
				mark := ""
				if !ls.Judged {
					mark = " (not judged)"
				}
				parts = append(parts, fmt.Sprintf("p%s %.1f%%%s", fmtPercentile(ls.Percentile), 100*ls.Share, mark))
			}
			t.p("  the generator's own lateness in each corrected percentile (at most %.0f%%): %s\n", 100*c.Limits.withDefaults().MaxLagShare, strings.Join(parts, ", "))
		}
		if sp := &r.SendProcess; sp.Applicable {
			t.p("  send process (%d gaps): KS vs exponential D %.3f p %.2g (schedule: p %.2g); lag-1 ρ %.3f (schedule: %.3f)\n",
				sp.Gaps, sp.KSD, sp.KSP, sp.PlannedKSP, sp.Lag1Rho, sp.PlannedLag1Rho)
		} else if sp.Note != "" {
			t.p("  send process: %s\n", sp.Note)
		}
	}
}

// textGenerator writes the generator's own costs and timing, and the
// interval log.
func (r *Result) textGenerator(t *textOut) {
	g := &r.Generator
	t.p("generator: worker CPU %s (user %s, system %s), %s per request, busy %.0f%%; process CPU %s\n",
		FormatNs(g.WorkerUserNs+g.WorkerSystemNs), FormatNs(g.WorkerUserNs), FormatNs(g.WorkerSystemNs),
		FormatNs(int64(g.CPUNsPerRequest)), 100*g.BusyFraction, FormatNs(g.ProcessCPUNs))
	t.p("  waited for a CPU %s (%.1f%%); context switches %d voluntary, %d involuntary; steal %s\n",
		FormatNs(g.WorkerRunQueueNs), 100*g.RunQueueFraction, g.WorkerVoluntaryCtxsw, g.WorkerInvoluntaryCtxsw, stealText(g))
	t.p("  GC: %d cycles, %s paused; %.3f allocs per request; GOMAXPROCS %d, CPUs %s\n",
		g.GCCycles, FormatNs(g.GCPauseNs), g.AllocsPerRequest, g.GOMAXPROCS, g.CPUs)
	tm := &r.Timing
	pl := tm.ProbeWakeLateness
	t.p("timing: %s polling; timed waits wake late by p50 %s, p99 %s, max %s (%d probes)", tm.Poll,
		FormatNs(pl.P50Ns), FormatNs(pl.P99Ns), FormatNs(pl.MaxNs), pl.Count)
	if tm.Poll == PollSleep {
		t.p("; spin margin %s; during the run p99 %s over %d waits", FormatNs(tm.SpinNs), FormatNs(tm.RunWakeLateness.P99Ns), tm.RunWakeLateness.Count)
	} else {
		t.p("; machine stalls %.1f%% of the window (longest %s)", 100*tm.StalledFraction, FormatNs(tm.IdleIterations.MaxNs))
	}
	t.p("\n  a send call took p50 %s, p99 %s, max %s; receive timestamps: %s (%d kernel, %d user); reads lagged the kernel by p99 %s\n",
		FormatNs(tm.SendCall.P50Ns), FormatNs(tm.SendCall.P99Ns), FormatNs(tm.SendCall.MaxNs),
		tm.ReceiveTimestamps, tm.KernelStamped, tm.UserStamped, FormatNs(tm.ReceiveLag.P99Ns))
	if r.Hlog != "" {
		t.p("interval histograms: %s\n", r.Hlog)
	}
}

// textVerdict writes the verdict, an invalid one loudly with its
// reasons, and the warnings.
func (r *Result) textVerdict(t *textOut) {
	t.p("\n")
	if r.Valid {
		t.p("VERDICT: valid\n")
	} else {
		bar := strings.Repeat("*", 72)
		t.p("%s\n*** VERDICT: INVALID RUN - these numbers cannot be trusted:\n", bar)
		for _, reason := range r.Reasons {
			t.p("***   - %s\n", reason)
		}
		t.p("%s\n", bar)
	}
	if len(r.Warnings) > 0 {
		t.p("warnings:\n")
		for _, s := range r.Warnings {
			t.p("  - %s\n", s)
		}
	}
}

// stealText describes the generator's steal time.
func stealText(g *Generator) string {
	if g.StealUnavailable != "" {
		return "unknown (" + g.StealUnavailable + ")"
	}
	return fmt.Sprintf("%s (%.1f%%)", FormatNs(g.StealNs), 100*g.StealFraction)
}

// String returns a one-line summary: mode, achieved rate, p99 and verdict.
func (r *Result) String() string {
	v := "valid"
	switch {
	case r.OverCapacity:
		v = "INVALID (over capacity)"
	case !r.Valid:
		v = "INVALID"
	}
	return fmt.Sprintf("%s: %.0f req/s, p99 %s, %s", r.Mode, r.AchievedRatePerS, FormatNs(r.Latency.P99Ns), v)
}

var _ fmt.Stringer = (*Result)(nil)
