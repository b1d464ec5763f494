package service

import (
	"runtime"
	"sync"
	"testing"

	"concbench/wire"
)

func TestTrace(t *testing.T) {
	for _, tc := range []struct {
		name             string
		capacity, served int
		wantKept         int
		wantDropped      int64
	}{
		{name: "room", capacity: 100, served: 40, wantKept: 40},
		{name: "full", capacity: 16, served: 40, wantKept: 16, wantDropped: 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTrace(tc.capacity)
			svc, err := New(Config{NsPerIter: 1, Trace: tr})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					var resp wire.Response
					for i := g; i < tc.served; i += 4 {
						req := wire.Request{ID: uint64(i + 1), Op: wire.OpWork, CPU: 1000}
						svc.Do(&req, &resp, nil)
					}
				})
			}
			wg.Wait()
			recs, dropped := tr.Records()
			if len(recs) != tc.wantKept || dropped != tc.wantDropped {
				t.Fatalf("kept %d dropped %d, want %d and %d", len(recs), dropped, tc.wantKept, tc.wantDropped)
			}
			seen := map[uint64]bool{}
			for _, r := range recs {
				if r.ID < 1 || r.ID > uint64(tc.served) || seen[r.ID] {
					t.Fatalf("record id %d unexpected or repeated", r.ID)
				}
				seen[r.ID] = true
				if r.EndNs < r.StartNs {
					t.Fatalf("record %d ends before it starts: %+v", r.ID, r)
				}
				if r.Thread <= 0 && runtime.GOOS == "linux" {
					t.Fatalf("record %d names no thread: %+v", r.ID, r)
				}
			}
			tr.Reset()
			if recs, dropped := tr.Records(); len(recs) != 0 || dropped != 0 {
				t.Fatalf("after Reset: %d records, %d dropped", len(recs), dropped)
			}
		})
	}
}
