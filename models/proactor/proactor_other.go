//go:build !linux

package proactor

import (
	"fmt"
	"net/netip"

	"concbench/internal/uring"
	"concbench/models"
)

// Server is a running Proactor server; none runs outside Linux.
type Server struct{}

var _ models.Server = (*Server)(nil)

// Start returns an error: io_uring exists only on Linux.
func Start(cfg models.Config, opts Options) (*Server, error) {
	return nil, fmt.Errorf("proactor: %w", uring.ErrUnsupported)
}

// Addr returns the zero address.
func (s *Server) Addr() netip.AddrPort { return netip.AddrPort{} }

// Stats returns the model's name only.
func (s *Server) Stats() models.Stats { return models.Stats{Model: "proactor"} }

// Close does nothing.
func (s *Server) Close() error { return nil }
