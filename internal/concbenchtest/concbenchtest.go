package concbenchtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var built struct {
	dir  string
	once sync.Once
	bin  string
	err  error
}

// Main runs m's tests with a folder to build concbench into, removed
// after them; call it from the package's TestMain.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "concbench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "concbench tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	built.dir = dir
	return m.Run()
}

// Binary returns concbench built into Main's folder, built on the first
// call and shared: the tests only run it.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() { built.bin, built.err = build(built.dir) })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// build builds concbench/cmd/concbench into dir with the go command of
// the toolchain running the tests.
func build(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("build concbench: no folder to build into (TestMain must call concbenchtest.Main)")
	}
	bin := filepath.Join(dir, "concbench")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(goroot)), "bin", "go"), "build", "-o", bin, "concbench/cmd/concbench")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build concbench: %w\n%s", err, b)
	}
	return bin, nil
}
