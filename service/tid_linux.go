package service

import "golang.org/x/sys/unix"

// threadID returns the calling OS thread's id (gettid), for the trace.
func threadID() int64 { return int64(unix.Gettid()) }
