package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"concbench/internal/testenv"
)

// TestHostileFlags: the defaults, and bad input refused by name before
// anything runs.
func TestHostileFlags(t *testing.T) {
	f, err := parseHostileFlags([]string{"lf=--model leaderfollowers --header-timeout 5s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.attack != "amplify" || f.conns != 200 || f.perConn != 16 || f.size != 1<<20 || !f.rest || f.cpus != "0" || f.bin == "" ||
		len(f.cfgs) != 1 || f.cfgs[0].label != "lf" || !slices.Equal(f.cfgs[0].flags, []string{"--model", "leaderfollowers", "--header-timeout", "5s"}) {
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

// TestHostileRun runs both attacks end to end against netpoll, small, with
// a shortened victim: a row per attack, the bound held and the slow
// headers closed for their timeout.
func TestHostileRun(t *testing.T) {
	testenv.EndToEnd(t)
	bin := concbenchBinary(t)
	v := victimFor
	victimFor = 100 * time.Millisecond
	t.Cleanup(func() { victimFor = v })
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "amplify", args: []string{"--attack", "amplify", "--conns", "4", "--requests", "4", "--size", "65536", "np=--model netpoll"},
			want: []string{"4 attackers × 4 requests for 64 KiB", "np    ", " true "}},
		{name: "slowheader", args: []string{"--attack", "slowheader", "--conns", "4", "--during", "100ms", "np=--model netpoll --header-timeout 1s"},
			want: []string{"4 attackers each sending", "np    "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(context.Background(), append([]string{"hostile", "--server-binary", bin}, tc.args...), nil, &stdout, io.Discard)
			if err != nil {
				t.Fatalf("hostile: %v\n%s", err, stdout.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.name == "slowheader" {
				// The row: victim p99, p99 attacked, closed after, timeouts, …
				row := strings.Fields(strings.Split(strings.TrimSpace(stdout.String()), "\n")[2])
				if len(row) != 7 || row[4] != "4" {
					t.Errorf("want 4 header timeouts in the row %q", row)
				}
			}
		})
	}
}
