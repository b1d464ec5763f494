//go:build linux && !amd64 && !arm64

package ktrace

// syscallNumbers returns nil: concbench has no table of this
// architecture's system-call numbers, so a mechanisms point says it
// cannot count them.
func syscallNumbers() map[string]uint64 { return nil }
