package registry_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"concbench/models/registry"
)

// modelTables are the documents with a table of every model: each row
// of one starts with the model's name as re's first group, in the model
// table's order.
var modelTables = []struct {
	file string
	re   *regexp.Regexp
}{
	{"README.md", regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|")},
	{filepath.Join("docs", "design.md"), regexp.MustCompile("(?m)^\\| `models/([a-z]+)` \\|")},
}

// tableMismatches returns, per document, a line saying how its model
// table differs from names; none when every table lists exactly names.
func tableMismatches(t *testing.T, names []string) []string {
	var bad []string
	for _, d := range modelTables {
		b, err := os.ReadFile(filepath.Join("..", "..", d.file))
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, m := range d.re.FindAllStringSubmatch(string(b), -1) {
			rows = append(rows, m[1])
		}
		if !slices.Equal(rows, names) {
			bad = append(bad, fmt.Sprintf("%s's model table has rows %v, want one per model in the table's order %v", d.file, rows, names))
		}
	}
	return bad
}

// TestModelsDocumented checks that the README's and docs/design.md's
// model tables have a row per model of the table, in its order.
func TestModelsDocumented(t *testing.T) {
	for _, msg := range tableMismatches(t, registry.Names()) {
		t.Error(msg)
	}
}
