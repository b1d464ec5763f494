package service

import "golang.org/x/sys/unix"

// contextSwitches returns the voluntary plus involuntary context switches
// of the whole process (all threads, RUSAGE_SELF), or -1 if unknown.
func contextSwitches() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Nvcsw + ru.Nivcsw
}
