//go:build !linux

package frontend

import (
	"net/netip"
	"time"

	"concbench/handleset"
)

// connect is Linux-only, like the model (see the package documentation).
func connect(netip.AddrPort, time.Duration, time.Duration, time.Duration) (int, error) {
	return -1, handleset.ErrUnsupported
}
