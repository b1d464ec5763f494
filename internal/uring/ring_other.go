//go:build !linux

package uring

// Ring is an io_uring instance; elsewhere than Linux none can be created.
type Ring struct{}

// New returns ErrUnsupported: io_uring exists only on Linux.
func New(entries uint32, opts Options) (*Ring, error) { return nil, ErrUnsupported }

// Available returns ErrUnsupported: io_uring exists only on Linux.
func Available() error { return ErrUnsupported }

// Close does nothing.
func (r *Ring) Close() error { return nil }
