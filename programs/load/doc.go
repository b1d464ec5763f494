// Package load drives a server with open- or closed-loop load and
// reports it (concbench load): one loadgen run in this process, pinned
// as the harness pins it, or one coordinated over agents (package
// loadgen/agent); then the summary, the JSON result and the exit status
// of an invalid verdict.
package load
