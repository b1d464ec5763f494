// Package buildinfo describes the running binary from the build
// information go build embeds: its commit (with "+dirty" for a modified
// tree), the Go version and the build settings that change the code.
// "concbench version" prints it; a result file records the same commit.
package buildinfo
