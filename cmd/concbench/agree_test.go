package main

import "testing"

// TestAgreeFlags: fewer than two runs are refused; help prints the
// usage.
func TestAgreeFlags(t *testing.T) {
	checkRefused(t, "agree", nil, []flagCase{
		{name: "one run", args: []string{"bench-1.json"}, want: "agree: 1 runs given, want 2 or more"},
		{name: "unknown flag", args: []string{"--json", "x"}, want: "flag provided but not defined: -json"},
	})
	checkHelp(t, "agree", "usage: concbench agree", "-out")
}
