package leaderfollowers

// The package's tests run with the leader check on: every test that starts
// a server also checks that it never had two leaders (see checkOneLeader).
func init() { checkLeaders = true }
