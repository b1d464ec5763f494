package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"concbench/internal/testenv"
)

// gitRepo makes a git repository in a temporary folder holding a module
// whose ./cmd/concbench has main as its source, committed.
func gitRepo(t *testing.T, main string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, s string) {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/gatetest\n\ngo 1.26\n")
	write("cmd/concbench/main.go", main)
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "."}, {"-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "base"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, b)
		}
	}
	return dir
}

// worktrees returns the repository's worktree count.
func worktrees(t *testing.T, repo string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "worktree ")
}

// TestBase checks the base build on a throwaway repository: a
// commit that builds gives a binary; one that does not, or a revision
// that is not a commit, gives the error with the compiler's or git's
// words; the temporary worktree is removed in every case.
func TestBase(t *testing.T) {
	testenv.EndToEnd(t)
	ctx := context.Background()
	good := gitRepo(t, "package main\n\nfunc main() {}\n")
	tr := Tree{ModRoot: good, GitRoot: good, Rel: "."}
	tmp := t.TempDir()
	bin, commit, err := Base(ctx, tr, "HEAD", tmp)
	if err != nil {
		t.Fatalf("Base: %v", err)
	}
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 || len(commit) != 40 {
		t.Errorf("binary %s (%v), commit %q", bin, err, commit)
	}
	if n := worktrees(t, good); n != 1 {
		t.Errorf("%d worktrees after the build, want the main one only", n)
	}

	bad := gitRepo(t, "package main\n\nfunc main() { undefinedThing() }\n")
	_, commit, err = Base(ctx, Tree{ModRoot: bad, GitRoot: bad, Rel: "."}, "HEAD", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "undefined: undefinedThing") || commit == "" {
		t.Errorf("a base that does not compile: %v (commit %q), want the compiler's error and the commit", err, commit)
	}
	if n := worktrees(t, bad); n != 1 {
		t.Errorf("%d worktrees after a failed build, want the main one only", n)
	}

	if _, _, err := Base(ctx, tr, "no-such-revision", t.TempDir()); err == nil || !strings.Contains(err.Error(), `"no-such-revision" is not a commit`) {
		t.Errorf("a revision that does not exist: %v", err)
	}
}
