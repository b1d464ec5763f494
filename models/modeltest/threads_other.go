//go:build !linux

package modeltest

// busyNewThreads reports nothing where /proc/self/task/*/syscall does not
// exist; the models under test do not run on such systems anyway.
func busyNewThreads(before map[int]bool) []string { return nil }
