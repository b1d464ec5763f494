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
