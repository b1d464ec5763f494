package plots

import "concbench/results"

// Claim is one of the seed's claims about Leader/Followers (LF) and
// Half-Sync/Half-Reactive (HS/HR) that the Claims table tests: LF's
// per-request cost is lower than HS/HR's.
type Claim struct {
	Short  string // the table's name for it: "context switches"
	Text   string // the claim, e.g. "LF needs no context switch per request; HS/HR pays one"
	Metric results.Metric
	Unit   string // the metric's unit in the table
}

// Claims are the claims the table tests, in its order; the cost figures
// (ctxsw, cpu, allocs) draw their metrics.
var Claims = []Claim{
	{Short: "context switches", Text: "LF needs no context switch per request; HS/HR pays one for the hand-off",
		Metric: results.CtxswPerReq, Unit: "ctxsw/req"},
	{Short: "CPU", Text: "LF avoids the hand-off's synchronization and copying, so it spends less CPU per request than HS/HR",
		Metric: results.CPUPerReq, Unit: "µs/req"},
	{Short: "allocations", Text: "LF needs no allocation per request; HS/HR allocates one to hand each request over",
		Metric: results.AllocsPerReq, Unit: "allocs/req"},
}
