package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/plots"
	"concbench/results"
)

// report is everything report.md and report.html show, computed once so
// that the two say the same.
type report struct {
	Run *results.Run
	// Banner warns that the run is mostly invalid (Banner); empty if not.
	Banner     string
	Partial    string // why the run is partial; empty if it finished
	Counts     string // "96 points: 94 measured (1 with an invalid verdict, excluded from every statistic), 1 failed, 1 unavailable"
	Experiment string // the experiment configuration as indented JSON
	Configs    [][]string
	Workload   [][]string
	Provenance [][]string

	Unavailable []item
	// ValidityHead and ValidityRows are the validity table: a row per
	// configuration, a column per load, cells "valid/total" with the main
	// reason of the points that are not valid; ValidityLegend explains
	// the reasons the table shows.
	ValidityHead   []string
	ValidityRows   [][]string
	ValidityLegend []legendItem
	// Failed and Invalid are every failed point and every point with an
	// invalid verdict, with their reasons (shown folded).
	Failed   []item
	Invalid  []item
	Warnings []string // the run's own warnings
	// ServerErrors are the errors the servers counted over the measured
	// windows, per configuration: "threadperconn: refused 120, peer_reset 3".
	ServerErrors []string
	PointWarns   []string // the harness's warnings on points, each once with the number of points
	LoadWarns    string   // how many points carry load-generator warnings
	StatNotes    []string // statistics warnings behind the summary table

	// Winners opens the report: who wins each workload by each metric
	// (winners.go); nil for a run with fewer than two configurations.
	Winners *winnersTable
	// Mechanisms is its companion: the system calls, futex wake calls
	// and cross-CPU wake-ups per request of every configuration, which
	// explain each decided cell (mechanisms.go); nil for a run without
	// mechanisms points.
	Mechanisms *mechanismsTable

	// Answers follow it: per summary metric, the best configuration
	// and every other's factor of it (answers.go); AnswerNote says how
	// to read them.
	Answers    []answer
	AnswerNote string

	Load         string // the chosen load, "0.50 of capacity"
	SummaryHead  []string
	SummaryRows  [][]string
	SummaryNotes []string
	// SummaryLevel states the level of the Summary's intervals once,
	// above the table.
	SummaryLevel string

	// Orders compares Leader/Followers' promotion orders (orders.go);
	// nil unless a workload has two or more of them.
	Orders *ordersSection

	// Claims tests the patterns' claims, workload by workload
	// (claims.go); nil when the run has no LF or HS/HR configuration.
	Claims *claimsTable

	// Balance is each configuration's thread balance (balance.go), Nginx
	// the nginx-style model beside real nginx; nil where the run has no
	// per-thread stats, or no nginx.
	Balance *balanceSection
	Nginx   *nginxSection

	Figures []reportFigure
	Omitted []string

	// Chain is the measurement chain's validation in this run (chain.go).
	Chain *chainSection
}

// item is a point (or configuration) and why it is listed.
type item struct {
	Label   string
	Reasons []string
}

// reportFigure is a figure as the report shows it.
type reportFigure struct {
	Name, Title, Caption string
	Notes                []string
	Files                []string // figures/<name>.<format>, in Options.Formats order
	Image                string   // the file report.md shows: the SVG, else the PNG, else none
	CSV                  string
	SVG                  []byte // for report.html
}

// newReport computes the report of the analysed run a, its figures figs
// (written in formats) and the figures it could not draw (omitted).
func newReport(a *analysis, figs []*plots.Figure, omitted []string, formats []string) *report {
	r := a.Run
	rep := &report{Run: r, Omitted: omitted}
	rep.configuration(a)
	rep.provenance(a)

	v := newValidity(a.Groups)
	rep.Banner = v.banner()
	rep.ValidityHead, rep.ValidityRows, rep.ValidityLegend = v.header(), v.table(), v.legend()

	rep.points(a)
	rep.pointWarnings(a)
	rep.serverErrors(a)
	rep.Warnings = r.Warnings

	rep.summary(a)
	rep.Winners = a.winners()
	rep.Mechanisms = a.mechanisms(rep.Winners)
	rep.answers(a)
	rep.Orders = a.orders()
	rep.Claims = a.claims()
	rep.Balance = a.balance()
	rep.Nginx = a.nginx()
	for _, f := range figs {
		rf := reportFigure{Name: f.Name, Title: f.Title, Caption: f.Caption, Notes: f.Notes, CSV: FiguresDir + "/" + f.Name + ".csv"}
		for _, format := range formats {
			rf.Files = append(rf.Files, FiguresDir+"/"+f.Name+"."+format)
		}
		for _, format := range []string{"png", "svg"} {
			if slices.Contains(formats, format) {
				rf.Image = FiguresDir + "/" + f.Name + "." + format
			}
		}
		rep.Figures = append(rep.Figures, rf)
	}
	return rep
}

