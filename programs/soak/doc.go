// Package soak runs each server configuration under a long, mixed,
// verified workload with connections killed at random, and checks that
// nothing is lost, duplicated or answered wrongly and that the ledger's
// money is conserved to the unit. The generator runs in this process
// (loadgen.Run); the checks and the table's columns are described in
// "concbench help soak" and docs/usage.md ("soak").
package soak
