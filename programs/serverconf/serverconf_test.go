package serverconf

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: fn runs again and again until stop, and never after stop
// has returned.
func TestEvery(t *testing.T) {
	var calls atomic.Int64
	stop := Every(time.Millisecond, func() { calls.Add(1) })
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := calls.Load()
	if n < 3 {
		t.Fatalf("%d calls in 10s, want 3 or more", n)
	}
	time.Sleep(20 * time.Millisecond)
	if m := calls.Load(); m != n {
		t.Errorf("%d calls after stop returned", m-n)
	}
}
