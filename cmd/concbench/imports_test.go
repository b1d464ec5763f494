package main

import (
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// commandImports are the packages a command of this package may import
// beyond the standard library: the command only maps flags onto a
// library call, so it needs the calls and the numbers its usage quotes,
// never the measurement's internals (loadgen, models, the harness's
// runs).
var commandImports = map[string]string{
	"concbench/internal/cli":       "parsing a flag set, renamed flags, CPU pinning, exit statuses",
	"concbench/internal/buildinfo": "what this binary is (version)",
	"concbench/harness":            "the profiles' values that usage texts quote (harness.Profile), never a run",
	"concbench/queueing":           "the closed forms a command's usage or flags name",
}

// TestCommandImports checks that every command file imports only the
// standard library, concbench/programs/... (the commands' library
// calls) and commandImports.
func TestCommandImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if first != "concbench" && !strings.Contains(first, ".") {
				continue // the standard library
			}
			if strings.HasPrefix(path, "concbench/programs/") || commandImports[path] != "" {
				continue
			}
			t.Errorf("%s imports %s: a command may import the standard library, concbench/programs/... and %v", name, path, slices.Sorted(maps.Keys(commandImports)))
		}
	}
}
