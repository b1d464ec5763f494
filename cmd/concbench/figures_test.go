package main

import (
	"path/filepath"
	"testing"

	"concbench/results/resultstest"
)

func TestFiguresFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteRun(dir); err != nil {
		t.Fatal(err)
	}
	checkHelp(t, "figures", "usage: concbench figures", "-spectrum-load")
	checkRefused(t, "figures", nil, []flagCase{
		{name: "no run", args: nil, want: "--run is required"},
		{name: "positional argument", args: []string{dir}, want: "unexpected argument"},
		{name: "unknown format", args: []string{"--run", dir, "--formats", "svg,gif"}, want: `"gif"`},
		{name: "empty formats", args: []string{"--run", dir, "--formats", ","}, want: "--formats is empty"},
		{name: "load out of range", args: []string{"--run", dir, "--spectrum-load", "0"}, want: "--spectrum-load"},
		{name: "no run folder", args: []string{"--run", filepath.Join(dir, "missing")}, want: "run.json"},
		{name: "unknown flag", args: []string{"--run", dir, "--color"}, want: "concbench help figures"},
	})
}
