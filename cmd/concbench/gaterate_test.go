package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestGaterateFlags: bad input is refused by name before anything runs.
func TestGaterateFlags(t *testing.T) {
	checkRefused(t, "gaterate", []string{"--out", t.TempDir()}, []flagCase{
		{name: "negative runs", args: []string{"--runs", "-1"}, want: "--runs -1: want 0 or more"},
		{name: "runs not a number", args: []string{"--runs", "x"}, want: `invalid value "x" for flag -runs`},
		{name: "judge with runs", args: []string{"--judge", "--runs", "3"}, want: "--judge measures nothing"},
		{name: "judge with base", args: []string{"--judge", "--base", "main"}, want: "--judge measures nothing"},
		{name: "stray argument", args: []string{"extra"}, want: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"--bin", "x"}, want: "flag provided but not defined: -bin"},
	})
	checkHelp(t, "gaterate", "--runs 0 measures nothing", "-head-tags")

	// --tags, the gate's --head-tags under its old name, still works.
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"gaterate", "--runs", "0", "--tags", "concbench_regress_cpu", "--out", t.TempDir()}, nil, &stdout, &stderr)
	if err != nil || !strings.Contains(stdout.String(), "runs with concbench_regress_cpu (power)") ||
		stderr.String() != "concbench gaterate: --tags is deprecated, use --head-tags\n" {
		t.Errorf("--tags: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
}
