package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// WriteFile writes data to path atomically (a temporary file in the same
// folder, synced, then renamed), creating the folder if needed. The file
// is made readable by all (0644): reports and figures are meant to be
// opened by whoever looks at the run.
func WriteFile(path string, data []byte) error {
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// FormatFloat formats v for CSV and tables: the shortest decimal that
// reads back as v, without an exponent; "" for NaN and ±Inf (JSON and
// CSV readers disagree on how to spell them, so they are left empty).
func FormatFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// csvFixed are the CSV columns before the metrics; csvTheory after them.
var (
	csvFixed = []string{"run", "config", "model", "threads", "args", "kind", "fraction", "offered_rate_per_s",
		"repetition", "status", "valid", "invalid_reasons", "failed_checks", "over_capacity", "failure", "warnings",
		"requests_ok", "requests_failed", "errors", "start_time"}
	// csvSLO are a search result's (KindSLO) objective, bracket and
	// reasons; empty for other points.
	csvSLO = []string{"slo_objective", "slo_lo_per_s", "slo_hi_per_s", "slo_invalid", "slo_reason"}
	// csvMechanisms say why a mechanisms point (KindMechanisms) has no
	// counts, or no wake-up IPIs; empty otherwise.
	csvMechanisms = []string{"mechanisms_unavailable", "wake_ipis_unavailable"}
	csvTheory     = []string{"theory_model", "theory_c", "theory_service_ns", "theory_utilization", "theory_stable",
		"theory_mean_ns", "theory_p50_ns", "theory_p99_ns", "theory_p99_9_ns"}
)

// CSVHeader returns the header row of WriteCSV: every column, with its
// unit in its name.
func CSVHeader() []string {
	h := slices.Clone(csvFixed)
	for _, m := range Metrics() {
		h = append(h, m.Name)
	}
	h = append(h, csvSLO...)
	h = append(h, csvMechanisms...)
	return append(h, csvTheory...)
}

// WriteCSV writes pts as CSV, one row per point (every status), under the
// full header of CSVHeader. A value a point does not carry (a failed
// point's latency, a counter the kernel did not expose) is an empty cell,
// never 0. Invalid points are written like the others: valid says the
// load generator's verdict, invalid_reasons why it is false,
// failed_checks the checks that failed (one code per reason, the main one
// first) and over_capacity whether the server did not keep up; the four
// are empty for points without a verdict. Lists (reasons, checks,
// warnings) are joined with " | ", errors as kind=count separated by
// spaces.
func WriteCSV(w io.Writer, r *Run, pts []Point) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return fmt.Errorf("results: csv: %w", err)
	}
	for i := range pts {
		if err := cw.Write(csvRow(r, &pts[i])); err != nil {
			return fmt.Errorf("results: csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("results: csv: %w", err)
	}
	return nil
}

func csvRow(r *Run, p *Point) []string {
	valid, reasons, checks, overCap, okReq, failedReq, errs := "", "", "", "", "", "", ""
	if p.Load != nil {
		valid = strconv.FormatBool(p.Load.Valid)
		reasons = strings.Join(p.Load.Reasons, " | ")
		cs := make([]string, len(p.Load.Checks))
		for i, c := range p.Load.Checks {
			cs[i] = string(c)
		}
		checks = strings.Join(cs, " | ")
		overCap = strconv.FormatBool(p.Load.OverCapacity)
		okReq = strconv.FormatInt(p.Load.Requests.OK, 10)
		failedReq = strconv.FormatInt(p.Load.Requests.Failed, 10)
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(p.Load.Errors)) {
			kv = append(kv, fmt.Sprintf("%s=%d", k, p.Load.Errors[k]))
		}
		errs = strings.Join(kv, " ")
	}
	warnings := slices.Clone(p.Warnings)
	if p.Load != nil {
		warnings = append(warnings, p.Load.Warnings...)
	}
	start := ""
	if !p.StartTime.IsZero() {
		start = p.StartTime.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	row := []string{r.ID, p.Config.Name, p.Config.Model, strconv.Itoa(effectiveThreads(p)), strings.Join(p.Config.Args, " "),
		string(p.Kind), FormatFloat(p.Fraction), FormatFloat(p.OfferedRatePerS),
		strconv.Itoa(p.Repetition), string(p.Status), valid, reasons, checks, overCap, p.Failure, strings.Join(warnings, " | "),
		okReq, failedReq, errs, start}
	for _, m := range Metrics() {
		cell := ""
		if v, ok := m.Value(p); ok {
			cell = FormatFloat(v)
		}
		row = append(row, cell)
	}
	if r := p.SLO; r != nil {
		row = append(row, r.Objective(), FormatFloat(r.LoPerS), FormatFloat(r.HiPerS), r.Invalid, r.Reason)
	} else {
		row = append(row, make([]string, len(csvSLO))...)
	}
	ipis := ""
	if m := p.Server.Mechanisms; m != nil {
		ipis = m.WakeIPIsUnavailable
	}
	row = append(row, p.Server.MechanismsUnavailable, ipis)
	if t := p.Theory; t != nil {
		row = append(row, t.Model, strconv.Itoa(t.C), FormatFloat(t.ServiceNs), FormatFloat(t.Utilization),
			strconv.FormatBool(t.Stable), FormatFloat(t.MeanNs), FormatFloat(t.P50Ns), FormatFloat(t.P99Ns), FormatFloat(t.P999Ns))
	} else {
		row = append(row, make([]string, len(csvTheory))...)
	}
	return row
}

// effectiveThreads is the server's thread count: what it reported, else
// what was asked for (0: the model's default, unknown).
func effectiveThreads(p *Point) int {
	if p.ServerInfo.Threads > 0 {
		return p.ServerInfo.Threads
	}
	return p.Config.Threads
}

// BenchName returns p's benchmark name, without the "Benchmark" prefix,
// in key=value sub-names: "Serve/config=leaderfollowers-lifo/kind=open/load=0.50"
// (load=max for capacity points, the rate in req/s for rate points:
// "kind=rate/load=5000"); in a run of several workloads the workload is
// a key of its own before the configuration,
// "Serve/workload=cpu/config=netpoll/kind=capacity/load=max", so that
// "benchstat -table /workload -col /config bench.txt" gives a table per
// workload with a column per configuration. The configuration is one
// key, so that the rows — kind and load — align across the columns (a
// separate model and variant key would give each model its own rows);
// characters the format reserves ('/', '=', blanks) are replaced by '-'.
func BenchName(p *Point) string {
	load := "max"
	switch p.Kind {
	case KindCapacity:
	case KindRate, KindMechanisms:
		load = strconv.FormatFloat(p.OfferedRatePerS, 'f', 0, 64)
	case KindProbe:
		load = strconv.Itoa(p.Probe)
	case KindSLO:
		if p.SLO != nil {
			load = benchSafe(fmt.Sprintf("p%s-%v", strconv.FormatFloat(p.SLO.Percentile, 'f', -1, 64), p.SLO.Bound()))
		}
	default:
		load = strconv.FormatFloat(p.Fraction, 'f', 2, 64)
	}
	config, workload := p.Config.Name, ""
	if w := p.WorkloadName; w != "" && strings.HasSuffix(config, "/"+w) {
		config, workload = strings.TrimSuffix(config, "/"+w), "workload="+benchSafe(w)+"/"
	}
	return fmt.Sprintf("Serve/%sconfig=%s/kind=%s/load=%s", workload, benchSafe(config), benchSafe(string(p.Kind)), load)
}

func benchSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '=' || r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return '-'
		}
		return r
	}, s)
}

