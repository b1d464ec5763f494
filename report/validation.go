package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"concbench/plots"
	"concbench/results"
)

// The files of a validation (concbench validate), in its own folder or in
// a bench run's.
const (
	ValidationJSON = "validation.json"
	ValidationMD   = "validation.md"
)

// ValidationMarkdown returns the validation as a Markdown section (heading
// level given by level, e.g. "##"): the verdict, the table of measured,
// predicted, ratio and verdict per experiment, the service time asked and
// measured, the floor, and the decomposition of each response time with
// the attribution of the gap.
func ValidationMarkdown(v *results.Validation, level string) string {
	var b strings.Builder
	usf := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }
	fmt.Fprintf(&b, "%s Measurement chain\n\n**%s.**\n\n", level, plots.Capitalize(v.Verdict))
	if len(v.Reasons) > 0 {
		for _, r := range v.Reasons {
			fmt.Fprintf(&b, "- %s\n", r)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Prediction (judged): the queue on the **effective service time**, from measured inputs — each request occupies its server for the service time the server measured around Service.Do (its own CLOCK_MONOTONIC timestamps) plus the server's own gap between two services (a busy server's dispatch: the previous response's write, epoll, this request's read); one that finds its server idle first pays the idle server's set-up (its dispatch: loopback, wake-up, read); the response then returns in the measured return time; at the achieved arrival rate. %s Beside it the plain model: the measured service time alone, plus the floor measured at low load. Verdict: the mean within ±%.0f%% at ρ ≤ %g. Response time: intended send (Poisson schedule) → kernel receive timestamp.\n\n",
		chainMethod(v), 100*v.Tolerance, v.MaxJudgedRho)
	fmt.Fprintf(&b, "| experiment | ρ / on S_eff | measured mean / p50 / p99 (µs) | predicted mean / p50 / p99 (µs) | ratio mean / p50 / p99 | plain mean / p99 (µs) | plain ratio mean / p99 | textbook mean / p99 (µs) | verdict |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range v.Experiments {
		fmt.Fprintf(&b, "| %s | %.3f / %.3f | %s / %s / %s | %s / %s / %s | %.3f / %.3f / %.3f | %s / %s | %.3f / %.3f | %s / %s | %s |\n",
			e.Name, e.Rho, e.RhoEffective, usf(e.Measured.MeanNs), usf(e.Measured.P50Ns), usf(e.Measured.P99Ns),
			usf(e.Predicted.MeanNs), usf(e.Predicted.P50Ns), usf(e.Predicted.P99Ns), e.Ratio, e.RatioP50, e.RatioP99,
			usf(e.Plain.MeanNs), usf(e.Plain.P99Ns), e.PlainRatio, e.PlainRatioP99, usf(e.Textbook.MeanNs), usf(e.Textbook.P99Ns), verdictCell(e))
	}
	fmt.Fprintf(&b, "\nFloor (zero work, %g/s, every request to an idle server, %d requests): mean %s µs = inbound %s (send → service start) + return %s (service end → receive); p50 %s, p99 %s µs. Clock join uncertainty ≤ %.2f µs.\n\n",
		v.Floor.RatePerS, v.Floor.Requests, usf(v.Floor.MeanNs), usf(v.Floor.InboundNs), usf(v.Floor.ReturnNs), usf(v.Floor.P50Ns), usf(v.Floor.P99Ns), float64(v.ClockUncertaintyNs)/1e3)
	b.WriteString("Service time, asked vs measured by the server:\n\n| experiment | asked mean (µs) | asked SCV | measured mean (µs) | measured SCV | measured p50 / p99 (µs) |\n|---|---|---|---|---|---|\n")
	for _, e := range v.Experiments {
		fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %.2f | %s / %s |\n", e.Name, usf(e.Asked.MeanNs), e.Asked.SCV, usf(e.Service.MeanNs), e.Service.SCV, usf(e.Service.P50Ns), usf(e.Service.P99Ns))
	}
	if c := v.ClosedService; c.Requests > 0 {
		fmt.Fprintf(&b, "| closed loop (exp, one request in flight per connection) | | 1.00 | %s | %.2f | %s / %s |\n", usf(c.MeanNs), c.SCV, usf(c.P50Ns), usf(c.P99Ns))
	}
	b.WriteString("\nDecomposition of the mean response time (µs): generator lag (intended → sent) + queue (behind earlier services) + dispatch (send, or the previous service's end, → service start: loopback, wake-up, epoll, read, parse) + service + return (service end → kernel receive); idle: requests that found the server idle, and their dispatch (the set-up an idle server costs) against a busy server's gap between services. Gap: measured − plain mean, attributed (lag; queue beyond the plain model's wait; dispatch beyond the floor's inbound; return beyond the floor's): what the plain model leaves out, and the effective service time puts in.\n\n")
	b.WriteString("| experiment | lag | queue | dispatch | service | return | = total | idle share | dispatch idle / busy | gap: lag + queue + dispatch + return = total |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range v.Experiments {
		d, g := e.Decomposition, e.Gap
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.0f%% | %s / %s | %s + %s + %s + %s = %s |\n", e.Name,
			usf(d.GenLag), usf(d.Queue), usf(d.Dispatch), usf(d.Service), usf(d.Return), usf(d.Total), 100*d.IdleShare,
			usf(d.IdleDispatch), usf(d.BusyDispatch), usf(g.GenLag), usf(g.Queue), usf(g.Dispatch), usf(g.Return), usf(g.Total))
	}
	for _, e := range v.Experiments {
		for _, n := range e.Notes {
			fmt.Fprintf(&b, "\n- %s: %s", e.Name, n)
		}
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	b.WriteString("\n")
	return b.String()
}

