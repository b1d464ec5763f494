package report

import (
	"fmt"
	"math"
	"strings"

	"concbench/plots"
	"concbench/results"
	"concbench/stats"
)

// Model names the nginx comparison pairs; they must match the harness's
// NginxModel and AcceptMutexModel.
const (
	modelNginx       = "nginx"
	modelAcceptMutex = "acceptmutex"
)

// BalanceTolerance is how far apart, relatively, the nginx-style model's
// and real nginx's connections per worker (max ÷ mean) may be for the
// report to call their connection balance the same: the check that the
// model is faithful.
const BalanceTolerance = 0.10

// balanceMetrics are the columns of a balance table.
var balanceMetrics = []struct {
	m    results.Metric
	head string
}{
	{results.BalanceThreads, "threads"},
	{results.ConnsMaxMean, "connections per thread, max ÷ mean"},
	{results.RequestsMaxMean, "requests per thread, max ÷ mean"},
	{results.BusiestShare, "busiest thread's share of requests (%)"},
}

// balanceSection is the report's "Connection balance" section: per
// workload, each configuration's thread balance at the chosen load (at
// capacity in a run without one).
type balanceSection struct {
	Load   string
	Tables []reportTable
	Notes  []string
}

// reportTable is one titled table of a report section.
type reportTable struct {
	Name string // the workload ("" in a run of one)
	Head []string
	Rows [][]string
}

// balanceGroup returns the group a configuration's balance is read from:
// the chosen load's, else capacity's; nil if it has neither.
func (a *analysis) balanceGroup(name string) *results.Group {
	if g := a.AtLoad(name); g != nil {
		return g
	}
	return a.Capacity(name)
}

// balanceLoad names where balanceGroup reads.
func (a *analysis) balanceLoad() string {
	if a.HasLoad {
		return a.LoadText()
	}
	return "capacity"
}

// workloadOf returns the workload name of a configuration's points.
func workloadOf(g *results.Group) string {
	if len(g.Points) == 0 {
		return ""
	}
	return g.Points[0].WorkloadName
}

// balance computes the section, or nil when no configuration of the run
// has per-thread stats.
func (a *analysis) balance() *balanceSection {
	s := &balanceSection{Load: a.balanceLoad()}
	tables := map[string]int{}
	for _, cfg := range a.Configs {
		g := a.balanceGroup(cfg.Name)
		if g == nil || g.Aggregate(results.BalanceThreads).Stats.N == 0 {
			continue
		}
		w := workloadOf(g)
		i, ok := tables[w]
		if !ok {
			i = len(s.Tables)
			tables[w] = i
			head := []string{"configuration", "n"}
			for _, bm := range balanceMetrics {
				head = append(head, bm.head)
			}
			s.Tables = append(s.Tables, reportTable{Name: w, Head: head})
		}
		row := []string{cfg.Name, fmt.Sprint(len(plots.Trusted(g)))}
		for _, bm := range balanceMetrics {
			row = append(row, balanceCell(g, bm.m))
		}
		s.Tables[i].Rows = append(s.Tables[i].Rows, row)
	}
	if len(s.Tables) == 0 {
		return nil
	}
	s.Notes = []string{
		"Each thread's connections are those it accepted from before the load connected to the window's end (nginx: those each worker holds at the window's end), its requests those it served in the window; only the threads of the role that serves requests count (a reactor beside a worker pool serves none by design), idle ones included. max ÷ mean is 1 when the threads share evenly and the thread count when one has everything. Each cell: the median over the valid repetitions with its 95% confidence interval, or, with fewer than 6, their range; \"—\" where the model does not report it (connections per thread: the models whose threads own the connections they accept, and nginx).",
	}
	return s
}

// balanceCell formats a balance metric of g's trusted repetitions, "—"
// where none has it.
func balanceCell(g *results.Group, m results.Metric) string {
	st := g.Aggregate(m).Stats
	if st.N == 0 {
		return "—"
	}
	return fmtBand(st, m.Unit)
}

// Markdown renders the section.
func (s *balanceSection) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "How evenly each configuration's connections and requests spread over the threads that serve them, at %s.\n", s.Load)
	for _, t := range s.Tables {
		if t.Name != "" {
			fmt.Fprintf(&b, "\n### %s\n", t.Name)
		}
		b.WriteString("\n")
		mdTable(&b, t.Head, t.Rows)
	}
	for _, n := range s.Notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}

// nginxSection is the report's "nginx beside its model" section: per
// accept mode and workload, the nginx-style model and real nginx side by
// side — capacity, p99, CPU per request and connection balance at the
// chosen load — and whether their connection balance agrees within
// BalanceTolerance.
type nginxSection struct {
	Load     string
	Head     []string
	Rows     [][]string
	Verdicts []string
	Notes    []string
}

