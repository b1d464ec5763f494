package main

import (
	"io"
	"strings"
	"testing"

	"concbench/harness"
	"concbench/programs/soak"
)

// TestSoakFlags: the defaults (one configuration per model and the
// chain), a selection by name and by model, and bad input refused by
// name before anything runs.
func TestSoakFlags(t *testing.T) {
	c, err := parseSoakFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(harness.Families()) + 1; len(c.Configs) != want || c.Configs[want-1].Name != soak.Chain || c.Configs[want-1].Backend == nil {
		t.Errorf("default configurations %v, want the %d families and %s with its back end", names(c.Configs), want-1, soak.Chain)
	}
	f, l, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	if f.Requests != 10_000_000 || l.Requests != f.Requests || !l.Closed || l.Conns != 32 || l.KillEvery != 10_000 ||
		l.Accounts != 256 || l.WithdrawWait <= 0 || f.ServerBinary == "" {
		t.Errorf("defaults: %+v, load %+v", f, l)
	}
	c, err = parseSoakFlags([]string{"--models", "netpoll,frontend/queue/m=1,leaderfollowers"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(c.Configs), ","); got != "netpoll,frontend/queue/m=1,leaderfollowers/lifo" {
		t.Errorf("--models selected %s", got)
	}
	checkRefused(t, "soak", nil, []flagCase{
		{name: "requests", args: []string{"--requests", "0"}, want: "--requests 0 out of range"},
		{name: "kill-every", args: []string{"--kill-every", "-1"}, want: "--kill-every -1 out of range"},
		{name: "progress", args: []string{"--progress", "-1s"}, want: "--progress -1s out of range"},
		{name: "accounts", args: []string{"--accounts", "0"}, want: "--accounts 0"},
		{name: "ops", args: []string{"--ops", "steal=1"}, want: `ops "steal=1": op mix "steal=1": unknown op "steal"`},
		{name: "size", args: []string{"--size", "huge"}, want: `size "huge"`},
		{name: "protocol", args: []string{"--protocol", "grpc"}, want: `protocol "grpc" unknown`},
		{name: "model", args: []string{"--models", "nginx"}, want: `no configuration or model "nginx"`},
		{name: "argument", args: []string{"netpoll"}, want: `unexpected argument "netpoll"`},
	})
}

// names returns the configurations' names.
func names(cs []harness.Config) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
