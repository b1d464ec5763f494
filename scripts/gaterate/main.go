// Command gaterate measures the CI gate's error rates: it runs "concbench
// gate" N times against a base revision, with or without an injected
// regression in the head's build, and reports how often the gate failed
// (exit 1), passed (0) or could not decide (2), with the exact
// (Clopper–Pearson) 95 % confidence interval of the failure rate, and,
// per configuration × load × metric, the changes of the medians it saw
// and how often each row was a regression.
//
// With no tags the runs are no-change runs (the head is the base's code):
// the failure rate is the gate's false-positive rate. With
// -tags concbench_regress_<kind> it is the gate's power against that
// regression. Runs already in -out are kept and counted, so an
// interrupted campaign continues where it stopped; -judge re-judges the
// stored runs with the current binary's rules instead of measuring
// (thresholds set on some runs can be checked on others).
//
// Usage (from the module root, after make build):
//
//	go run ./scripts/gaterate -runs 20 -out out/gaterate/nochange
//	go run ./scripts/gaterate -runs 10 -tags concbench_regress_cpu -out out/gaterate/cpu
//	go run ./scripts/gaterate -judge -out out/gaterate/nochange
//
// The summary goes to standard output and to -out/summary.md.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 20, "gate runs to have in -out (those already there count)")
	tags := flag.String("tags", "", "build tags of the head (an injected regression); empty: no-change runs")
	base := flag.String("base", "HEAD", "the gate's --base revision")
	bin := flag.String("bin", "bin/concbench", "the concbench binary that runs the gate")
	out := flag.String("out", "out/gaterate", "the campaign's folder")
	judge := flag.Bool("judge", false, "re-judge the runs in -out with the binary's current rules instead of measuring")
	flag.Parse()
	if err := run(*runs, *tags, *base, *bin, *out, *judge); err != nil {
		fmt.Fprintln(os.Stderr, "gaterate:", err)
		os.Exit(1)
	}
}

// report is what the campaign reads of one gate run's JSON.
type report struct {
	Outcome     string   `json:"outcome"`
	ExitCode    int      `json:"exit_code"`
	Regressions []string `json:"regressions"`
	Rows        []struct {
		Config   string   `json:"config"`
		Load     string   `json:"load"`
		Metric   string   `json:"metric"`
		Method   string   `json:"method"`
		Verdict  string   `json:"verdict"`
		Delta    *float64 `json:"delta"`
		AbsDelta *float64 `json:"abs_delta"`
		P        *float64 `json:"p"`
		PAdj     *float64 `json:"p_holm"`
	} `json:"rows"`
}

func run(runs int, tags, base, bin, out string, judge bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	have, _ := filepath.Glob(filepath.Join(out, "run-*.json"))
	slices.Sort(have)
	if judge {
		for _, js := range have {
			dir, err := runDirOf(js)
			if err != nil {
				return err
			}
			cmd := exec.Command(bin, "gate", "--run", dir, "--json", js, "--md", strings.TrimSuffix(js, ".json")+".md")
			cmd.Stdout, cmd.Stderr = nil, os.Stderr
			if err := cmd.Run(); err != nil && exitCode(err) < 0 {
				return fmt.Errorf("re-judging %s: %w", dir, err)
			}
		}
	}
	for i := len(have); !judge && i < runs; i++ {
		js := filepath.Join(out, fmt.Sprintf("run-%03d.json", i))
		args := []string{"gate", "--base", base, "--out", filepath.Join(out, "runs"), "--json", js, "--md", strings.TrimSuffix(js, ".json") + ".md"}
		if tags != "" {
			args = append(args, "--head-tags", tags)
		}
		start := time.Now()
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		err := cmd.Run()
		code := exitCode(err)
		if code < 0 {
			return fmt.Errorf("run %d: %w\n%s", i, err, stderr.String())
		}
		fmt.Fprintf(os.Stderr, "gaterate: run %d of %d: exit %d (%s)\n", i+1, runs, code, time.Since(start).Round(time.Second))
		if err := os.WriteFile(strings.TrimSuffix(js, ".json")+".log", stderr.Bytes(), 0o644); err != nil {
			return err
		}
	}
	all, _ := filepath.Glob(filepath.Join(out, "run-*.json"))
	slices.Sort(all)
	var reps []report
	for _, js := range all {
		b, err := os.ReadFile(js)
		if err != nil {
			return err
		}
		var r report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", js, err)
		}
		reps = append(reps, r)
	}
	s := summarize(reps, tags)
	fmt.Print(s)
	return os.WriteFile(filepath.Join(out, "summary.md"), []byte(s), 0o644)
}