// acceptMode returns the --accept value of a configuration's arguments
// ("" without one).
func acceptMode(args []string) string {
	for i, a := range args {
		switch {
		case a == "--accept" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--accept="):
			return strings.TrimPrefix(a, "--accept=")
		}
	}
	return ""
}

// nginxPair finds the nginx-style model's configuration in the same mode
// and workload as nginx's cfg, with as many threads as nginx has workers;
// nil if the run has none measured.
func (a *analysis) nginxPair(cfg results.ModelConfig, g *results.Group) (results.ModelConfig, *results.Group) {
	for _, c := range a.Configs {
		if c.Model != modelAcceptMutex || acceptMode(c.Args) != acceptMode(cfg.Args) || c.Threads != cfg.Threads {
			continue
		}
		if mg := a.balanceGroup(c.Name); mg != nil && workloadOf(mg) == workloadOf(g) {
			return c, mg
		}
	}
	return results.ModelConfig{}, nil
}

// nginx computes the section, or nil when the run measured no nginx.
func (a *analysis) nginx() *nginxSection {
	s := &nginxSection{Load: a.balanceLoad(),
		Head: []string{"mode", "configuration", "capacity (req/s)", "capacity × nginx", "p99", "CPU µs/req", "other threads' CPU µs/req", "other threads' switches/req", "connections per worker, max ÷ mean", "requests per worker, max ÷ mean", "busiest worker's share (%)"}}
	shown := map[string]bool{}  // the models shown beside their nginx
	var ref, refWorkload string // the first nginx: the others' reference
	for _, cfg := range a.Configs {
		if cfg.Model != modelNginx {
			continue
		}
		g := a.balanceGroup(cfg.Name)
		if g == nil {
			continue
		}
		mode := acceptMode(cfg.Args)
		mc, mg := a.nginxPair(cfg, g)
		if mg != nil {
			s.Rows = append(s.Rows, a.nginxRow(mode, mc.Name, mg, cfg.Name))
			shown[mc.Name] = true
		}
		s.Rows = append(s.Rows, a.nginxRow(mode, cfg.Name, g, cfg.Name))
		s.Verdicts = append(s.Verdicts, nginxVerdict(mode, cfg.Name, g, mc.Name, mg))
		if ref == "" {
			ref, refWorkload = cfg.Name, workloadOf(g)
		}
	}
	if len(s.Rows) == 0 {
		return nil
	}
	// Every other configuration under nginx's workload, against the first
	// nginx (the lean profile: the Proactor and Leader/Followers beside it).
	for _, cfg := range a.Configs {
		if cfg.Model == modelNginx || shown[cfg.Name] {
			continue
		}
		if g := a.balanceGroup(cfg.Name); g != nil && workloadOf(g) == refWorkload {
			s.Rows = append(s.Rows, a.nginxRow("—", cfg.Name, g, ref))
		}
	}
	s.Notes = []string{
		"nginx answers /work with a fixed body and does none of the workload's work: the comparison is at the zero-work end, where the cost of dispatch is all there is. Both run on the same server CPUs, a worker per CPU (the sizing rule), driven by the same generator at the same loads; nginx's requests come from its stub_status page, its CPU time and context switches from /proc over its master and workers, each worker's responses from its write calls and its connections from /proc/net/tcp (harness documentation, \"Real nginx\").",
		"Other threads: the server's threads that are not its workers, from their schedstat at the window's edges — the Go runtime's (its monitor thread, idle threads, the collector) beside the model's workers, the master process beside nginx's: their CPU, and the times they were put on a CPU (each a switch, on the server's CPUs a preemption of a worker or a wake-up from idle), per request. They are where a cost that is neither pattern's shows.",
		"Cells: the median over the valid repetitions with its 95% confidence interval, or, with fewer than 6, their range. Capacity is the closed loop's; the others are at " + s.Load + ".",
		"Capacity × nginx: the configuration's capacity over the nginx of its mode (the first nginx for a row without one, mode —), the Hodges–Lehmann estimate with its 95% interval (stats.RatioCI) over the valid repetitions. Where the load generator's ceiling, not the server, sets both capacities, the points are invalid and there is no factor: a server CPU quota (bench --server-cpu-quota; the lean profile's half a CPU) keeps every capacity the server's own, so the factor is what each serves with the same CPU.",
	}
	if q := a.Run.Provenance.ServerCPUQuota; q != "" {
		s.Notes = append(s.Notes, "Server CPU quota: "+q+". Every server ran under it, so capacities and CPU per request compare per unit of CPU; the p99 includes the quota's throttled stretches and is not the server's.")
	}
	return s
}

