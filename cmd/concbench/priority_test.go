package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concbench/internal/testenv"
)

// TestPriorityFlags: the defaults, and bad input refused by name before
// anything runs.
func TestPriorityFlags(t *testing.T) {
	f, err := parsePriorityFlags([]string{"--binary", "/bin/true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.cfgs) != len(defaultPriorityConfigs) || f.cfgs[1].label != "lf-lanes" ||
		!slices.Equal(f.cfgs[1].flags, []string{"--model", "leaderfollowers", "--lanes", "0:2,128:2", "--gomaxprocs", "5"}) ||
		!slices.Equal(f.lows, []float64{0.3, 0.7, 1.0, 1.3}) || f.highPrio != 200 || f.runs != 3 || f.bin != "/bin/true" {
		t.Errorf("defaults: %+v", f)
	}
	f, err = parsePriorityFlags([]string{"--low", "0.5, 1", "--high-nice", "0", "a=--model netpoll", "b=--model threadperconn --threads 8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.cfgs) != 2 || f.cfgs[0].label != "a" || !slices.Equal(f.cfgs[1].flags, []string{"--model", "threadperconn", "--threads", "8"}) ||
		!slices.Equal(f.lows, []float64{0.5, 1}) || f.bin == "" {
		t.Errorf("configurations given: %+v", f)
	}
	checkRefused(t, "priority", nil, []flagCase{
		{name: "priority 0", args: []string{"--high-prio", "0"}, want: "--high-prio 0: want 1..255"},
		{name: "priority 256", args: []string{"--high-prio", "256"}, want: "--high-prio 256: want 1..255"},
		{name: "rate", args: []string{"--high-rate", "0"}, want: "--high-rate 0"},
		{name: "conns", args: []string{"--low-conns", "0"}, want: "--low-conns 0"},
		{name: "runs", args: []string{"--runs", "0"}, want: "--runs 0: want 1 or more"},
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

// TestLaneCounts lists a laned server's requests per lane, in lane order,
// and nothing for a server without lanes.
func TestLaneCounts(t *testing.T) {
	if got := laneCounts(map[string]uint64{"lane1_requests": 7, "lane0_requests": 3, "requests": 10}); got != "lane0 3, lane1 7" {
		t.Errorf("laneCounts = %q", got)
	}
	if got := laneCounts(map[string]uint64{"requests": 10}); got != "" {
		t.Errorf("laneCounts without lanes = %q", got)
	}
}

// TestPriorityRun measures one short point of two configurations end to
// end (the capacity given, so not measured): the table, the medians and
// the figure's files.
func TestPriorityRun(t *testing.T) {
	testenv.EndToEnd(t)
	bin := concbenchBinary(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"priority", "--binary", bin, "--out", out, "--capacity", "2000", "--low", "0.5",
		"--runs", "1", "--warmup", "100ms", "--duration", "500ms", "--high-nice", "0", "--high-rate", "100", "--low-conns", "4",
		"lf=--model leaderfollowers --threads 2", "lanes=--model leaderfollowers --lanes 0:1,128:1 --lane-sched nice"}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("priority: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"high stream: 100 req/s, priority 200", "lanes=0:1,128:1", "lane0 ", "high-priority p99, median", "figure: " + filepath.Join(out, "priority")} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "failed:") {
		t.Errorf("a point failed:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "fewer than three low-priority loads") {
		t.Errorf("no warning for one load on stderr: %q", stderr.String())
	}
	for _, name := range []string{"priority.png", "priority.svg", "priority.csv", "lf-0-0-high.json", "lanes-0-0-low.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}
