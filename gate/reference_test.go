package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadReference(t *testing.T) {
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{name: "commented", text: "# why\n\n  b975a35d  \n# more\n", want: "b975a35d"},
		{name: "empty", text: "# only comments\n", err: "names no revision"},
		{name: "two words", text: "b975a35 HEAD\n", err: "is not one revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reference")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadReference(path)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ReadReference = %q, %v; want an error containing %q", got, err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("ReadReference = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := ReadReference(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file: no error")
	}
	// The repository's own reference must be readable.
	if _, err := ReadReference(filepath.Join("..", ReferenceFile)); err != nil {
		t.Errorf("the committed reference: %v", err)
	}
}
