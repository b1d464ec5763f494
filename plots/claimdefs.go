package plots

import "concbench/results"

// claim is one of the seed's claims about Leader/Followers (LF) and
// Half-Sync/Half-Reactive (HS/HR) that the Claims table tests: LF's
// per-request cost is lower than HS/HR's.
type claim struct {
	short  string // the table's name for it: "context switches"
	text   string // the claim, e.g. "LF needs no context switch per request; HS/HR pays one"
	metric results.Metric
	unit   string // the metric's unit in the table
}

// claims are the claims the table tests, in its order; the cost figures
// (ctxsw, cpu, allocs) draw their metrics.
var claims = []claim{
	{short: "context switches", text: "LF needs no context switch per request; HS/HR pays one for the hand-off",
		metric: results.CtxswPerReq, unit: "ctxsw/req"},
	{short: "CPU", text: "LF avoids the hand-off's synchronization and copying, so it spends less CPU per request than HS/HR",
		metric: results.CPUPerReq, unit: "µs/req"},
	{short: "allocations", text: "LF needs no allocation per request; HS/HR allocates one to hand each request over",
		metric: results.AllocsPerReq, unit: "allocs/req"},
}
