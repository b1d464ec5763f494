//go:build !linux

package sysstat

import "errors"

// ErrUnsupported is returned where the process statistics are not
// implemented (not Linux).
var ErrUnsupported = errors.New("sysstat: not supported on this operating system")

// Self returns ErrUnsupported.
func Self() (Rusage, error) { return Rusage{}, ErrUnsupported }

// Thread returns ErrUnsupported.
func Thread() (Rusage, error) { return Rusage{}, ErrUnsupported }

// TaskIDs returns ErrUnsupported.
func TaskIDs(pid int) ([]int, error) { return nil, ErrUnsupported }

// ThreadRunQueueNs returns ErrUnsupported.
func ThreadRunQueueNs() (int64, error) { return 0, ErrUnsupported }

// ThreadSched is one thread's scheduler counters (Linux only).
type ThreadSched struct{ RunNs, WaitNs, Slices int64 }

// SchedByThread returns ErrUnsupported.
func SchedByThread(pid int) (map[int]ThreadSched, error) { return nil, ErrUnsupported }

// ReadTasks returns ErrUnsupported.
func ReadTasks(pid int) (Tasks, error) { return Tasks{}, ErrUnsupported }

// RSS returns ErrUnsupported.
func RSS() (int64, error) { return 0, ErrUnsupported }

// StealNs returns ErrUnsupported.
func StealNs(cpus []int) (int64, error) { return 0, ErrUnsupported }

// Threads returns ErrUnsupported.
func Threads(pid int) (int, error) { return 0, ErrUnsupported }

// OpenFDs returns ErrUnsupported.
func OpenFDs(pid int) (int, error) { return 0, ErrUnsupported }

// OpenSockets returns ErrUnsupported.
func OpenSockets(pid int) (int, error) { return 0, ErrUnsupported }

// RaiseNoFile returns ErrUnsupported.
func RaiseNoFile() (soft, hard uint64, err error) { return 0, 0, ErrUnsupported }
