// Package service is the application work every concurrency model runs, the
// same code in every model, so that differences between models are the
// models' own: CPU work, blocking work, and a stateful in-memory OLTP ledger.
// A model decodes a wire.Request, calls Service.Do, and encodes the
// wire.Response; only the Active Object model runs ledger operations on its
// own servant (Ledger) and uses AppendResult to answer identically.
//
// # CPU work
//
// A request's CPU work is a fixed amount of computation, not a wall-clock
// spin: Spin runs a loop of integer operations whose result the compiler
// cannot discard, for round(cpu / NsPerIter) iterations. New measures
// NsPerIter once (Calibration: the median of 7 samples of a few
// milliseconds each, after warm-up; about 25 ms in all) unless
// Config.NsPerIter supplies it. Under CPU contention a request's wall time
// therefore grows while its work stays the same — intended: a model that
// oversubscribes the cores shows it as latency, not as less work. Record the
// Calibration with every result; CPU work in nanoseconds means "the
// computation that took this long on an idle core of this machine".
//
// # Blocking work
//
// A request's blocking work blocks the handling OS thread in nanosleep(2)
// for the duration, modelling a synchronous call to a back end (a database,
// another service) that holds the thread. Every model pays it the same way:
// in the thread-based models it occupies one of their threads; in the
// goroutine-per-connection model it pins one runtime M per blocked
// goroutine, as any blocking system call does.
//
// # The ledger
//
// The ledger holds accounts 0..Accounts-1 with int64 balances and offers
// balance, deposit, withdraw, transfer and total, in two forms:
//   - Ledger, the unsynchronized servant, touched by one thread only; it may
//     hold a shard [first, first+n) of the accounts. Its Withdraw never
//     waits.
//   - Monitor, the monitor object: one Ledger of all accounts behind a
//     futex-based mutex, safe from many threads; its Withdraw is a guarded
//     method that waits on a condition (funds) until the balance suffices or
//     a timeout passes.
//
// Invariant: money is conserved and no balance is negative — the sum of the
// balances always equals accounts × initial + deposited − withdrawn
// (transfers move money, they neither create nor destroy it). Audit checks
// it; tests, and the conformance suite after concurrent transfers, rely on
// it. Errors are exported sentinels, mapped to wire statuses by StatusOf.
//
// The money is bounded: a Supply holds the ledger's money (initial +
// deposited − withdrawn) and refuses a deposit that would take it above
// math.MaxInt64 (ErrOverflow, wire status overflow, HTTP 422), changing
// nothing. Every balance is a non-negative part of that money, so no sum of
// balances — the total, or any shard's — can wrap, and /total is exact at
// the limit. Shards of one ledger (the Active Object's servants) share one
// Supply and move money between each other with Debit and Credit, which
// leave it alone.
//
// # Trace
//
// Config.Trace (concbench serve --trace N) makes Do record, per request,
// its id, the CLOCK_MONOTONIC times its service started and ended and the
// OS thread that served it, in a preallocated Trace: the server's own
// measurement of the service time, which concbench validate joins with the
// load generator's timestamps.
// Off (nil, the default) it costs one nil check per request; the Active
// Object model, whose servant calls Work directly, is not traced.
package service