// chainMethod says how the judged prediction of v's queue is computed.
func chainMethod(v *results.Validation) string {
	switch {
	case v.Servers <= 1:
		return "One server: M/G/1 with an exceptional first service, its mean exact (results.SetupMean), its percentiles by simulating the queue with the measured samples resampled."
	case v.Partitioned:
		return fmt.Sprintf("%d servers, a queue each (c × M/G/1): simulated with the measured samples resampled, each queue fed with the split the server made (the threads the requests went to, in send order).", v.Servers)
	}
	return fmt.Sprintf("%d servers sharing one queue (M/G/%d): simulated with the measured samples resampled.", v.Servers, v.Servers)
}

func verdictCell(e results.ChainExperiment) string {
	if len(e.Reasons) == 0 {
		return e.Verdict
	}
	return e.Verdict + ": " + strings.Join(e.Reasons, "; ")
}

// WriteValidation writes v into dir: validation.json, validation.md (with
// the figure) and figures/chain.<format> with its CSV; it returns the
// files written.
func WriteValidation(dir string, v *results.Validation, formats []string) (files []string, err error) {
	formats, err = checkFormats(formats)
	if err != nil {
		return nil, err
	}
	out := &outDir{dir: dir}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := out.write(ValidationJSON, append(js, '\n')); err != nil {
		return out.files, err
	}
	fig := plots.ValidationFigure(v)
	if _, err := out.writeFigure(fig, formats); err != nil {
		return out.files, err
	}
	md := "# concbench validate\n\n" + ValidationMarkdown(v, "##") + "\n![" + fig.Title + "](" + FiguresDir + "/" + fig.Name + ".svg)\n\n" + fig.Caption + "\n"
	if err := out.write(ValidationMD, []byte(md)); err != nil {
		return out.files, err
	}
	return out.files, nil
}

// ReadValidation reads dir/validation.json; (nil, nil) if there is none.
func ReadValidation(dir string) (*results.Validation, error) {
	b, err := os.ReadFile(filepath.Join(dir, ValidationJSON))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v results.Validation
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("report: %s: %w", ValidationJSON, err)
	}
	return &v, nil
}

// chainSection is the report's "Measurement chain" section: a bench run's
// short validation of the chain (validation.json in the run folder), or
// why there is none.
type chainSection struct {
	Verdict string
	Reasons []string
	Head    []string
	Rows    [][]string
	Floor   string
	Decomp  []string
	Notes   []string
	Link    string // validation.md, when present
}

// chainSectionOf reads the run folder's validation, if any.
func chainSectionOf(dir string) *chainSection {
	v, err := ReadValidation(dir)
	switch {
	case err != nil:
		return &chainSection{Verdict: "Not validated in this run: " + err.Error()}
	case v == nil:
		return &chainSection{Verdict: "Not validated in this run (bench --validate 0, or a run made before concbench validate existed); run make validate for the full check"}
	}
	usf := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }
	s := &chainSection{Verdict: plots.Capitalize(v.Verdict), Reasons: v.Reasons, Notes: slices.Clone(v.Notes), Link: ValidationMD,
		Head: []string{"experiment", "ρ", "measured mean (µs)", "predicted mean (µs)", "ratio", "plain mean (µs)", "plain ratio", "measured p99 (µs)", "predicted p99 (µs)", "verdict"}}
	for _, e := range v.Experiments {
		s.Rows = append(s.Rows, []string{e.Name, strconv.FormatFloat(e.Rho, 'f', 3, 64), usf(e.Measured.MeanNs), usf(e.Predicted.MeanNs),
			strconv.FormatFloat(e.Ratio, 'f', 3, 64), usf(e.Plain.MeanNs), strconv.FormatFloat(e.PlainRatio, 'f', 3, 64),
			usf(e.Measured.P99Ns), usf(e.Predicted.P99Ns), verdictCell(e)})
		s.Decomp = append(s.Decomp, e.Name+": "+e.Decomposition.String()+fmt.Sprintf("; gap to the plain model: lag %s + queue %s + dispatch %s + return %s = %s µs",
			usf(e.Gap.GenLag), usf(e.Gap.Queue), usf(e.Gap.Dispatch), usf(e.Gap.Return), usf(e.Gap.Total)))
		for _, n := range e.Notes {
			s.Notes = append(s.Notes, e.Name+": "+n)
		}
	}
	s.Floor = fmt.Sprintf("Floor (zero work, %g/s, idle server): %s µs mean (inbound %s + return %s), p99 %s µs. Prediction (judged): the queue on the effective service time — the service time the server measured plus its own gap between two services, with an idle server's set-up, and the measured return — at the achieved rate; plain: the measured service time alone plus the floor (Pollaczek–Khinchine with one server). The verdict judges the mean within ±%.0f%%.",
		v.Floor.RatePerS, usf(v.Floor.MeanNs), usf(v.Floor.InboundNs), usf(v.Floor.ReturnNs), usf(v.Floor.P99Ns), 100*v.Tolerance)
	return s
}
