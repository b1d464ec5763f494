package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReport: package lines and non-event lines pass through, a failed
// test's output is shown and fails the report, and every skipped test is
// listed with its reason.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`go vet ./...`,
		`{"Action":"run","Package":"concbench/report","Test":"TestReportInBrowser"}`,
		`{"Action":"output","Package":"concbench/report","Test":"TestReportInBrowser","Output":"=== RUN   TestReportInBrowser\n"}`,
		`{"Action":"output","Package":"concbench/report","Test":"TestReportInBrowser","Output":"    browser_test.go:20: no Chromium here (make browser)\n"}`,
		`{"Action":"output","Package":"concbench/report","Test":"TestReportInBrowser","Output":"--- SKIP: TestReportInBrowser (0.00s)\n"}`,
		`{"Action":"skip","Package":"concbench/report","Test":"TestReportInBrowser"}`,
		`{"Action":"output","Package":"concbench/report","Test":"TestBad","Output":"    x_test.go:3: broken\n"}`,
		`{"Action":"fail","Package":"concbench/report","Test":"TestBad"}`,
		`{"Action":"output","Package":"concbench/report","Output":"FAIL\tconcbench/report\t1.0s\n"}`,
		`{"Action":"fail","Package":"concbench/report"}`,
	}, "\n")
	var out bytes.Buffer
	failed, err := report(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("report: failed %t, err %v; want a failure", failed, err)
	}
	got := out.String()
	for _, want := range []string{"go vet ./...", "x_test.go:3: broken", "FAIL\tconcbench/report", "Skipped: 1 tests", "report TestReportInBrowser: browser_test.go:20: no Chromium here (make browser)"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}
