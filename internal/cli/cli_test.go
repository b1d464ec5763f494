package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{flag.ErrHelp, 0},
		{errors.New("x"), 1},
		{Exit(2, errors.New("undecided")), 2},
		{fmt.Errorf("gate: %w", Exit(3, errors.New("invalid"))), 3},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Int("reps", 3, "repetitions")
	err := Parse(fs, []string{"--nope"}, io.Discard, "")
	if err == nil || !strings.Contains(err.Error(), "concbench help bench") {
		t.Fatalf("bad flag: %v, want an error pointing at the help", err)
	}
	var out bytes.Buffer
	fs = flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Int("reps", 3, "repetitions")
	if err := Parse(fs, []string{"-h"}, &out, "usage: bench\n"); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	if !strings.HasPrefix(out.String(), "usage: bench\n") || !strings.Contains(out.String(), "-reps") {
		t.Fatalf("-h printed %q, want the header, then the flags", out.String())
	}
}

func TestRenamed(t *testing.T) {
	var stderr bytes.Buffer
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	reps := fs.Int("reps", 3, "repetitions")
	Renamed(fs, "runs", "reps", &stderr)
	if err := Parse(fs, []string{"--runs", "7"}, io.Discard, ""); err != nil {
		t.Fatal(err)
	}
	if *reps != 7 {
		t.Errorf("--runs 7 set reps to %d", *reps)
	}
	if !Set(fs)["reps"] {
		t.Errorf("--runs did not count as --reps given: %v", Set(fs))
	}
	if want := "concbench soak: --runs is deprecated, use --reps\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func TestFloats(t *testing.T) {
	xs, err := ParseFloats("0.3, 0.5,0.7")
	if err != nil || len(xs) != 3 || xs[0] != 0.3 || xs[2] != 0.7 {
		t.Fatalf("ParseFloats = %v, %v", xs, err)
	}
	if got := JoinFloats(xs); got != "0.3,0.5,0.7" {
		t.Errorf("JoinFloats = %q, want 0.3,0.5,0.7", got)
	}
	if _, err := ParseFloats("0.3,x"); err == nil || !strings.Contains(err.Error(), `"x" is not a number`) {
		t.Errorf("ParseFloats(0.3,x) = %v, want an error naming x", err)
	}
}