// nginxRow is one configuration's row of the nginx table; ref names the
// nginx its capacity is compared with.
func (a *analysis) nginxRow(mode, name string, g *results.Group, ref string) []string {
	capacity, factor := "—", "—"
	if cg := a.Capacity(name); cg != nil {
		capacity = balanceCell(cg, results.Capacity)
		switch rg := a.Capacity(ref); {
		case name == ref:
			factor = "1"
		case rg != nil:
			factor = capacityFactor(cg.Aggregate(results.Capacity).Values, rg.Aggregate(results.Capacity).Values)
		}
	}
	row := []string{mode, name, capacity, factor}
	for _, m := range []results.Metric{results.LatencyP99, results.CPUPerReq, results.OtherCPUPerReq, results.OtherSlicesPerReq, results.ConnsMaxMean, results.RequestsMaxMean, results.BusiestShare} {
		row = append(row, balanceCell(g, m))
	}
	return row
}

// capacityFactor is a capacity over nginx's: the factor with its 95%
// interval, or why there is none.
func capacityFactor(model, nginx []float64) string {
	if len(model) == 0 || len(nginx) == 0 {
		return "— (no valid capacity)"
	}
	r := stats.RatioCI(model, nginx, results.Confidence)
	switch {
	case r.OK:
		return factorCI(r)
	case r.Est > 0:
		return factorText(r.Est) + " (no interval: " + r.Why + ")"
	}
	return "— (" + r.Why + ")"
}

// nginxVerdict says whether the model's connection balance in mode (mg,
// nil if the run has none) agrees with nginx's (g) within
// BalanceTolerance, by their medians.
func nginxVerdict(mode, nginxName string, g *results.Group, modelName string, mg *results.Group) string {
	if mg == nil {
		return fmt.Sprintf("**%s**: no measured %s/%s beside %s in this run: nginx's own balance only.", mode, modelAcceptMutex, mode, nginxName)
	}
	n, m := g.Aggregate(results.ConnsMaxMean).Stats, mg.Aggregate(results.ConnsMaxMean).Stats
	if n.N == 0 || m.N == 0 {
		return fmt.Sprintf("**%s**: no connection balance to compare (%s: %d valid repetitions with connections per worker, %s: %d).", mode, modelName, m.N, nginxName, n.N)
	}
	if threads := g.Aggregate(results.BalanceThreads).Stats; threads.N > 0 && threads.Max <= 1 {
		return fmt.Sprintf("**%s**: one worker each: balance is even by construction, nothing to compare (the server has one CPU, and the sizing rule gives a worker per CPU; it takes a server of 2 CPUs or more).", mode)
	}
	diff := math.Abs(m.Median-n.Median) / n.Median
	medians := fmt.Sprintf("%s %s, %s %s (%.1f%% apart)", modelName, plots.TrimFloat(m.Median), nginxName, plots.TrimFloat(n.Median), 100*diff)
	if diff <= BalanceTolerance {
		return fmt.Sprintf("**%s**: connection balance agrees within %.0f%%: %s.", mode, 100*BalanceTolerance, medians)
	}
	// Medians apart by more than the tolerance are a difference only if
	// the repetitions show one: a storm of connections on one CPU goes to
	// whichever worker runs, so a repetition's split can be anything from
	// even to one-sided, in nginx as in the model, and the medians of a
	// few such repetitions fall far apart by chance.
	u := stats.MannWhitney(m.Values, n.Values)
	if u.Significant() {
		return fmt.Sprintf("**%s**: connection balance differs by more than %.0f%%: %s; two-sided Mann–Whitney p=%s.",
			mode, 100*BalanceTolerance, medians, fmtP(u.P))
	}
	return fmt.Sprintf("**%s**: connection balance medians more than %.0f%% apart, but no difference shown between the repetitions: %s; "+
		"two-sided Mann–Whitney p=%s (n=%d, %d); a repetition's split ranged %s–%s (%s) and %s–%s (%s).",
		mode, 100*BalanceTolerance, medians, fmtP(u.P), u.N1, u.N2, plots.TrimFloat(m.Min), plots.TrimFloat(m.Max), modelName,
		plots.TrimFloat(n.Min), plots.TrimFloat(n.Max), nginxName)
}

// Markdown renders the section.
func (s *nginxSection) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The nginx-style model and real nginx in each accept mode, and the run's other configurations beside the first nginx (mode —), at %s.\n\n", s.Load)
	mdTable(&b, s.Head, s.Rows)
	for _, v := range s.Verdicts {
		b.WriteString("\n- " + v)
	}
	b.WriteString("\n")
	for _, n := range s.Notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}
