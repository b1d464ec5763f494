//go:build !linux

package sysstat

import "errors"

// ErrUnsupported is returned where the process statistics are not
// implemented (not Linux).
var ErrUnsupported = errors.New("sysstat: not supported on this operating system")

// Self returns ErrUnsupported.
func Self() (Rusage, error) { return Rusage{}, ErrUnsupported }

// ReadTasks returns ErrUnsupported.
func ReadTasks(pid int) (Tasks, error) { return Tasks{}, ErrUnsupported }

// RSS returns ErrUnsupported.
func RSS() (int64, error) { return 0, ErrUnsupported }
