package monoclock

import "golang.org/x/sys/unix"

// sysMono reads CLOCK_MONOTONIC with clock_gettime(2).
func sysMono() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
