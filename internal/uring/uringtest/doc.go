// Package uringtest holds test helpers for code built on package uring:
// counting the process's io_uring descriptors, checking that a ring's
// memory mappings are gone (Baseline: what Close must return the process
// to), and running a test in a child process whose
// io_uring_setup calls a seccomp filter makes fail, the way a container
// runtime's filter does. The helpers exist on Linux only.
package uringtest
