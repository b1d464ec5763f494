// Package cli holds what every concbench subcommand shares: parsing a flag
// set the same way, the flags a user gave, renamed flags that still work
// for one release, pinning the process to CPUs, and errors that carry an
// exit status. The subcommands' work lives in library packages; this
// package and cmd/concbench only turn a command line into a call.
package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"concbench/internal/cpuset"
)

// ExitError carries a specific exit status (the gate uses 1 and 2, a run
// that was not valid 3).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err with the exit status code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// ExitCode is the exit status for err: an ExitError's code, 0 for a help
// request, 1 for any other error.
func ExitCode(err error) int {
	var es *ExitError
	if errors.As(err, &es) {
		return es.Code
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

// Parse parses a subcommand's flags. -h/-help prints the full usage to
// stdout (header, then the flags' defaults) and returns flag.ErrHelp; a bad
// flag returns an error naming it and pointing at the help (printed once,
// by main), never the whole usage.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer, header string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, header)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %w (run 'concbench help %s' for the flags)", fs.Name(), err, fs.Name())
	}
	return nil
}

// Set returns the names of the flags given on the command line (after
// fs.Parse).
func Set(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// Renamed registers old as a deprecated spelling of the flag named name
// (already defined on fs): it sets the same value and, when used, prints one
// line to stderr naming the new spelling. Old spellings are kept for one
// release.
func Renamed(fs *flag.FlagSet, old, name string, stderr io.Writer) {
	fl := fs.Lookup(name)
	if fl == nil {
		panic("cli.Renamed: no flag " + name)
	}
	fs.Func(old, "deprecated: use --"+name, func(s string) error {
		fmt.Fprintf(stderr, "concbench %s: --%s is deprecated, use --%s\n", fs.Name(), old, name)
		return fs.Set(name, s)
	})
}

// PinCPUs pins every thread of this process to the CPU list cpus (if not
// empty) and sets GOMAXPROCS: to gomaxprocs if positive, else to the number
// of CPUs pinned to. The runtime sized GOMAXPROCS from the affinity it saw
// at start, before the pinning, so it must be set again. cmd names the
// subcommand in errors.
func PinCPUs(cmd, cpus string, gomaxprocs int) error {
	if cpus != "" {
		set, err := cpuset.Parse(cpus)
		if err != nil {
			return fmt.Errorf("%s: --cpus: %w", cmd, err)
		}
		if err := cpuset.Pin(0, set); err != nil {
			return fmt.Errorf("%s: --cpus %s: %w", cmd, cpus, err)
		}
		gomaxprocs = cmp.Or(gomaxprocs, len(set))
	}
	if gomaxprocs > 0 {
		runtime.GOMAXPROCS(gomaxprocs)
	}
	return nil
}

// ParseFloats parses a comma-separated list of numbers (a flag's value).
func ParseFloats(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", part)
		}
		out = append(out, v)
	}
	return out, nil
}

// JoinFloats is the comma-separated list ParseFloats reads back (a flag's
// default).
func JoinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
