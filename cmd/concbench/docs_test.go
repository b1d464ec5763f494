package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"concbench/harness"
)

// TestProfilesDocumented checks the profile list against its one source,
// harness.ProfileNames, in every place that lists it: bench's usage,
// docs/profiles.md (a section per profile, and none for a profile that
// does not exist) and the Makefile's bench target, which points there.
func TestProfilesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "profiles.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)$`).FindAllStringSubmatch(string(doc), -1) {
		sections = append(sections, m[1])
	}
	if !slices.Equal(sections, harness.ProfileNames) {
		t.Errorf("docs/profiles.md has sections %v, want one per profile in harness.ProfileNames' order %v", sections, harness.ProfileNames)
	}
	usage := benchUsage[strings.Index(benchUsage, "Profiles (--profile"):]
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^  (\S+) {2,}`).FindAllStringSubmatch(usage, -1) {
		listed = append(listed, m[1])
	}
	if !slices.Equal(listed, harness.ProfileNames) {
		t.Errorf("bench's usage lists profiles %v, want %v", listed, harness.ProfileNames)
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "docs/profiles.md") {
		t.Error("the Makefile's bench target does not point to docs/profiles.md")
	}
}

// TestDocLinks checks every relative link of the README and docs/: the
// file exists, and a #fragment names one of its headings (GitHub's
// anchors: lower case, punctuation dropped, spaces as hyphens).
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, frag := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				if _, serr := os.Stat(path); serr != nil {
					t.Errorf("%s: link to %s: %v", filepath.Base(f), m[0], serr)
				}
				continue
			}
			if frag != "" && !slices.Contains(anchors(string(body)), frag) {
				t.Errorf("%s: link %s: no heading with anchor %q in %s", filepath.Base(f), m[0], frag, filepath.Base(path))
			}
		}
	}
}

// anchors returns the GitHub anchors of a Markdown file's headings.
func anchors(md string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(md, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '—' && r != '–' && r != '→' && r != '÷' && r != '×':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
