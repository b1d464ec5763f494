package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

// TestText: the first line names the binary's commit, the second the Go
// version and platform.
func TestText(t *testing.T) {
	lines := strings.Split(Text(), "\n")
	if !strings.HasPrefix(lines[0], "concbench ") || len(lines) < 2 || !strings.HasPrefix(lines[1], "go: go1.") ||
		!strings.Contains(lines[1], runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("Text() =\n%s", Text())
	}
}