// configuration fills what the run measured: whether it is partial, its
// experiment, configurations and workload.
func (rep *report) configuration(a *analysis) {
	r := a.Run
	switch {
	case r.Interrupted:
		rep.Partial = "the run was interrupted; this report covers the points it finished"
	case r.Finished.IsZero():
		rep.Partial = "the run has not finished (it is running, or it stopped without recording why); this report covers the points written so far"
	}
	if b, err := json.MarshalIndent(r.Experiment, "", "  "); err == nil && r.Experiment != nil {
		rep.Experiment = string(b)
	}

	for _, c := range r.Configs {
		threads := "model default"
		if c.Threads > 0 {
			threads = strconv.Itoa(c.Threads)
		}
		if c.Sizing != "" {
			threads += " (" + c.Sizing + ")"
		}
		rep.Configs = append(rep.Configs, []string{c.Name, c.Model, strings.Join(c.Args, " "), threads})
	}
	if len(a.Points) > 0 {
		w := a.Points[0].Workload
		rep.Workload = [][]string{
			{"protocol", w.Protocol}, {"connections", strconv.Itoa(w.Conns)}, {"pipelining depth", strconv.Itoa(w.Depth)},
			{"arrivals (open loop)", w.Arrival}, {"CPU work", w.CPU}, {"blocking work", w.Block}, {"response size", w.Size}, {"operations", w.Ops},
		}
	}
}

// provenance fills where and how the run was measured: the code, the
// machine, the CPUs, the load generator, and the other commits of a
// resumed run's points.
func (rep *report) provenance(a *analysis) {
	r := a.Run
	p := r.Provenance
	commit := p.Commit
	if p.Dirty {
		commit += " (uncommitted changes)"
	}
	rep.Provenance = [][]string{
		{"run", r.ID}, {"profile", r.Profile}, {"commit", commit}, {"Go", p.GoVersion},
		{"OS/arch", p.OS + "/" + p.Arch}, {"kernel", p.Kernel}, {"CPU", fmt.Sprintf("%s × %d", p.CPUModel, p.NumCPU)},
		{"host", p.Hostname}, {"server CPUs", p.ServerCPUs}, {"load generator CPUs", p.LoadCPUs},
		{"server GOMAXPROCS", serverProcs(p.ServerGOMAXPROCS)}, {"load generator GOMAXPROCS", strconv.Itoa(p.LoadGOMAXPROCS)},
		{"started", fmtTime(r.Started)}, {"finished", fmtTime(r.Finished)},
	}
	if p.ServerCPUQuota != "" {
		rep.Provenance = append(rep.Provenance, []string{"server CPU quota", p.ServerCPUQuota + ": capacities are what that much CPU serves; latencies include the quota's throttled stretches"})
	}
	if p.LoadWorkers > 0 {
		workers := plots.Plural(p.LoadWorkers, "worker", "workers")
		if p.LoadWorkerCPUs != "" {
			workers += ", pinned to CPUs " + p.LoadWorkerCPUs + " (one each)"
		}
		rep.Provenance = append(rep.Provenance, []string{"load generator workers", workers})
	}
	for _, c := range r.Ceilings {
		rep.Provenance = append(rep.Provenance, []string{"load generator ceiling (" + c.Protocol + ")", c.Text()})
	}
	if p.NsPerIter > 0 {
		rep.Provenance = append(rep.Provenance, []string{"CPU-work calibration (every server)", fmt.Sprintf("%.4g ns per iteration, measured once by the harness", p.NsPerIter)})
	}
	for _, kt := range p.KernelThreads {
		what := fmt.Sprintf("%s → %s for the run, restored after (%s)", kt.From, kt.To, kt.Why)
		if kt.Err != "" {
			what = fmt.Sprintf("left %s: %s (%s)", kt.From, kt.Err, kt.Why)
		}
		rep.Provenance = append(rep.Provenance, []string{fmt.Sprintf("kernel thread %s (pid %d)", kt.Name, kt.PID), what})
	}
	commits := map[string]bool{}
	for i := range a.Points {
		if c := a.Points[i].Provenance.Commit; c != "" && c != p.Commit {
			commits[c] = true
		}
	}
	if len(commits) > 0 {
		rep.Provenance = append(rep.Provenance, []string{"other commits in points (resumed run)", strings.Join(slices.Sorted(maps.Keys(commits)), ", ")})
	}
}