// WriteBench writes pts in the Go benchmark format (x/perf benchfmt),
// which benchstat reads: one result line per valid repetition
// (Point.Valid; a search's probes left out: each configuration's search
// chose its own rates) and per valid latency-objective search result (KindSLO,
// metric slo-req/s, one iteration), named by BenchName, with every metric that has a
// BenchUnit and a value for the point; iterations are the point's
// successful requests. File configuration lines give goos, goarch, cpu,
// commit, go and kernel from the run's provenance. Unit lines declare
// which direction is better. Invalid, failed and unavailable points have
// no result line, so that nothing benchstat computes rests on a
// measurement the load generator rejected (WriteCSV lists every point).
func WriteBench(w io.Writer, r *Run, pts []Point) error {
	var buf bytes.Buffer
	bw := benchfmt.NewWriter(&buf)
	declared := map[string]bool{}
	for _, m := range Metrics() {
		if m.BenchUnit == "" || declared[m.BenchUnit] {
			continue
		}
		declared[m.BenchUnit] = true
		better := "lower"
		if m.HigherIsBetter {
			better = "higher"
		}
		_, tidy := benchunit.Tidy(1, m.BenchUnit)
		if err := bw.Write(&benchfmt.UnitMetadata{
			UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: tidy, Key: "better"},
			OrigUnit:        m.BenchUnit, Value: better,
		}); err != nil {
			return fmt.Errorf("results: bench: %w", err)
		}
	}
	prov := r.Provenance
	commit := prov.Commit
	if prov.Dirty {
		commit += "-dirty"
	}
	for i := range pts {
		p := &pts[i]
		iters := int64(1) // a search's result: one result per repetition
		switch {
		case p.Kind == KindProbe:
			continue // a search's probe: its rate is the search's choice, not comparable across configurations
		case p.Valid():
			iters = p.Load.Requests.OK
		case p.Kind == KindSLO:
			if _, ok := SLOCapacity.Value(p); !ok {
				continue
			}
		default:
			continue
		}
		if p.Provenance.Commit != "" { // a resumed run may span commits
			prov, commit = p.Provenance, p.Provenance.Commit
			if prov.Dirty {
				commit += "-dirty"
			}
		}
		res := &benchfmt.Result{
			Name:  benchfmt.Name(BenchName(p)),
			Iters: int(max(iters, 1)),
		}
		for _, kv := range [][2]string{
			{"goos", prov.OS}, {"goarch", prov.Arch}, {"cpu", prov.CPUModel}, {"commit", commit},
			{"go", prov.GoVersion}, {"kernel", prov.Kernel},
		} {
			if kv[1] != "" {
				res.Config = append(res.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
			}
		}
		for _, m := range Metrics() {
			if m.BenchUnit == "" || p.Kind == KindMechanisms && !m.Mechanism {
				continue // a mechanisms point's other metrics are perturbed by its counting
			}
			v, ok := m.Value(p)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if m.BenchScale != 0 {
				v *= m.BenchScale
			}
			tv, tu := benchunit.Tidy(v, m.BenchUnit)
			res.Values = append(res.Values, benchfmt.Value{Value: tv, Unit: tu, OrigValue: v, OrigUnit: m.BenchUnit})
		}
		if len(res.Values) == 0 {
			continue
		}
		if err := bw.Write(res); err != nil {
			return fmt.Errorf("results: bench: %w", err)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("results: bench: %w", err)
	}
	return nil
}
