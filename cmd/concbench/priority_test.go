package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"concbench/programs/priority"
)

// TestPriorityFlags: the defaults, and bad input refused by name before
// anything runs.
func TestPriorityFlags(t *testing.T) {
	f, err := parsePriorityFlags([]string{"--server-binary", "/bin/true"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Configs) != len(priority.DefaultConfigs) || f.Configs[1].Label != "lf-lanes" ||
		!slices.Equal(f.Configs[1].Flags, []string{"--model", "leaderfollowers", "--lanes", "0:2,128:2", "--gomaxprocs", "5"}) ||
		!slices.Equal(f.Lows, []float64{0.3, 0.7, 1.0, 1.3}) || f.HighPrio != 200 || f.Reps != 3 || f.ServerBinary != "/bin/true" {
		t.Errorf("defaults: %+v", f)
	}
	f, err = parsePriorityFlags([]string{"--low", "0.5, 1", "--high-nice", "0", "a=--model netpoll", "b=--model threadperconn --threads 8"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Configs) != 2 || f.Configs[0].Label != "a" || !slices.Equal(f.Configs[1].Flags, []string{"--model", "threadperconn", "--threads", "8"}) ||
		!slices.Equal(f.Lows, []float64{0.5, 1}) || f.ServerBinary == "" {
		t.Errorf("configurations given: %+v", f)
	}
	checkRefused(t, "priority", nil, []flagCase{
		{name: "priority 0", args: []string{"--high-prio", "0"}, want: "--high-prio 0: want 1..255"},
		{name: "priority 256", args: []string{"--high-prio", "256"}, want: "--high-prio 256: want 1..255"},
		{name: "rate", args: []string{"--high-rate", "0"}, want: "--high-rate 0"},
		{name: "conns", args: []string{"--low-conns", "0"}, want: "--low-conns 0"},
		{name: "reps", args: []string{"--reps", "0"}, want: "--reps 0: want 1 or more"},
		{name: "capacity", args: []string{"--capacity", "-5"}, want: "--capacity -5"},
		{name: "nice", args: []string{"--high-nice", "-21"}, want: "--high-nice -21: want -20..19"},
		{name: "fraction", args: []string{"--low", "0.3,x"}, want: `--low: "x" is not a positive fraction`},
		{name: "negative fraction", args: []string{"--low", "-1"}, want: `--low: "-1" is not a positive fraction`},
		{name: "configuration without label", args: []string{"netpoll"}, want: `configuration "netpoll": want label=serve flags`},
		{name: "label with a slash", args: []string{"a/b=--model netpoll"}, want: `configuration "a/b=--model netpoll"`},
		{name: "unknown flag", args: []string{"--bin", "x"}, want: "flag provided but not defined: -bin"},
	})
	checkHelp(t, "priority", "usage: concbench priority", "-high-prio")
}

// TestPriorityRenamedFlags: --runs and --binary, the old spellings, still
// set --reps and --server-binary, and say that they are deprecated.
func TestPriorityRenamedFlags(t *testing.T) {
	var stderr bytes.Buffer
	f, err := parsePriorityFlags([]string{"--binary", "/bin/true", "--runs", "5"}, io.Discard, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if f.ServerBinary != "/bin/true" || f.Reps != 5 {
		t.Errorf("--binary /bin/true --runs 5: server binary %q, reps %d", f.ServerBinary, f.Reps)
	}
	for _, want := range []string{"--binary is deprecated, use --server-binary", "--runs is deprecated, use --reps"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, stderr.String())
		}
	}
}
