//go:build !linux

package futex

import (
	"sync/atomic"
	"time"
)

func wait(addr *atomic.Uint32, val uint32, d time.Duration) { panic(ErrUnsupported) }

func wake(addr *atomic.Uint32, n int) int { panic(ErrUnsupported) }
