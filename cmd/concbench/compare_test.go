package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"concbench/results/resultstest"
)

// TestCompareFlags: the command wants two run folders, hands its flags
// to the comparison (a metric it does not know is refused, run B read),
// and prints the table.
func TestCompareFlags(t *testing.T) {
	t.Parallel()
	a := resultstest.WriteTemp(t, nil, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{a}, want: "want two run folders"},
		{args: []string{"--metrics", "speed", a, a}, want: `unknown metric "speed"`},
		{args: []string{a, "/nonexistent/run"}, want: "run B"},
	} {
		err := runCompare(context.Background(), tc.args, nil, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compare %q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	var out bytes.Buffer
	if err := runCompare(context.Background(), []string{"--metrics", "cpu", a, a}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "B/A [95% CI]") {
		t.Errorf("output lacks the table:\n%s", out.String())
	}
	checkHelp(t, "compare", "usage: concbench compare", "-metrics")
}
