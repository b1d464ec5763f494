package modeltest

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// resources are what a server must give back when it closes.
type resources struct {
	fds, goroutines int
	tids            map[int]bool // the process's threads
}

func count(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	return len(ents)
}

func threadIDs() map[int]bool {
	ids := map[int]bool{}
	ents, _ := os.ReadDir("/proc/self/task")
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids[id] = true
		}
	}
	return ids
}

func takeResources() resources {
	return resources{fds: count("/proc/self/fd"), goroutines: runtime.NumGoroutine(), tids: threadIDs()}
}

// checkReleased verifies that descriptors, goroutines and threads are back
// to what they were: the same descriptors and goroutine count, every thread
// the model reported gone (models' threads exit locked, so the runtime
// destroys them), and no thread created meanwhile still busy.
func checkReleased(t *testing.T, before resources, tids []int) {
	t.Helper()
	runtime.LockOSThread() // see busyNewThreads
	defer runtime.UnlockOSThread()
	alive := func() []int {
		var live []int
		for _, tid := range tids {
			if tid == os.Getpid() {
				// The main thread (m0): a locked goroutine that exits on it
				// cannot take it along; the runtime parks ("wedges") it.
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
				live = append(live, tid)
			}
		}
		return live
	}
	ok := Settle(func() bool {
		now := takeResources()
		return now.fds <= before.fds && now.goroutines <= before.goroutines &&
			len(alive()) == 0 && len(busyNewThreads(before.tids)) == 0
	})
	now := takeResources()
	if !ok {
		if now.fds > before.fds {
			t.Errorf("descriptors: %d open after Close, %d before start:\n%s", now.fds, before.fds, listFDs())
		}
		if now.goroutines > before.goroutines {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: %d after Close, %d before start:\n%s", now.goroutines, before.goroutines, buf)
		}
		if live := alive(); len(live) > 0 {
			t.Errorf("model threads still alive after Close: %v", live)
		}
		if busy := busyNewThreads(before.tids); len(busy) > 0 {
			t.Errorf("threads created while the server ran are still busy after Close: %v", busy)
		}
	}
	t.Logf("threads: %d before start, %d after Close (new idle runtime threads are allowed)", len(before.tids), len(now.tids))
}

func listFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fmt.Fprintf(&b, "  %s -> %s\n", e.Name(), target)
	}
	return b.String()
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
