package activeobject

import "golang.org/x/sys/unix"

// gettid returns the calling OS thread's id.
func gettid() int { return unix.Gettid() }
