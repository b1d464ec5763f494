package monoclock

import "time"

// base is the process's reference instant; Now counts from it.
var base = time.Now()

// offset is CLOCK_MONOTONIC at base, and uncertainty half the bracket it
// was measured in (calibrate).
var offset, uncertainty, shared = calibrate()

// Now returns CLOCK_MONOTONIC in nanoseconds (see the package
// documentation for its accuracy). It does not allocate.
func Now() int64 { return int64(time.Since(base)) + offset }

// At returns t (which must carry a monotonic reading, as time.Now's do)
// on the clock Now reads.
func At(t time.Time) int64 { return int64(t.Sub(base)) + offset }

// Uncertainty is the largest error, in ns, of a timestamp from Now against
// the system's CLOCK_MONOTONIC.
func Uncertainty() int64 { return uncertainty }

// Shared reports whether Now reads the host-wide CLOCK_MONOTONIC (Linux),
// so that timestamps of two processes compare.
func Shared() bool { return shared }

// calibrate brackets time.Since(base) between two reads of the system
// clock, 16 times, and keeps the tightest bracket.
func calibrate() (off, unc int64, ok bool) {
	best := int64(-1)
	for range 16 {
		t1, ok1 := sysMono()
		d := int64(time.Since(base))
		t2, ok2 := sysMono()
		if !ok1 || !ok2 {
			return 0, 0, false
		}
		if w := t2 - t1; best < 0 || w < best {
			best = w
			off = t1 + w/2 - d
		}
	}
	return off, (best + 1) / 2, true
}
