// Package concbenchtest is what end-to-end tests share: concbench built for
// the tests of the command and the programs that start servers (Binary: a
// test binary cannot serve, so each test package builds cmd/concbench
// once, on first use, into a folder its TestMain makes and removes, Main),
// and an in-process netpoll server as a load test's target (Netpoll).
package concbenchtest
