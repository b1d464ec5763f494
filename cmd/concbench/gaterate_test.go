package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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

// TestGaterateRecount recounts the committed campaigns under
// results/gaterate (--runs 0: nothing is measured) from copies of their
// runs, and gets each summary.md exactly as committed.
func TestGaterateRecount(t *testing.T) {
	for _, kind := range []string{"nochange", "nochange-2026-11-28", "cpu", "handoff", "stall"} {
		t.Run(kind, func(t *testing.T) {
			src := filepath.Join("..", "..", "results", "gaterate", kind)
			runs, _ := filepath.Glob(filepath.Join(src, "run-*.json"))
			if len(runs) == 0 {
				t.Fatalf("no runs in %s", src)
			}
			dir := t.TempDir()
			for _, r := range runs {
				b, err := os.ReadFile(r)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(r)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"gaterate", "--runs", "0", "--out", dir}
			if !strings.HasPrefix(kind, "nochange") {
				args = append(args, "--head-tags", "concbench_regress_"+kind)
			}
			var stdout bytes.Buffer
			if err := run(context.Background(), args, nil, &stdout, io.Discard); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(src, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || stdout.String() != string(want) {
				t.Errorf("recounted summary differs from %s:\n%s", filepath.Join(src, "summary.md"), got)
			}
		})
	}
}
