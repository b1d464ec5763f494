//go:build !linux

package cpuset

import "errors"

// ErrUnsupported is returned where affinity is not implemented (not Linux).
var ErrUnsupported = errors.New("cpuset: CPU affinity is not supported on this operating system")

// Pin returns ErrUnsupported.
func Pin(pid int, s Set) error { return ErrUnsupported }

// Current returns ErrUnsupported.
func Current() (Set, error) { return nil, ErrUnsupported }

// Online returns ErrUnsupported.
func Online() (Set, error) { return nil, ErrUnsupported }
