package sharedqueue

// The package's tests run with the owner check on: every test that starts
// a server also checks that no shard's handlers overlapped (see
// checkNoOverlap).
func init() { checkStrands = true }
