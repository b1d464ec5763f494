package main

import (
	"context"
	"io"
	"strings"
	"testing"
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
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{command}, pre...), tc.args...)
			err := run(context.Background(), args, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 1 {
				t.Fatalf("error %v (exit %d), want one containing %q, exit 1", err, exitCode(err), tc.want)
			}
		})
	}
}
