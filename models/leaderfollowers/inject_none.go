//go:build !concbench_regression

package leaderfollowers

// injectRegression is false in every ordinary build: the guarded call in
// conn.HandleEvent is a constant-false branch that the compiler removes,
// so the production build pays nothing for the CI gate's self-test (see
// inject_regression.go).
const injectRegression = false

// injectCost is never called in this build.
func injectCost() {}
