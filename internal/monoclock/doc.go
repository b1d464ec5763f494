// Package monoclock reads CLOCK_MONOTONIC, the clock every process on one
// host shares, at the cost of Go's own monotonic clock read (vDSO, tens of
// ns), so that timestamps taken in two processes — the server's trace and
// the load generator's — can be joined on one time line.
//
// Go's time.Now carries a monotonic reading, but as an offset from the
// process's start, not as the clock's value. Now adds to time.Since(base)
// the CLOCK_MONOTONIC value at base, measured once (Offset) by bracketing
// a time.Since between two clock_gettime(CLOCK_MONOTONIC) calls and taking
// the tightest of several brackets; Uncertainty is half that bracket, the
// largest error of every timestamp Now returns (typically well under a
// µs). On systems without clock_gettime(CLOCK_MONOTONIC) (not Linux) Now
// is only this process's monotonic time and Shared is false.
package monoclock
