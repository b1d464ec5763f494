package harness

import "strconv"

// fmtShare writes a CPU quota's share of one CPU: "0.5".
func fmtShare(share float64) string { return strconv.FormatFloat(share, 'g', 4, 64) }
