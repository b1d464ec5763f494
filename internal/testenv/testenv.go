// Package testenv sorts the tests into two tiers: unit tests, which
// "go test -short" runs in seconds, and end-to-end tests, which start
// servers, drive load or build the command and take minutes; make test
// (what CI runs) runs both.
package testenv

import "testing"

// EndToEnd marks t as an end-to-end test: it is skipped under -short.
func EndToEnd(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end (starts servers, drives load or builds the command): make test runs it, -short skips it")
	}
}
