package main

import (
	"context"
	"fmt"
	"io"

	"concbench/internal/buildinfo"
)

const versionUsage = "usage: concbench version\n\nPrints the commit this binary was built from, the Go version and the build settings.\n"

// runVersion prints what this binary is (buildinfo.Text).
func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return fmt.Errorf("version: unexpected argument %q (none accepted)", args[0])
	}
	if len(args) > 0 {
		_, err := io.WriteString(stdout, versionUsage)
		return err
	}
	_, err := io.WriteString(stdout, buildinfo.Text())
	return err
}
