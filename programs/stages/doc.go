// Package stages says where each server's time goes, per request: it
// runs each configuration (by default the lean profile's — real nginx
// with one worker and the models beside it, one thread each, under the
// same CPU quota) under a closed loop of HTTP requests with no work, and
// over each window reads every server thread's CPU time and context
// switches (/proc/<pid>/task/<tid>/schedstat) and samples the server's
// threads with perf record. perf report's samples, by symbol, are
// grouped into stages (classify.go): the kernel's TCP/IP path, its
// system-call entry and epoll, io_uring, file references, the scheduler,
// futexes; the Go runtime; and the server's own code, one stage per Go
// package of the module (wire: HTTP parse and respond; connio; the
// model's package) or per binary (nginx, libc). A stage's cost per
// request is its share of the samples times the server's CPU time per
// request, so the stages of a column add up to its CPU per request.
//
// The table is medians over the rounds (the configurations in turn,
// the order reversed every other round) with their ranges. What it
// cannot say: perf samples the CPU clock, so time a thread spends
// waiting is in no stage; the sampling's own interrupts add about 1 % to
// the CPU measured; the window's edges include a few milliseconds of
// the warm-up's end. Where perf is missing or refused the CPU and
// switch rows are still measured and the table says why there are no
// stages.
package stages
