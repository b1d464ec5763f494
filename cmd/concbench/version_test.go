package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: "version" and "--version" print the binary's commit line
// and Go version; an argument is refused.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines := strings.Split(out.String(), "\n")
		if !strings.HasPrefix(lines[0], "concbench ") || len(lines) < 2 || !strings.HasPrefix(lines[1], "go: go1.") ||
			!strings.Contains(lines[1], runtime.GOOS+"/"+runtime.GOARCH) {
			t.Errorf("%v printed:\n%s", args, out.String())
		}
	}
	if err := run(context.Background(), []string{"version", "now"}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), `unexpected argument "now"`) {
		t.Errorf("version with an argument: %v", err)
	}
}
