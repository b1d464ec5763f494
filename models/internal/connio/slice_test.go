package connio

import (
	"runtime"
	"testing"
)

// TestSliceRefresh checks that Refresh starts a new slice (and yields)
// only once SliceLength has passed, on a locked thread as the models run
// it.
func TestSliceRefresh(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		now := monoNow()
		s := Slice{start: now}
		s.Refresh()
		if s.start != now {
			t.Errorf("a slice that has just begun was renewed: start %d, want %d", s.start, now)
		}
		old := now - 2*int64(SliceLength)
		s.start = old
		s.Refresh()
		if s.start < now {
			t.Errorf("a slice older than SliceLength was not renewed: start %d, want at least %d", s.start, now)
		}
	}()
	<-done
}
