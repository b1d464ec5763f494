// Package compare compares two run folders configuration by
// configuration: for every load point both measured and every metric
// asked for, B's median as a factor of A's with a 95% distribution-free
// interval (Hodges–Lehmann, Moses) and the Mann–Whitney p-value, over the
// valid repetitions, with a verdict per row. The method is described in
// "concbench help compare" and docs/usage.md ("compare").
package compare
