// Package build builds the gate's two sides: it finds the concbench
// module around the working directory (FindTree), builds the current
// tree (Go), and builds a base revision in a temporary git worktree that
// it removes afterwards (Base). Both sides are built alike, so that only
// their code differs.
package build
