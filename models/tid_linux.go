package models

import "golang.org/x/sys/unix"

// CurrentThreadID returns the OS thread id of the calling thread (for
// Shard.SetTID; the caller should be locked to its thread).
func CurrentThreadID() int { return unix.Gettid() }
