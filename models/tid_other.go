//go:build !linux

package models

// CurrentThreadID returns 0: thread ids are reported on Linux only.
func CurrentThreadID() int { return 0 }
