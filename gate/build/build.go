package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"concbench/harness"
)

// Tree is where the current tree is: its module root and, if it is in
// a git repository, the repository's root.
type Tree struct {
	ModRoot, GitRoot string
	Rel              string // ModRoot relative to GitRoot
}

// FindTree locates the concbench module around the working directory.
func FindTree() (Tree, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return Tree{}, fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return Tree{}, errors.New("the working directory is not inside a Go module (run the gate from the concbench checkout)")
	}
	t := Tree{ModRoot: filepath.Dir(mod)}
	if _, err := os.Stat(filepath.Join(t.ModRoot, "cmd", "concbench")); err != nil {
		return Tree{}, fmt.Errorf("%s is not the concbench module: %w", t.ModRoot, err)
	}
	if out, err := exec.Command("git", "-C", t.ModRoot, "rev-parse", "--show-toplevel").Output(); err == nil {
		t.GitRoot = strings.TrimSpace(string(out))
		if t.Rel, err = filepath.Rel(t.GitRoot, t.ModRoot); err != nil {
			return Tree{}, err
		}
	}
	return t, nil
}

// Go builds ./cmd/concbench in dir into out, with build tags. Both
// sides are built alike: -trimpath (so that the build cache serves the
// base's unchanged packages from a worktree in another folder) and
// -buildvcs=auto (so that each binary carries the commit it was built
// from, whatever GOFLAGS says).
func Go(ctx context.Context, dir, out, tags string) error {
	args := []string{"build", "-trimpath", "-buildvcs=auto"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "-o", out, "./cmd/concbench")
	return runIn(ctx, dir, "go", args...)
}

// runIn runs a command in dir; its error carries the command's output.
func runIn(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, bytes.TrimSpace(b))
	}
	return nil
}

// Head returns the commit checked out in dir and whether the tree has
// uncommitted changes (harness.GitHead, its error worded for the gate).
func Head(ctx context.Context, dir string) (string, bool, error) {
	commit, dirty, err := harness.GitHead(ctx, dir)
	if err != nil {
		return "", false, fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	return commit, dirty, nil
}

// Base checks rev out in a temporary git worktree under tmp, builds
// concbench there into tmp, and removes the worktree. It returns the
// binary and the commit rev names (as soon as it is known, also on
// failure).
func Base(ctx context.Context, t Tree, rev, tmp string) (bin, commit string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", t.GitRoot, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("git rev-parse: %q is not a commit in %s", rev, t.GitRoot)
	}
	commit = strings.TrimSpace(string(out))
	wt := filepath.Join(tmp, "base-src")
	if err := runIn(ctx, t.GitRoot, "git", "worktree", "add", "--detach", wt, commit); err != nil {
		return "", commit, err
	}
	defer func() {
		// Remove the worktree and its administrative files whatever
		// happened; a failure to do so is reported, not hidden.
		rerr := runIn(context.Background(), t.GitRoot, "git", "worktree", "remove", "--force", wt)
		if rerr != nil {
			rerr = errors.Join(rerr, runIn(context.Background(), t.GitRoot, "git", "worktree", "prune"))
		}
		if rerr != nil && err == nil {
			err = fmt.Errorf("removing the base worktree %s: %w", wt, rerr)
		}
	}()
	bin = filepath.Join(tmp, "concbench-base")
	if err := Go(ctx, filepath.Join(wt, t.Rel), bin, ""); err != nil {
		return "", commit, err
	}
	return bin, commit, nil
}