// points lists the points that were not measured or not valid, and
// counts them.
func (rep *report) points(a *analysis) {
	r := a.Run
	measured, failed, unavailable, invalid := 0, 0, 0, 0
	listed := map[string]bool{}
	for _, u := range r.Unavailable {
		rep.Unavailable = append(rep.Unavailable, item{Label: u.Config.Name, Reasons: []string{u.Reason}})
		listed[u.Config.Name] = true
	}
	for _, g := range a.Groups {
		for _, pt := range g.Points {
			switch {
			case pt.Status == results.StatusUnavailable:
				unavailable++
				if !listed[pt.Config.Name] {
					listed[pt.Config.Name] = true
					rep.Unavailable = append(rep.Unavailable, item{Label: pt.Config.Name, Reasons: []string{pt.Failure}})
				}
			case pt.Status == results.StatusFailed:
				failed++
				rep.Failed = append(rep.Failed, item{Label: pt.Label(), Reasons: []string{orNone(pt.Failure)}})
			case pt.Status == results.StatusOK:
				measured++
				if pt.Invalid() {
					invalid++
					rep.Invalid = append(rep.Invalid, item{Label: pt.Label(), Reasons: checkedReasons(pt)})
				}
			default:
				failed++
				rep.Failed = append(rep.Failed, item{Label: pt.Label(), Reasons: []string{fmt.Sprintf("unknown status %q: %s", pt.Status, orNone(pt.Failure))}})
			}
		}
	}
	rep.Counts = fmt.Sprintf("%d points: %d measured (%d with an invalid verdict, excluded from every statistic), %d failed, %d unavailable",
		len(a.Points), measured, invalid, failed, unavailable)
}

// pointWarnings lists the harness's warnings on points, each once, and
// counts the points with load-generator warnings.
func (rep *report) pointWarnings(a *analysis) {
	// Warnings that differ only in their numbers ("the window has only 3828
	// requests …") are one warning: list it once, with its count and one
	// example, not once per point.
	type warnGroup struct {
		example string
		count   int
		varies  bool // the group's warnings differ in their numbers
	}
	warnGroups := map[string]*warnGroup{}
	loadWarned := 0
	for i := range a.Points {
		for _, w := range a.Points[i].Warnings {
			key := digits.ReplaceAllString(w, "#")
			if g := warnGroups[key]; g != nil {
				g.count++
				g.varies = g.varies || w != g.example
			} else {
				warnGroups[key] = &warnGroup{example: w, count: 1}
			}
		}
		if l := a.Points[i].Load; l != nil && len(l.Warnings) > 0 {
			loadWarned++
		}
	}
	for _, key := range slices.Sorted(maps.Keys(warnGroups)) {
		g := warnGroups[key]
		switch {
		case g.count == 1:
			rep.PointWarns = append(rep.PointWarns, fmt.Sprintf("%s (1 point)", g.example))
		case g.varies:
			rep.PointWarns = append(rep.PointWarns, fmt.Sprintf("%s (%d points; the numbers are one point's example)", g.example, g.count))
		default:
			rep.PointWarns = append(rep.PointWarns, fmt.Sprintf("%s (%d points)", g.example, g.count))
		}
	}
	if loadWarned > 0 {
		rep.LoadWarns = fmt.Sprintf("%d point(s) carry load-generator warnings (not invalidating; see the warnings column of %s).", loadWarned, PointsCSV)
	}
}

