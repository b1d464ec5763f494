//go:build !linux

package service

import "time"

// sleep waits for d. Note: off Linux this parks the goroutine in the Go
// scheduler instead of blocking its thread in a system call; the models that
// depend on the blocking semantics (see sleep_linux.go) run only on Linux.
func sleep(d time.Duration) { time.Sleep(d) }
