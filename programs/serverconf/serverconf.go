package serverconf

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"concbench/harness"
	"concbench/internal/cpuset"
)

// Config is one server configuration a measuring program compares: a
// label and the serve flags, given on its command line as
// "label=serve flags".
type Config struct {
	Label string
	Flags []string
}

// Parse reads configurations given as "label=serve flags"; an empty list
// is returned as is (the caller has defaults, or refuses it).
func Parse(args []string) ([]Config, error) {
	var cfgs []Config
	for _, a := range args {
		label, flags, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(label) == "" || strings.ContainsAny(label, " /") {
			return nil, fmt.Errorf("configuration %q: want label=serve flags (a label without spaces or slashes, e.g. 'lf=--model leaderfollowers --threads 4')", a)
		}
		cfgs = append(cfgs, Config{Label: label, Flags: strings.Fields(flags)})
	}
	return cfgs, nil
}

// Start starts "bin serve" pinned to cpus, speaking HTTP, with flags, and
// waits until it is ready (harness.StartServer).
func Start(bin, cpus string, flags []string) (*harness.Server, error) {
	args := append([]string{"serve", "--cpus", cpus, "--protocol", "http"}, flags...)
	return harness.StartServer(bin, args, "http")
}

// Executable returns bin, or this process's executable if bin is empty:
// the concbench that serves.
func Executable(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("this executable: %w", err)
	}
	return exe, nil
}

// SplitCPUs returns this process's CPUs split as the harness splits them
// (harness.SplitCPUs): the server's, the first half, and the load
// generator's, the rest; both empty on a single CPU or where the affinity
// cannot be read.
func SplitCPUs() (server, load string) {
	cur, err := cpuset.Current()
	if err != nil {
		return "", ""
	}
	srv, ld := harness.SplitCPUs(cur)
	return srv.String(), ld.String()
}

// PinLoad pins every thread of this process to the CPU list cpus (if not
// empty), where an in-process load generator is to run, and returns the
// function that restores the affinity it had.
func PinLoad(cpus string) (restore func(), err error) {
	if cpus == "" {
		return func() {}, nil
	}
	set, err := cpuset.Parse(cpus)
	if err != nil {
		return nil, err
	}
	prev, err := cpuset.Current()
	if err != nil {
		return nil, err
	}
	if err := cpuset.Pin(0, set); err != nil {
		return nil, err
	}
	return func() { cpuset.Pin(0, prev) }, nil
}

// Every calls fn every period, on a goroutine of its own, until the
// returned stop is called; stop waits for a call in progress, so that
// what fn uses may be released after it. The slow-header attack drips
// its bytes with it, the soak prints its progress.
func Every(period time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// FirstLine returns the first line of s, trimmed: an error's first line,
// for a table cell.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
