package main

import (
	"os"
	"testing"

	"concbench/internal/concbenchtest"
)

// TestMain makes the folder the end-to-end tests' concbench is built into
// (concbenchtest.Binary), runs the tests and removes it.
//
// Tests that neither serve nor measure (those reading and rendering
// synthetic runs) call t.Parallel: Go runs them after every sequential
// test, so they share the CPUs with each other, never with a test that
// pins a server and a load generator to them.
func TestMain(m *testing.M) {
	os.Exit(concbenchtest.Main(m))
}
