//go:build !linux

package handleset

import (
	"net/netip"
	"time"
)

// Set is the shared handle set; on this system it cannot be created.
type Set struct{}

// New returns ErrUnsupported: epoll is Linux-only.
func New() (*Set, error) { return nil, ErrUnsupported }

// Register returns ErrUnsupported.
func (s *Set) Register(fd int, ev Events, h EventHandler) error { return ErrUnsupported }

// Reactivate returns ErrUnsupported.
func (s *Set) Reactivate(fd int, ev Events) error { return ErrUnsupported }

// Deactivate returns ErrUnsupported.
func (s *Set) Deactivate(fd int) error { return ErrUnsupported }

// Unregister returns ErrUnsupported.
func (s *Set) Unregister(fd int) error { return ErrUnsupported }

// Stale returns 0.
func (s *Set) Stale() uint64 { return 0 }

// Close returns ErrUnsupported.
func (s *Set) Close() error { return ErrUnsupported }

// Waiter is one thread's view of a Set.
type Waiter struct{}

// NewWaiter returns a Waiter whose Wait fails.
func (s *Set) NewWaiter(max int) *Waiter { return &Waiter{} }

// Wait returns ErrUnsupported.
func (w *Waiter) Wait(timeout time.Duration) ([]Event, error) { return nil, ErrUnsupported }

// Listener is a raw listening socket; on this system it cannot be created.
type Listener struct{}

// Listen returns ErrUnsupported.
func Listen(addr string, opts ListenOptions) (*Listener, error) { return nil, ErrUnsupported }

// Fd returns -1.
func (l *Listener) Fd() int { return -1 }

// Addr returns the zero address.
func (l *Listener) Addr() netip.AddrPort { return netip.AddrPort{} }

// Accept returns ErrUnsupported.
func (l *Listener) Accept() (int, netip.AddrPort, error) { return -1, netip.AddrPort{}, ErrUnsupported }

// Shutdown returns ErrUnsupported.
func (l *Listener) Shutdown() error { return ErrUnsupported }

// Close returns ErrUnsupported.
func (l *Listener) Close() error { return ErrUnsupported }

// Read returns ErrUnsupported.
func Read(fd int, p []byte) (int, error) { return 0, ErrUnsupported }

// Write returns ErrUnsupported.
func Write(fd int, p []byte) (int, error) { return 0, ErrUnsupported }

// Shutdown returns ErrUnsupported.
func Shutdown(fd int) error { return ErrUnsupported }

// Close returns ErrUnsupported.
func Close(fd int) error { return ErrUnsupported }

// IsWouldBlock returns false.
func IsWouldBlock(err error) bool { return false }

// IsTemporary returns false.
func IsTemporary(err error) bool { return false }

// IsPeerGone returns false.
func IsPeerGone(err error) bool { return false }

// Wakeup is an eventfd; on this system it cannot be created.
type Wakeup struct{}

// NewWakeup returns ErrUnsupported.
func NewWakeup() (*Wakeup, error) { return nil, ErrUnsupported }

// Fd returns -1.
func (w *Wakeup) Fd() int { return -1 }

// Signal returns ErrUnsupported.
func (w *Wakeup) Signal() error { return ErrUnsupported }

// Drain returns ErrUnsupported.
func (w *Wakeup) Drain() (uint64, error) { return 0, ErrUnsupported }

// Close returns ErrUnsupported.
func (w *Wakeup) Close() error { return ErrUnsupported }