// runDirOf returns the run folder a gate report names in its notes
// ("Run folder: DIR (…").
func runDirOf(js string) (string, error) {
	b, err := os.ReadFile(js)
	if err != nil {
		return "", err
	}
	var v struct {
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("%s: %w", js, err)
	}
	for _, n := range v.Notes {
		// A measured run's note, or a re-judged one's.
		for _, prefix := range []string{"Run folder: ", "Judged the existing run folder "} {
			if rest, ok := strings.CutPrefix(n, prefix); ok {
				return strings.TrimSuffix(strings.Fields(rest)[0], "."), nil
			}
		}
	}
	return "", fmt.Errorf("%s names no run folder", js)
}

// exitCode returns the exit status of a finished command (0 for nil), or
// -1 if it did not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// summarize writes the campaign's summary in Markdown.
func summarize(reps []report, tags string) string {
	var b strings.Builder
	n := len(reps)
	codes := map[int]int{}
	for _, r := range reps {
		codes[r.ExitCode]++
	}
	what := "no-change runs (false-positive rate)"
	if tags != "" {
		what = "runs with " + tags + " (power)"
	}
	lo, hi := clopperPearson(codes[1], n, 0.05)
	fmt.Fprintf(&b, "# gate campaign: %d %s\n\n", n, what)
	fmt.Fprintf(&b, "- exit 1 (regression): %d of %d = %.1f%%, 95%% CI [%.1f%%, %.1f%%] (Clopper–Pearson)\n", codes[1], n, pct(codes[1], n), 100*lo, 100*hi)
	fmt.Fprintf(&b, "- exit 0 (pass): %d; exit 2 (undecided): %d\n\n", codes[0], codes[2])

	type key struct{ config, load, metric string }
	type acc struct {
		deltas, ps []float64
		regress    int
		method     string
	}
	rows := map[key]*acc{}
	var order []key
	for _, r := range reps {
		for _, row := range r.Rows {
			k := key{row.Config, row.Load, row.Metric}
			a := rows[k]
			if a == nil {
				a = &acc{method: row.Method}
				rows[k] = a
				order = append(order, k)
			}
			if row.Verdict == "REGRESSION" {
				a.regress++
			}
			d := row.AbsDelta
			if row.Method == "u-test" {
				d = row.Delta
			}
			if d != nil {
				a.deltas = append(a.deltas, *d)
			}
			if row.P != nil {
				a.ps = append(a.ps, *row.P)
			}
		}
	}
	b.WriteString("| configuration | load | metric | method | change of the medians: min · median · max | smallest p | runs flagged |\n")
	b.WriteString("|:--|:--|:--|:--|:--|--:|--:|\n")
	for _, k := range order {
		a := rows[k]
		sort.Float64s(a.deltas)
		rel := a.method == "u-test"
		f := func(v float64) string {
			if rel {
				return fmt.Sprintf("%+.1f%%", 100*v)
			}
			return fmt.Sprintf("%+.3f", v)
		}
		span := "n/a"
		if len(a.deltas) > 0 {
			span = f(a.deltas[0]) + " · " + f(a.deltas[len(a.deltas)/2]) + " · " + f(a.deltas[len(a.deltas)-1])
		}
		minP := "—"
		if len(a.ps) > 0 {
			minP = fmt.Sprintf("%.4f", slices.Min(a.ps))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", k.config, k.load, k.metric, a.method, span, minP, a.regress)
	}
	var flagged []string
	for i, r := range reps {
		if len(r.Regressions) > 0 {
			flagged = append(flagged, fmt.Sprintf("- run %d: %s", i, strings.Join(r.Regressions, "; ")))
		}
	}
	if len(flagged) > 0 {
		b.WriteString("\nRegressions named:\n")
		b.WriteString(strings.Join(flagged, "\n") + "\n")
	}
	return b.String()
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}

// clopperPearson returns the exact two-sided 1−alpha confidence interval
// of a binomial proportion with k successes in n trials.
func clopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	// lo: P(X ≥ k | p) = alpha/2; hi: P(X ≤ k | p) = alpha/2.
	if k > 0 {
		lo = bisect(func(p float64) float64 { return 1 - binomCDF(k-1, n, p) - alpha/2 })
	}
	hi = 1.0
	if k < n {
		hi = bisect(func(p float64) float64 { return alpha/2 - binomCDF(k, n, p) })
	}
	return lo, hi
}

// bisect finds the root of an increasing f on [0, 1].
func bisect(f func(float64) float64) float64 {
	a, b := 0.0, 1.0
	for range 100 {
		m := (a + b) / 2
		if f(m) < 0 {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// binomCDF returns P(X ≤ k) for X ~ Binomial(n, p).
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	s := 0.0
	for i := 0; i <= k; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1)
		s += math.Exp(lg + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(s, 1)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}
