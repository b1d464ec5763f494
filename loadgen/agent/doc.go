// Package agent generates load from many hosts: agents ("concbench agent")
// each run a share of a run with loadgen.Run, and a coordinator
// ("concbench load --agents") splits the run over them, starts them
// together, and merges what they measured into one loadgen.Result, as
// mutilate and Lancet do. Agents are started by whatever starts programs
// on the hosts (ssh, the user's orchestrator): an agent is one binary
// with flags, and this package launches nothing.
//
// # Participants
//
//   - Agent: serves coordinators on a listener. It refuses one without
//     its token (compared in constant time, as SHA-256 digests, so that
//     neither contents nor length leak), a target outside the prefixes it
//     was started with (default loopback only; a name is resolved by the
//     agent, every address it resolves to must be allowed, and the run
//     uses the address checked), an interval-log path (an agent writes no
//     files for a coordinator), and a second coordinator while it runs.
//   - Coordinator: splits the configuration (Split: connections as evenly
//     as they go, the rate in proportion, workers per agent, a seed per
//     agent), estimates each agent's clock offset (Estimate), sends the
//     shares with a common start time, and merges the results
//     (loadgen.Merge). The coordinator generates no load itself: its
//     host only coordinates, so that nothing it does competes with a
//     generator; run an agent on it (on loopback) to use it.
//   - Result: the merged loadgen.Result, shown as its own fields in JSON
//     and text, with the common start and a Report per agent (its share,
//     clock offset, start skew, error, and its own Result with its
//     histograms).
//
// # Protocol
//
// One TCP connection per run, from the coordinator to the agent. Every
// message is a frame: a 4-byte big-endian length (at most 64 MiB), then a
// JSON object whose "type" says what it is. Version 1:
//
//	coordinator → agent   hello    {version, token}
//	agent → coordinator   welcome  {version, allow}      or error {error}, then close
//	coordinator → agent   ping     {t1}                  (Samples times)
//	agent → coordinator   pong     {t1, t2, t3}
//	coordinator → agent   run      {config, start_unix_ns, hold}
//	agent → coordinator   started  {target}              or error {error}, then close
//	agent → coordinator   drained  {}                    (hold) window over, requests drained
//	coordinator → agent   release  {}                    (hold) every agent drained
//	agent → coordinator   result   {result, error}       after the run
//
// A hello with another version is refused with an error naming both
// versions; a later version may add fields (JSON ignores unknown ones)
// but changes the version for anything a version-1 peer would misread.
// The run's config is a loadgen.Config in its JSON form; start_unix_ns is
// the common start in the agent's own clock (the coordinator has applied
// the offset), which the agent passes as Config.StartAt: it opens and
// primes its connections first, then its schedule (warm-up, window)
// starts at that instant. The result is the agent's loadgen.Result in its
// JSON form, histograms encoded (HDR V2 compressed), never percentiles
// alone; error is loadgen.Run's error, if any (the result is then
// partial or absent).
//
// Hold is set when the coordinator's caller measures the server over the
// window (Config.OnWindow, as the harness does): each agent then reports
// drained when its workers have drained their requests in flight and
// keeps its connections open until released, so that the coordinator
// calls OnWindow(false) after every agent's window and before any
// connection's teardown — as loadgen.Run does in one process. It calls
// OnWindow(true) 20 ms (at most half the warm-up) before the common
// window starts.
//
// # Clocks
//
// Each ping/pong is an NTP exchange: T1 and T4 by the coordinator's clock
// (T4 derived from the monotonic clock, so that a step of the wall clock
// during the exchange changes nothing), T2 and T3 by the agent's. The
// sample with the shortest round trip gives the offset, ((T2−T1) +
// (T3−T4)) / 2, with an uncertainty of half that round trip, which bounds
// its error whatever the paths' asymmetry. Both are recorded (Report.Clock).
// The coordinator refuses to run when an uncertainty exceeds
// MaxUncertainty (default 1 ms: the agents' windows may then disagree by
// that much) or an offset exceeds MaxOffset (default 1 s: the offset is
// corrected, but hosts a second apart do not keep their clocks). Latency
// never crosses hosts — each agent times its own requests with its own
// clock — so the offset matters only for the common start. After the run
// each agent's window start, corrected by its offset, is compared with the
// common start plus the warm-up: beyond 1% of the window (the rate check's
// tolerance) plus the uncertainty, the merged run is invalid (clock): the
// agent's connections took longer to open than the lead.
//
// # Timeouts and failures
//
// Each step before the run has 10 s (dialling 5 s); the coordinator waits
// for a result until the window's end plus the request timeout and 30 s.
// Any failure before every agent has accepted its share — an unreachable
// agent, a wrong token, a refused target, a clock beyond the bounds —
// aborts the whole run: the coordinator closes every connection, which
// makes the agents that had accepted abandon theirs, and returns an error
// without a Result. After that, an agent whose connection ends without a
// result (it died or was stopped), whose result does not come in time, or
// whose run failed, is named in the merged verdict, which is invalid
// (aborted) with that reason; the other agents' results are merged all
// the same, so what they measured is kept. On the agent's side, the
// coordinator's connection closing (or anything it sends) during a run
// cancels the run: an agent never runs on for a coordinator that has gone.
//
// The control connection is neither encrypted nor authenticated beyond the
// token, which crosses it in clear: run agents on a network you trust, or
// tunnel the control port (ssh -L).
package agent
