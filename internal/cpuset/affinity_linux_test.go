package cpuset

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// affinityOf reads Cpus_allowed_list from /proc/<pid>/status.
func affinityOf(pid int) (Set, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return Parse(strings.TrimSpace(v))
		}
	}
	return nil, fmt.Errorf("no Cpus_allowed_list in /proc/%d/status", pid)
}
