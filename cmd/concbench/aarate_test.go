package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAarateFlags: --runs below 0 is refused; --runs 0 measures nothing
// and recounts an empty folder; help prints the usage.
func TestAarateFlags(t *testing.T) {
	checkRefused(t, "aarate", nil, []flagCase{
		{name: "runs", args: []string{"--runs", "-1"}, want: "--runs -1: want 0 or more"},
		{name: "unknown flag", args: []string{"--reps", "2"}, want: "flag provided but not defined: -reps"},
	})
	out := t.TempDir()
	var stdout strings.Builder
	if err := run(context.Background(), []string{"aarate", "--runs", "0", "--out", out}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "# A/A campaign: 0 runs") {
		t.Errorf("recount of an empty folder: %q", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "summary.md")); err != nil {
		t.Error(err)
	}
	checkHelp(t, "aarate", "usage: concbench aarate", "-runs")
}
