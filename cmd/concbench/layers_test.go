package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers are the rows of docs/design.md's package picture, top to bottom:
// a package imports only from its own row or a row below it. A package
// named by its path or by a prefix ending in "/".
var layers = []struct {
	name     string
	packages []string
}{
	{"command", []string{"cmd/concbench"}},
	{"programs", []string{"programs/", "queueing"}},
	{"run", []string{"harness", "internal/ktrace", "gate", "gate/build", "loadgen/agent"}},
	{"word, draw", []string{"report", "plots"}},
	{"record, decide", []string{"results"}},
	{"load, serve", []string{"loadgen", "models", "models/", "handleset", "wire", "service"}},
	{"statistics", []string{"stats"}},
	{"machine", []string{"internal/"}},
}

// layerOf returns the row of the package at path (relative to the module
// root), and false for one the picture does not place.
func layerOf(path string) (int, bool) {
	best, row := -1, 0
	for i, l := range layers {
		for _, p := range l.packages {
			if (path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) && len(p) > best {
				best, row = len(p), i
			}
		}
	}
	return row, best >= 0
}

// testHelper reports whether the package at path exists for tests only
// (modeltest, plotstest, testenv, …), which may import what they test.
func testHelper(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, "test") || base == "testenv" || strings.HasPrefix(path, "internal/cmd/")
}

// TestLayers checks the package picture in docs/design.md: every
// package of the module is in a row, and no non-test file imports a
// package of a row above its own.
func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "out" || name == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		dir = filepath.ToSlash(dir)
		if testHelper(dir) {
			return nil
		}
		row, ok := layerOf(dir)
		if !ok {
			t.Errorf("%s: package %s is in no row of docs/design.md's package picture", p, dir)
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(ip, "concbench/")
			if !ok || testHelper(rel) {
				continue
			}
			if r, placed := layerOf(rel); placed && r < row {
				t.Errorf("%s/%s (%s) imports %s (%s, a row above)", dir, name, layers[row].name, rel, layers[r].name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
