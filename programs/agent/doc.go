// Package agent runs a load-generator agent (concbench agent): it listens
// for a coordinator that presents the token and runs its share of the
// load in this process. The protocol is package loadgen/agent's.
package agent
