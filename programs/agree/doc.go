// Package agree checks that independent runs of one experiment agree:
// every claim of a decided who-wins cell against the same cell of every
// other run (results.Agree), telling low power (decided once, undecided
// next) from a wrong answer (decided once, excluded next). Its runs are
// run folders or aarate's Records; "concbench help agree" and
// docs/usage.md ("agree") describe it.
package agree
