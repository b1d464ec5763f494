package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"concbench/harness"
)

// What the measuring commands that start servers themselves (priority,
// hostile) share: their configurations and the server they start through
// the harness's driver (a load generator's result is read with readJSON).

// serveConfig is one server configuration a measuring command compares:
// a label and the serve flags, given on its command line as
// "label=serve flags".
type serveConfig struct {
	label string
	flags []string
}

// parseServeConfigs reads configurations given as "label=serve flags";
// an empty list is returned as is (the caller has defaults, or refuses
// it).
func parseServeConfigs(args []string) ([]serveConfig, error) {
	var cfgs []serveConfig
	for _, a := range args {
		label, flags, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(label) == "" || strings.ContainsAny(label, " /") {
			return nil, fmt.Errorf("configuration %q: want label=serve flags (a label without spaces or slashes, e.g. 'lf=--model leaderfollowers --threads 4')", a)
		}
		cfgs = append(cfgs, serveConfig{label: label, flags: strings.Fields(flags)})
	}
	return cfgs, nil
}

// startConfigServer starts "bin serve" pinned to cpus, speaking HTTP, with
// flags, and waits until it is ready (harness.StartServer).
func startConfigServer(bin, cpus string, flags []string) (*harness.Server, error) {
	args := append([]string{"serve", "--cpus", cpus, "--protocol", "http"}, flags...)
	return harness.StartServer(bin, args, "http")
}

// executable returns bin, or this process's executable if bin is empty:
// the concbench that serves (and, for priority, loads).
func executable(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("this executable: %w", err)
	}
	return exe, nil
}

// every calls fn every period, on a goroutine of its own, until the
// returned stop is called; stop waits for a call in progress, so that
// what fn uses may be released after it. The slow-header attack drips
// its bytes with it, the soak prints its progress.
func every(period time.Duration, fn func()) (stop func()) {
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

// firstLine returns the first line of s, trimmed: a child's error
// output's first line, for a table cell.
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
