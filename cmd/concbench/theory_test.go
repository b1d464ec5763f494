package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestTheoryFlagErrors: bad input is refused by name.
func TestTheoryFlagErrors(t *testing.T) {
	checkRefused(t, "theory", nil, []flagCase{
		{name: "servers", args: []string{"--servers", "0"}, want: "--servers 0 out of range"},
		{name: "rho", args: []string{"--rho", "1"}, want: "--rho 1 out of range"},
		{name: "rho list", args: []string{"--rho", "x"}, want: "--rho"},
		{name: "dist", args: []string{"--dist", "pareto"}, want: `service distribution "pareto" unknown`},
		{name: "requests", args: []string{"--requests", "10"}, want: "--requests 10 out of range"},
		{name: "mean", args: []string{"--mean", "0s"}, want: "--mean 0s"},
		{name: "stray argument", args: []string{"extra"}, want: `unexpected argument "extra"`},
	})
}

// TestTheoryRun: the command hands its flags to the comparison.
func TestTheoryRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"theory", "--servers", "2", "--dist", "exp", "--rho", "0.5", "--requests", "1000"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if want := "theory: c = 2 servers, mean service 100µs"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