// serverErrors lists, per configuration, the errors its servers counted
// over the measured windows.
func (rep *report) serverErrors(a *analysis) {
	for _, cfg := range a.Configs {
		sums := map[string]uint64{}
		for i := range a.Points {
			if p := &a.Points[i]; p.Config.Name == cfg.Name && p.Measured() {
				for k, n := range p.Server.Errors {
					sums[k] += n
				}
			}
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(sums)) {
			if sums[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, sums[k]))
			}
		}
		if len(parts) > 0 {
			rep.ServerErrors = append(rep.ServerErrors, fmt.Sprintf("%s: %s", cfg.Name, strings.Join(parts, ", ")))
		}
	}
}

// checkedReasons returns the reasons of p's invalid verdict, each
// prefixed with its check's code when the verdict names them:
// "[rate] achieved 40219 req/s is below …".
func checkedReasons(p *results.Point) []string {
	l := p.Load
	if len(l.Reasons) == 0 {
		return []string{fmt.Sprintf("[%s] (no reason recorded)", p.MainCheck())}
	}
	out := make([]string, len(l.Reasons))
	for i, r := range l.Reasons {
		out[i] = r
		if len(l.Checks) == len(l.Reasons) {
			out[i] = fmt.Sprintf("[%s] %s", l.Checks[i], r)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(no reason recorded)"
	}
	return s
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339)
}

