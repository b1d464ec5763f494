package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestHostileFlags: the defaults, and bad input refused by name before
// anything runs.
func TestHostileFlags(t *testing.T) {
	f, err := parseHostileFlags([]string{"lf=--model leaderfollowers --header-timeout 5s"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.Attack != "amplify" || f.Conns != 200 || f.PerConn != 16 || f.Size != 1<<20 || !f.Rest || f.ServerCPUs != "0" || f.ServerBinary == "" ||
		len(f.Configs) != 1 || f.Configs[0].Label != "lf" || !slices.Equal(f.Configs[0].Flags, []string{"--model", "leaderfollowers", "--header-timeout", "5s"}) {
		t.Errorf("defaults: %+v", f)
	}
	checkRefused(t, "hostile", nil, []flagCase{
		{name: "no configuration", args: nil, want: "name at least one configuration"},
		{name: "attack", args: []string{"--attack", "flood", "a=--model netpoll"}, want: `--attack "flood": want amplify or slowheader`},
		{name: "conns", args: []string{"--conns", "0", "a=--model netpoll"}, want: "--conns 0"},
		{name: "requests", args: []string{"--requests", "0", "a=--model netpoll"}, want: "--requests 0"},
		{name: "size", args: []string{"--size", "-1", "a=--model netpoll"}, want: "--size -1"},
		{name: "during", args: []string{"--during", "-1s", "a=--model netpoll"}, want: "--during -1s"},
		{name: "configuration without label", args: []string{"netpoll"}, want: `configuration "netpoll": want label=serve flags`},
		{name: "unknown flag", args: []string{"--bin", "x", "a=--model netpoll"}, want: "flag provided but not defined: -bin"},
	})
	checkHelp(t, "hostile", "usage: concbench hostile", "-attack")
}

// TestHostileRenamedFlags: --runs, the old spelling, still sets --reps,
// and says that it is deprecated.
func TestHostileRenamedFlags(t *testing.T) {
	var stderr bytes.Buffer
	f, err := parseHostileFlags([]string{"--runs", "4", "a=--model netpoll"}, io.Discard, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if f.Reps != 4 || !strings.Contains(stderr.String(), "--runs is deprecated, use --reps") {
		t.Errorf("--runs 4: reps %d, stderr %q", f.Reps, stderr.String())
	}
}
