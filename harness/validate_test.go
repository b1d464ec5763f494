package harness

import (
	"strings"
	"testing"

	"concbench/internal/cpuset"
	"concbench/models/registry"
)

// TestValidateRefusals: validate with c server threads is refused, with
// what it needs, where it cannot judge c servers — fewer than c + 1 CPUs,
// fewer server CPUs than threads — and before any server starts.
func TestValidateRefusals(t *testing.T) {
	two := cpuset.Set{0, 1}
	for _, tc := range []struct {
		name string
		opt  ValidateOptions
		cur  cpuset.Set
		want string
	}{
		{name: "4 threads on 2 CPUs", opt: ValidateOptions{Threads: 4}, cur: two,
			want: "validate: 4 server threads need 5 CPUs (4 for the server, one for the busy-polling load generator); this process may use 2 (0-1)"},
		{name: "1 thread on 1 CPU", opt: ValidateOptions{Threads: 1}, cur: cpuset.Set{3},
			want: "validate: 1 server thread needs 2 CPUs (1 for the server, one for the busy-polling load generator); this process may use 1 (3)"},
		{name: "2 threads on 1 server CPU", opt: ValidateOptions{Threads: 2, ServerCPUs: "0", LoadCPUs: "1"}, cur: two,
			want: "validate: the server's CPUs 0 are 1 for 2 threads (accepted: a CPU per thread"},
		{name: "shared CPU", opt: ValidateOptions{Threads: 2, ServerCPUs: "0-1", LoadCPUs: "1"}, cur: two,
			want: "share CPU 1"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			opt := tc.opt.withDefaults()
			if err := opt.validate(); err != nil {
				t.Fatalf("options refused: %v", err)
			}
			err := placeChainCPUs(&opt, tc.cur)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestValidateModels: a model plugs into the validation by its name in
// chainModels and its row in the registry. One the validation knows but
// this build lacks is "not available", naming what is; one without a
// queueing model is refused; the partitioned server, whose row another
// package adds, is judged as partitioned queues once it is there.
func TestValidateModels(t *testing.T) {
	chainModels["nosuchmodel"] = true
	t.Cleanup(func() { delete(chainModels, "nosuchmodel") })
	opt := ValidateOptions{Model: "nosuchmodel"}.withDefaults()
	if err := opt.validate(); err == nil || !strings.Contains(err.Error(), "model nosuchmodel not available: this build's model registry has no row \"nosuchmodel\" (available: leaderfollowers") {
		t.Errorf("a model not in the registry: %v", err)
	}
	if err := (ValidateOptions{Model: "netpoll"}.withDefaults()).validate(); err == nil || !strings.Contains(err.Error(), "no queueing model") {
		t.Errorf("netpoll: %v", err)
	}
	for _, tc := range []struct {
		model       string
		partitioned bool
	}{{"leaderfollowers", false}, {"partitioned", true}} {
		partitioned, err := ValidateOptions{Model: tc.model}.chainModel()
		if _, inBuild := registry.Lookup(tc.model); !inBuild {
			if err == nil || !strings.Contains(err.Error(), "model "+tc.model+" not available") {
				t.Errorf("%s, not in this build: %v, want it not available", tc.model, err)
			}
			continue
		}
		if err != nil || partitioned != tc.partitioned {
			t.Errorf("%s: partitioned %v, %v; want %v", tc.model, partitioned, err, tc.partitioned)
		}
	}
}

// TestValidateDefaults: c threads get the window divided by c (the same
// number of requests as one thread's), the rates c times one thread's, and
// a window the server's trace cannot hold is refused up front.
func TestValidateDefaults(t *testing.T) {
	opt := ValidateOptions{Threads: 4}.withDefaults()
	if opt.Duration != DefaultValidateDuration/4 || opt.Model != "leaderfollowers" {
		t.Errorf("defaults %+v: want the window %v, Leader/Followers", opt, DefaultValidateDuration/4)
	}
	if err := opt.validate(); err != nil {
		t.Errorf("4 threads, default window: %v", err)
	}
	if err := (ValidateOptions{Threads: 16}.withDefaults()).validate(); err != nil {
		t.Errorf("16 threads, default window: %v", err)
	}
	opt.Duration = DefaultValidateDuration
	if err := opt.validate(); err == nil || !strings.Contains(err.Error(), "14000 requests/s for 13s would overflow the server's trace") {
		t.Errorf("4 threads for %v: %v, want the trace's overflow refused", opt.Duration, err)
	}
	if n := chainName("M", 4, true); n != "4×M/M/1" {
		t.Errorf("partitioned name %q", n)
	}
	if n := chainName("D", 4, false); n != "M/D/4" {
		t.Errorf("shared name %q", n)
	}
}
