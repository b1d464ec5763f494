package sharedqueue

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		threads int // 0 keeps the suite's setting (4)
		opts    Options
	}{
		{name: "defaults"},
		// One thread: every op, strand run and hand-back goes through the
		// queue on the thread that also polls.
		{name: "threads=1", threads: 1},
		{name: "completion=inline", opts: Options{Completion: Inline}},
		{name: "completion=inline/threads=1", threads: 1, opts: Options{Completion: Inline}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				if tc.threads != 0 {
					cfg.Threads = tc.threads
				}
				s, err := Start(cfg, tc.opts)
				if err == nil {
					t.Cleanup(func() { checkNoOverlap(t, s) })
				}
				return s, err
			})
		})
	}
}

// checkNoOverlap fails t if two handlers were ever inside one shard's
// servant at once.
func checkNoOverlap(t *testing.T, s *Server) {
	t.Helper()
	for _, sh := range s.shards {
		if v := sh.violations.Load(); v != 0 {
			t.Errorf("shard %d: %d handlers entered its servant while another was inside", sh.idx, v)
		}
	}
}