// summary fills the summary table: per configuration, capacity, the
// capacity at its workload's latency objective (if the run searched for
// it), p99 at
// the fractions closest to 0.5 and 0.9, and the per-request costs at the
// chosen load, medians of the valid repetitions with their confidence
// intervals, and how many invalid repetitions each left out.
func (rep *report) summary(a *analysis) {
	f50, ok50 := results.NearestFraction(a.Groups, 0.5)
	f90, ok90 := results.NearestFraction(a.Groups, 0.9)
	if a.HasLoad {
		rep.Load = a.LoadText()
	}
	rep.SummaryHead = []string{"configuration", "capacity (req/s)"}
	hasSLO := slices.ContainsFunc(a.Groups, func(g *results.Group) bool { return g.Kind == results.KindSLO })
	if hasSLO {
		rep.SummaryHead = append(rep.SummaryHead, "SLO capacity (req/s)")
	}
	if ok50 {
		rep.SummaryHead = append(rep.SummaryHead, fmt.Sprintf("p99 at %.2f", f50))
	}
	if ok90 {
		rep.SummaryHead = append(rep.SummaryHead, fmt.Sprintf("p99 at %.2f", f90))
	}
	intervals := false
	if a.Equal {
		// A suite run has no fractions of capacity: its p99 is the
		// who-wins table's, at the equal load; beside it, where the run
		// measured it, the median of its 100 ms intervals' p99s.
		rep.SummaryHead = append(rep.SummaryHead, "p99 at equal load")
		intervals = slices.ContainsFunc(a.Points, func(p results.Point) bool {
			_, ok := results.LatencyP99Intervals.Value(&p)
			return ok
		})
		if intervals {
			rep.SummaryHead = append(rep.SummaryHead, "p99 of 100 ms intervals (median) at equal load")
		}
	}
	costs := []struct {
		m    results.Metric
		head string
	}{{results.CtxswPerReq, "ctxsw/req"}, {results.CPUPerReq, "CPU µs/req"}, {results.AllocsPerReq, "allocs/req"}}
	if a.HasLoad {
		for _, c := range costs {
			rep.SummaryHead = append(rep.SummaryHead, fmt.Sprintf("%s at %s", c.head, a.LoadShort()))
		}
	}
	warned := map[string][]string{}
	excludedSeen := false
	ranges := map[int]bool{} // the sizes of the ranges printed
	withCI := false
	cell := func(g *results.Group, m results.Metric, what string) string {
		if g == nil {
			return "no point"
		}
		agg := g.Aggregate(m)
		if agg.Excluded > 0 {
			excludedSeen = true
		}
		if agg.Stats.N == 0 && agg.Excluded > 0 {
			return fmt.Sprintf("no valid repetition (%d invalid excluded)", agg.Excluded)
		}
		s := plots.FormatStatLevel(agg.Stats, m.Unit, false)
		switch n := agg.Stats.N; {
		case agg.Stats.HasCI():
			withCI = true
		case n >= 3:
			ranges[n] = true
		}
		for _, w := range agg.Stats.Warnings {
			warned[w] = append(warned[w], what)
		}
		if agg.Excluded > 0 {
			s += fmt.Sprintf(" (%d invalid excluded)", agg.Excluded)
		}
		if agg.Skipped > 0 && agg.Stats.N > 0 {
			s += fmt.Sprintf(" (%d skipped)", agg.Skipped)
		}
		return s
	}
	for _, cfg := range a.Configs {
		row := []string{cfg.Name, cell(a.Capacity(cfg.Name), results.Capacity, cfg.Name+" capacity")}
		if hasSLO {
			g := results.Find(a.Groups, cfg.Name, results.KindSLO, 0)
			if g == nil {
				row = append(row, "no search (no objective)")
			} else {
				row = append(row, cell(g, results.SLOCapacity, cfg.Name+" SLO capacity"))
			}
		}
		if ok50 {
			row = append(row, cell(results.Find(a.Groups, cfg.Name, results.KindOpen, f50), results.LatencyP99, fmt.Sprintf("%s p99 at %.2f", cfg.Name, f50)))
		}
		if ok90 {
			row = append(row, cell(results.Find(a.Groups, cfg.Name, results.KindOpen, f90), results.LatencyP99, fmt.Sprintf("%s p99 at %.2f", cfg.Name, f90)))
		}
		if a.Equal {
			row = append(row, cell(a.AtLoad(cfg.Name), results.LatencyP99, cfg.Name+" p99 at equal load"))
			if intervals {
				row = append(row, cell(a.AtLoad(cfg.Name), results.LatencyP99Intervals, cfg.Name+" p99 of 100 ms intervals at equal load"))
			}
		}
		if a.HasLoad {
			for _, c := range costs {
				row = append(row, cell(a.AtLoad(cfg.Name), c.m, fmt.Sprintf("%s %s at %s", cfg.Name, c.head, a.LoadShort())))
			}
		}
		rep.SummaryRows = append(rep.SummaryRows, row)
	}
	var levels []string
	for _, n := range slices.Sorted(maps.Keys(ranges)) {
		levels = append(levels, fmt.Sprintf("%s for %d repetitions", plots.RangeLevel(n), n))
	}
	switch {
	case len(levels) > 0 && withCI:
		rep.SummaryLevel = fmt.Sprintf("Medians across the valid repetitions, in brackets their 95%% confidence interval (6 or more repetitions) or, with 3 to 5, their range, which holds the median with %s.", plots.JoinAnd(levels))
	case len(levels) > 0:
		rep.SummaryLevel = fmt.Sprintf("Medians across the valid repetitions, in brackets their range, which holds the median with %s (too few repetitions for a 95%% interval).", plots.JoinAnd(levels))
	default:
		rep.SummaryLevel = "Medians across the valid repetitions, in brackets their 95% confidence interval."
	}
	rep.SummaryNotes = append(rep.SummaryNotes,
		"The intervals are order statistics (stats.MedianCI): with 6 or more repetitions the median's 95% confidence interval; "+
			"with 3 to 5, too few for it, the range (at the level stated above the table); \"no CI\" below 3.")
	if excludedSeen {
		rep.SummaryNotes = append(rep.SummaryNotes, "\"(k invalid excluded)\": k repetitions were measured but their load-generator verdict is invalid, so they are in no median, interval or test (see Validity).")
	}
	for _, w := range slices.Sorted(maps.Keys(warned)) {
		cells := warned[w]
		if len(cells) > maxListedCells {
			rep.StatNotes = append(rep.StatNotes, fmt.Sprintf("%s: %d cells, e.g. %s", w, len(cells), strings.Join(cells[:maxListedCells], "; ")))
			continue
		}
		rep.StatNotes = append(rep.StatNotes, fmt.Sprintf("%s: %s", w, strings.Join(cells, "; ")))
	}
}

// maxListedCells is how many summary cells a statistics warning names
// before it only counts them.
const maxListedCells = 4

// digits matches the numbers in a warning, to group warnings by shape.
var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// serverProcs describes the server's GOMAXPROCS: one value for the run, or
// (0) one per configuration, as the experiment table's arguments show.
func serverProcs(n int) string {
	if n == 0 {
		return "per configuration (--gomaxprocs in the experiment table; each point records its own)"
	}
	return strconv.Itoa(n)
}
