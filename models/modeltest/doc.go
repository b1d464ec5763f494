// Package modeltest is the conformance suite every concurrency model must
// pass, in the manner of golang.org/x/net/nettest.TestConn: one set of tests
// run against any implementation of models.Server, for both wire protocols.
//
// A model's test calls
//
//	func TestConformance(t *testing.T) {
//		modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
//			return mymodel.Start(cfg, mymodel.Options{})
//		})
//	}
//
// and runs under the race detector. The suite checks, for each protocol:
//
//   - Pipelined: 256 concurrent connections, each with several rounds of
//     pipelined requests of varied sizes; every response matches its request
//     (id, checksum, body) and arrives in request order.
//   - ByteAtATime: requests written one byte per write.
//   - PartialWrites: responses far larger than the socket buffers, requested
//     back to back before the client reads, so the server must finish them
//     with partial writes.
//   - SlowReader: a client that requests many large responses and stops
//     reading; other connections keep their service, the server's live heap
//     stays bounded, and the slow reader later gets every response intact.
//   - AbruptDisconnect: clients that vanish mid-request or before reading
//     their responses (with FIN and with RST); they are cleaned up and
//     counted, and the server keeps serving.
//   - Malformed: malformed and oversized requests get the protocol's error
//     response and a closed connection, are counted by kind, and do not
//     disturb concurrent well-behaved connections.
//   - MaxConns: with Config.MaxConns 2, a third connection is refused at
//     once with status unavailable (HTTP 503) and a reason naming the
//     cap, closed, and counted as refused; the first two keep their
//     service, and a connection closed frees its place.
//   - BadConfig: a backlog, connection cap or pending-output bound out of
//     range fails Start with an error naming it and leaves nothing open
//     (every model validates its Config before it listens:
//     models.Config.Resolve).
//   - ConnectionClose (HTTP): "Connection: close" is honoured.
//   - Ledger: concurrent transfers over many connections conserve money.
//   - LedgerLimits: a deposit that would take the ledger's money past
//     math.MaxInt64 is refused with StatusOverflow and changes nothing;
//     /total is exact at the limit (it never wraps); transfers there
//     succeed.
//   - Close: with idle, half-sent and busy connections open, Close returns
//     and leaves no goroutines, descriptors or model threads behind.
//
// Every subtest also checks, after closing its server, that the number of
// open descriptors and goroutines is back to what it was before the server
// started, and that every OS thread the server reported in
// Stats.PerThread has exited (models' threads exit locked, so the Go
// runtime destroys them).
//
// No test asserts a timing. Waiting for the server is done by observing
// state (its Stats, /proc), never by sleeping.
package modeltest
