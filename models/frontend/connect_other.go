//go:build !linux

package frontend

import (
	"net/netip"

	"concbench/handleset"
)

// connect is Linux-only, like the model (see the package documentation).
func connect(netip.AddrPort) (int, error) { return -1, handleset.ErrUnsupported }
