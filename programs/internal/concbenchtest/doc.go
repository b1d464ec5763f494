// Package concbenchtest builds concbench for the end-to-end tests of the
// programs that start servers: a test binary cannot serve, so each test
// package builds cmd/concbench once, on first use, into a folder its
// TestMain (Main) makes and removes.
package concbenchtest
