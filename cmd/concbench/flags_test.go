package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"concbench/internal/cli"
)

// flagCase is a command line a command must refuse before anything runs.
type flagCase struct {
	name string
	args []string
	want string // in the error
}

// checkRefused runs command with each case's arguments after pre, and
// checks that it fails with exit status 1 and an error containing want.
func checkRefused(t *testing.T, command string, pre []string, cases []flagCase) {
	t.Helper()
	checkRefusedExit(t, command, pre, 1, cases)
}

// checkRefusedExit is checkRefused for a command that refuses with its
// own exit status (the gate's 2: it could not decide).
func checkRefusedExit(t *testing.T, command string, pre []string, exit int, cases []flagCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{command}, pre...), tc.args...)
			err := run(context.Background(), args, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || cli.ExitCode(err) != exit {
				t.Fatalf("error %v (exit %d), want one containing %q, exit %d", err, cli.ExitCode(err), tc.want, exit)
			}
		})
	}
}

// checkHelp runs "concbench help command" and checks that it ends as
// help does (flag.ErrHelp, exit status 0) and that the usage it prints
// contains every want; it returns the usage.
func checkHelp(t *testing.T, command string, wants ...string) string {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), []string{"help", command}, nil, &out, io.Discard)
	if !errors.Is(err, flag.ErrHelp) || cli.ExitCode(err) != 0 {
		t.Fatalf("help %s = %v (exit %d), want flag.ErrHelp (exit 0)", command, err, cli.ExitCode(err))
	}
	for _, want := range wants {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help %s lacks %q", command, want)
		}
	}
	return out.String()
}
