// Command testreport reads "go test -json" (test2json) events on standard
// input, as "make test TESTFLAGS=-json" prints them, and writes what a
// plain "go test" would — each package's ok or FAIL line, the output of
// every failed test — followed by the list of the tests that skipped,
// each with its reason, so that a capability a machine lacks is seen,
// not inferred from silence (.ci/run). Lines that are not events (make's
// and vet's) pass through. It exits 1 when a test or a package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one test2json event (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// skip is one skipped test and why.
type skip struct{ pkg, test, why string }

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report reads the events of in and writes the report to out; failed
// says whether a test or a package failed.
func report(in io.Reader, out io.Writer) (failed bool, err error) {
	type key struct{ pkg, test string }
	output := map[key][]string{}
	var skips []skip
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
			fmt.Fprintln(out, line)
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			if e.Test == "" {
				// A package's own lines: "ok …", "FAIL …", build errors.
				if t := strings.TrimRight(e.Output, "\n"); t != "PASS" && !strings.HasPrefix(t, "=== ") {
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			output[k] = append(output[k], e.Output)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{e.Package, e.Test, reason(output[k])})
			}
			delete(output, k)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Fprint(out, strings.Join(output[k], ""))
			}
			delete(output, k)
		case "pass":
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return failed, err
	}
	// A parent skipped with its subtests is one line; subtests of a test
	// that ran are listed each.
	slices.SortFunc(skips, func(a, b skip) int { return strings.Compare(a.pkg+" "+a.test, b.pkg+" "+b.test) })
	fmt.Fprintf(out, "\nSkipped: %d tests\n", len(skips))
	for _, s := range skips {
		fmt.Fprintf(out, "  %s %s: %s\n", strings.TrimPrefix(s.pkg, "concbench/"), s.test, s.why)
	}
	return failed, nil
}

// reason returns the reason a skipped test printed: its output lines but
// the "=== RUN" and "--- SKIP" ones, joined; "no reason given" if none.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}
