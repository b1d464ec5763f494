package wire_test

import (
	"fmt"
	"time"

	"concbench/wire"
)

// A client encodes a request, a server decodes it and answers, and the
// client decodes the response and verifies its checksum and body.
func Example() {
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		panic(err)
	}

	// Client: encode.
	req := wire.Request{ID: 7, Op: wire.OpWork, CPU: 20 * time.Microsecond, Size: 8}
	out := codec.AppendRequest(nil, &req)
	fmt.Printf("%q\n", out)

	// Server: decode (this could be called after every read; it returns 0
	// until the whole request is in the buffer), then answer.
	var got wire.Request
	n, err := codec.DecodeRequest(out, &got)
	fmt.Println(n == len(out), err, got.ID, got.Op, got.CPU, got.Size)
	resp := wire.Response{ID: got.ID, Payload: wire.AppendBody(nil, got.ID, got.Size)}
	back := codec.AppendResponse(nil, &resp)

	// Client: decode and verify.
	var r wire.Response
	if _, err := codec.DecodeResponse(back, &r); err != nil {
		panic(err)
	}
	fmt.Println(r.ID, r.Status, string(r.Payload),
		r.HasChecksum && r.Checksum == wire.Checksum(r.ID, r.Payload), wire.VerifyBody(r.ID, r.Payload))
	// Output:
	// "GET /work?cpu=20us&size=8 HTTP/1.1\r\nHost: concbench\r\nX-Request-Id: 7\r\n\r\n"
	// true <nil> 7 work 20µs 8
	// 7 ok HIJKLMNO true true
}

// A request in the binary protocol, decoded from bytes that arrive in two
// reads.
func ExampleBinary() {
	codec, err := wire.New("binary", wire.Limits{})
	if err != nil {
		panic(err)
	}
	frame := codec.AppendRequest(nil, &wire.Request{ID: 1, Op: wire.OpTransfer, Account: 3, To: 4, Amount: 50})
	fmt.Printf("% x\n", frame[:8])

	var req wire.Request
	n, err := codec.DecodeRequest(frame[:30], &req) // part of the header
	fmt.Println(n, err)
	n, err = codec.DecodeRequest(frame, &req)
	fmt.Println(n, err, req.Op, req.Account, req.To, req.Amount)
	// Output:
	// 43 42 01 04 00 00 00 00
	// 0 <nil>
	// 56 <nil> transfer 3 4 50
}
