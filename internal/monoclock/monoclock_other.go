//go:build !linux

package monoclock

// sysMono has no host-wide monotonic clock to read here.
func sysMono() (int64, bool) { return 0, false }
