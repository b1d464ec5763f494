package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concbench/internal/cli"
	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/loadgen"
)

func loadCmd(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = runLoad(context.Background(), args, nil, &o, &e)
	return o.String(), e.String(), err
}

// TestLoadHelp checks that --help documents every flag the issue asks for,
// with defaults.
func TestLoadHelp(t *testing.T) {
	help := checkHelp(t, "load", "(default 16)", "(default 10s)", "(default 1s)", `(default "poisson")`, `(default "full")`, "default: no pinning")
	for _, name := range []string{"addr", "protocol", "rate", "conns", "duration", "requests", "closed",
		"outstanding", "depth", "arrival", "on", "off", "warmup", "cpu", "block", "size", "prio", "ops",
		"json", "hlog", "seed", "cpus", "verify", "workers", "max-in-flight", "timeout", "allow-invalid"} {
		if !strings.Contains(help, "\n  -"+name+" ") && !strings.Contains(help, "\n  -"+name+"\n") {
			t.Errorf("help does not document --%s", name)
		}
	}
}

// TestLoadRun runs the command against the netpoll model: a summary on
// stdout, the JSON result and the hlog in files.
func TestLoadRun(t *testing.T) {
	testenv.EndToEnd(t)
	for _, proto := range []string{"http", "binary"} {
		t.Run("protocol="+proto, func(t *testing.T) {
			addr := concbenchtest.Netpoll(t, proto)
			dir := t.TempDir()
			jsonPath, hlogPath := filepath.Join(dir, "out.json"), filepath.Join(dir, "out.hlog")
			out, _, err := loadCmd("--addr", addr, "--protocol", proto, "--rate", "500", "--conns", "4",
				"--duration", "300ms", "--warmup", "100ms", "--cpu", "exp:2us", "--size", "bimodal:0.9:16:256",
				"--ops", "work=3,transfer=1,balance=1", "--json", jsonPath, "--hlog", hlogPath,
				"--allow-invalid") // a busy test machine may invalidate the verdict; this test is about the outputs
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"open-loop poisson", "corrected", "uncorrected", "p99.9", "send lag", "VERDICT"} {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var r loadgen.Result
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Mode != "open-loop poisson" || r.Requests.OK == 0 || r.Latency.Histogram == "" || r.Hlog != hlogPath {
				t.Errorf("result: mode %q, %d ok, hlog %q", r.Mode, r.Requests.OK, r.Hlog)
			}
			if n := len(r.Errors) - len(filterExpected(r.Errors)); n != 0 {
				t.Errorf("errors %v", r.Errors)
			}
			if _, err := os.Stat(hlogPath); err != nil {
				t.Error(err)
			}
		})
	}
}

// filterExpected returns the ledger's normal outcomes among errs.
func filterExpected(errs map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range errs {
		if k == "status_insufficient_funds" {
			out[k] = v
		}
	}
	return out
}

// TestLoadClosedJSONStdout checks the closed-loop label and --json -: the
// JSON on stdout, the summary on stderr.
func TestLoadClosedJSONStdout(t *testing.T) {
	testenv.EndToEnd(t)
	addr := concbenchtest.Netpoll(t, "http")
	out, summary, err := loadCmd("--addr", addr, "--closed", "--conns", "2", "--requests", "200", "--warmup", "100ms", "--json", "-", "--allow-invalid")
	if err != nil {
		t.Fatal(err)
	}
	var r loadgen.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, out)
	}
	if r.Mode != "closed-loop (1 outstanding per connection)" || r.Requests.Sent != 200 || !r.Config.Closed {
		t.Errorf("mode %q, %d sent", r.Mode, r.Requests.Sent)
	}
	if !strings.Contains(summary, "closed-loop") || !strings.Contains(summary, "coordinated omission cannot be corrected") {
		t.Errorf("summary does not say closed loop:\n%s", summary)
	}
}

// TestLoadInvalidExit checks that an invalid verdict is loud and exits with
// status 3 after the results are printed, and with --allow-invalid with 0.
func TestLoadInvalidExit(t *testing.T) {
	testenv.EndToEnd(t)
	addr := concbenchtest.Netpoll(t, "http")
	args := []string{"--addr", addr, "--closed", "--conns", "1", "--requests", "50", "--warmup", "0"}
	out, _, err := loadCmd(args...)
	if cli.ExitCode(err) != 3 || !strings.Contains(err.Error(), "invalid run") || !strings.Contains(out, "INVALID RUN") ||
		!strings.Contains(out, "warm-up 0s is shorter than 100ms") {
		t.Errorf("invalid run: %v (exit %d), want exit 3 after the summary:\n%s", err, cli.ExitCode(err), out)
	}
	out, _, err = loadCmd(append(args, "--allow-invalid")...)
	if err != nil || !strings.Contains(out, "INVALID RUN") {
		t.Errorf("with --allow-invalid: err %v, summary:\n%s", err, out)
	}
}

// TestLoadErrors checks that bad flags and an unreachable server are
// errors that name the problem (exit status 1).
func TestLoadErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()
	checkRefused(t, "load", nil, []flagCase{
		{name: "cpu", args: []string{"--addr", "x:1", "--rate", "10", "--cpu", "exp:10"}, want: `--cpu: distribution "exp:10"`},
		{name: "ops", args: []string{"--addr", "x:1", "--rate", "10", "--ops", "steal=1"}, want: `--ops: op mix "steal=1": unknown op "steal"`},
		{name: "no rate", args: []string{"--addr", "x:1"}, want: "rate 0 req/s out of range"},
		{name: "rate with closed loop", args: []string{"--addr", "x:1", "--closed", "--rate", "5"}, want: "rate 5 given with closed loop"},
		{name: "onoff without periods", args: []string{"--addr", "x:1", "--rate", "10", "--arrival", "onoff"}, want: "on/off periods"},
		{name: "cpus", args: []string{"--addr", "x:1", "--rate", "10", "--cpus", "a"}, want: "--cpus"},
		{name: "stray argument", args: []string{"--addr", "x:1", "--rate", "10", "extra"}, want: `unexpected argument "extra"`},
		{name: "conns", args: []string{"--addr", "x:1", "--rate", "10", "--conns", "0"}, want: "--conns 0 out of range"},
		{name: "depth", args: []string{"--addr", "x:1", "--rate", "10", "--depth", "-1"}, want: "--depth -1 out of range"},
		{name: "unreachable server", args: []string{"--addr", closedAddr, "--rate", "10", "--duration", "1s"}, want: "connect to " + closedAddr},
	})
}
