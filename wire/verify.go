package wire

import "fmt"

// Verify checks that resp is a correct answer to req: it carries req's ID,
// a checksum that matches its payload (when the response carries one), and,
// for a successful OpWork request, exactly the body AppendBody(req.ID,
// req.Size). Ledger results are not checked here (their values depend on
// other requests). The error says which check failed.
func Verify(req *Request, resp *Response) error {
	if resp.ID != req.ID {
		return fmt.Errorf("response id %d for request id %d", resp.ID, req.ID)
	}
	if resp.HasChecksum {
		if c := Checksum(resp.ID, resp.Payload); c != resp.Checksum {
			return fmt.Errorf("request %d: checksum %08x, payload's is %08x", req.ID, resp.Checksum, c)
		}
	}
	if req.Op != OpWork || resp.Status != StatusOK {
		return nil
	}
	if len(resp.Payload) != req.Size {
		return fmt.Errorf("request %d: body of %d bytes, asked for %d", req.ID, len(resp.Payload), req.Size)
	}
	if !VerifyBody(req.ID, resp.Payload) {
		return fmt.Errorf("request %d: body is not the request's pattern", req.ID)
	}
	return nil
}
