package loadgen

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadsAtNice counts this process's threads whose nice value is nice
// (/proc/self/task/*/stat, field 19).
func threadsAtNice(t *testing.T, nice int) int {
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread has exited
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 16 && fields[16] == strconv.Itoa(nice) {
			n++
		}
	}
	return n
}

// TestNice checks that Config.Nice is given to every worker's thread:
// during the window, this process has at least one thread at that nice
// value per worker.
func TestNice(t *testing.T) {
	const nice = 7 // positive: allowed without privileges
	s := startServer(t, "http", nil)
	atStart := -1
	mustRun(t, Config{
		Addr: s.addr(), Conns: 2, Workers: 2, Closed: true, Nice: nice,
		Warmup: 100 * time.Millisecond, Requests: 200, Seed: 1,
		OnWindow: func(start bool) {
			if start {
				atStart = threadsAtNice(t, nice)
			}
		},
	})
	if atStart < 2 {
		t.Errorf("%d threads at nice %d during the window, want one per worker (2)", atStart, nice)
	}
}
