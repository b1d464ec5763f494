// Command concbench runs the concurrency-model benchmark suite.
//
// Usage:
//
//	concbench serve --model M [flags]   run one model as a server, with a control channel
//	concbench help [command]            describe a command
//
// Run "concbench help serve" for the server's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "concbench:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitStatus carries a specific exit status (the gate uses 1 and 2).
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string { return e.err.Error() }
func (e *exitStatus) Unwrap() error { return e.err }

func exitCode(err error) int {
	var es *exitStatus
	if errors.As(err, &es) {
		return es.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands lists the subcommands; help and its aliases are handled by run.
var commands = []command{
	{name: "serve", summary: "run one concurrency model as a server, with a control channel on stdin/stdout", run: runServe},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: concbench <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help     describe a command: concbench help <command>")
}

// run is the whole command, testable: it returns instead of exiting.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errors.New("no command given")
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(rest) == 0 {
			usage(stdout)
			return nil
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, rest, stdin, stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", name)
}
