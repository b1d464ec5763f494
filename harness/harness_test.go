package harness

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concbench/internal/ktrace"
	"concbench/loadgen"
)

// serverBinary is a concbench built once for the package's tests: the
// test binary is not concbench, so it cannot serve.
var serverBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	// As a run does: where this is root and tracefs is merely not
	// mounted, the mechanism tests run instead of skipping.
	if why := ktrace.MountTracefs(); why != "" {
		fmt.Fprintln(os.Stderr, "harness tests:", why)
	}
	if testing.Short() {
		os.Exit(m.Run()) // the tests that serve are end-to-end: skipped
	}
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "harness-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		serverBinary = filepath.Join(dir, "concbench")
		if err := buildConcbench(serverBinary); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// buildConcbench builds ./cmd/concbench (from the module root) into out,
// with the go command of the toolchain running the tests and any further
// build flags.
func buildConcbench(out string, flags ...string) error {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	gobin := filepath.Join(strings.TrimSpace(string(goroot)), "bin", "go")
	cmd := exec.Command(gobin, append(append([]string{"build"}, flags...), "-o", out, "concbench/cmd/concbench")...)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build concbench: %w\n%s", err, b)
	}
	return nil
}

func near(got, want, relTol float64) bool {
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

// relaxed turns off the load generator's checks on its own health: the
// harness's tests check the run's mechanics, and run beside other tests
// that take the generator's CPU (go test runs packages in parallel), so
// its verdicts on itself would invalidate the capacity points that the
// open points take their rates from.
var relaxed = loadgen.Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}

// shortRun is the tests' experiment: cs under ws, one repetition of the
// shortest windows the load generator accepts (100 ms of warm-up, 200 ms
// measured), the generator's checks relaxed, the package's server
// binary, one fraction of capacity; each test changes what it needs.
func shortRun(cs []Config, ws ...Workload) Experiment {
	return Experiment{
		Profile: "test", Configs: cs, Workloads: ws, Fractions: []float64{0.3},
		Repetitions: 1, Warmup: Duration(100 * time.Millisecond), Duration: Duration(200 * time.Millisecond),
		Seed: 7, LoadLimits: relaxed, ServerBinary: serverBinary,
	}
}
