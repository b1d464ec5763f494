package connio

import (
	"strings"
	"sync"
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/wire"
)

// TestLimitAdmitsUpToTheCap: a Limit admits MaxConns connections, refuses
// the next, admits one again after a Release; without a cap it admits
// everything and counts nothing.
func TestLimitAdmitsUpToTheCap(t *testing.T) {
	codec := modeltest.Codec(t, "http", wire.Limits{})
	tests := []struct {
		name     string
		maxConns int
		admits   int // of 10 tries before any Release
	}{
		{name: "no-cap", maxConns: 0, admits: 10},
		{name: "cap=1", maxConns: 1, admits: 1},
		{name: "cap=3", maxConns: 3, admits: 3},
		{name: "cap=10", maxConns: 10, admits: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLimit(&models.Config{Codec: codec, MaxConns: tc.maxConns}, "test")
			admitted := 0
			for range 10 {
				if l.Admit() {
					admitted++
				}
			}
			if admitted != tc.admits {
				t.Fatalf("admitted %d of 10, want %d", admitted, tc.admits)
			}
			if tc.maxConns == 0 {
				if l.Open() != 0 || l.Refusal() != nil {
					t.Fatalf("without a cap: %d open, refusal %q; want nothing counted", l.Open(), l.Refusal())
				}
				return
			}
			if l.Open() != tc.maxConns {
				t.Fatalf("%d open, want %d", l.Open(), tc.maxConns)
			}
			l.Release()
			if !l.Admit() {
				t.Fatal("a place given back was not admitted again")
			}
			if l.Admit() {
				t.Fatal("admitted past the cap after a Release and an Admit")
			}
			r := string(l.Refusal())
			if !strings.HasPrefix(r, "HTTP/1.1 503 ") || !strings.Contains(r, "test: all ") || !strings.Contains(r, "(--max-conns)") {
				t.Fatalf("refusal %q: want a 503 naming the model and --max-conns", r)
			}
		})
	}
}

// TestLimitConcurrentNeverExceedsTheCap: threads admitting and releasing
// at once never hold more places than the cap.
func TestLimitConcurrentNeverExceedsTheCap(t *testing.T) {
	codec := modeltest.Codec(t, "binary", wire.Limits{})
	const maxConns, workers, rounds = 3, 8, 2000
	l := NewLimit(&models.Config{Codec: codec, MaxConns: maxConns}, "test")
	var wg sync.WaitGroup
	var mu sync.Mutex
	held, most := 0, 0
	for range workers {
		wg.Go(func() {
			for range rounds {
				if !l.Admit() {
					continue
				}
				mu.Lock()
				held++
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				l.Release()
			}
		})
	}
	wg.Wait()
	if most > maxConns || l.Open() != 0 {
		t.Fatalf("at most %d held at once (cap %d), %d open at the end (want 0)", most, maxConns, l.Open())
	}
}
