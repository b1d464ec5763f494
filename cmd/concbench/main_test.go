package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain makes the folder the end-to-end tests' concbench is built into
// (concbenchBinary), runs the tests and removes it.
//
// Tests that neither serve nor measure (those reading and rendering
// synthetic runs) call t.Parallel: Go runs them after every sequential
// test, so they share the CPUs with each other, never with a test that
// pins a server and a load generator to them.
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "concbench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "concbench tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	built.dir = dir
	return m.Run()
}
