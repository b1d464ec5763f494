package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"concbench/internal/cli"
)

// TestValidateFlagErrors: bad input is refused by name before anything
// runs.
func TestValidateFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "work", args: []string{"--work", "pareto"}, want: `work "pareto" unknown (accepted: exp, fixed)`},
		{name: "rho", args: []string{"--rho", "1.2"}, want: "utilization 1.2 out of range"},
		{name: "rho list", args: []string{"--rho", "x"}, want: "--rho"},
		{name: "work mean", args: []string{"--work-mean", "10ns"}, want: "work 10ns out of range"},
		{name: "tolerance", args: []string{"--tolerance", "0"}, want: "tolerance"},
		{name: "warmup", args: []string{"--warmup", "1ms"}, want: "warm-up 1ms too short"},
		{name: "stray argument", args: []string{"extra"}, want: `unexpected argument "extra"`},
		{name: "no threads", args: []string{"--threads", "0"}, want: "--threads 0 out of range (accepted: 1..64)"},
		{name: "too many threads", args: []string{"--threads", "65"}, want: "threads 65 out of range (accepted: 1..64)"},
		{name: "model without a queueing model", args: []string{"--model", "netpoll"}, want: `model "netpoll" has no queueing model to judge it by (accepted: leaderfollowers, partitioned)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"validate"}, tc.args...), nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || cli.ExitCode(err) != 1 {
				t.Fatalf("error %v (exit %d), want one containing %q, exit 1", err, cli.ExitCode(err), tc.want)
			}
		})
	}
}

func TestValidateHelp(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"help", "validate"}, nil, &out, io.Discard)
	if cli.ExitCode(err) != 0 || !strings.Contains(out.String(), "Exit status: 0 validated, 3 not validated") {
		t.Errorf("help validate: %v, %q", err, out.String())
	}
}
