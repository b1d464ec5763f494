//go:build !linux

package harness

import "concbench/results"

// quietKernel finds nothing: the kernel threads it knows are Linux's.
func quietKernel() ([]results.KernelThread, func() bool) { return nil, func() bool { return false } }
