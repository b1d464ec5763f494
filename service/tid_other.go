//go:build !linux

package service

// threadID returns 0 off Linux: the trace cannot tell the threads apart
// there, and its reader treats every record as one thread's.
func threadID() int64 { return 0 }
