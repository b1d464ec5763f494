package agent

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"concbench/loadgen"
)

// Version is the protocol version this package speaks. A peer with
// another version is refused with a message naming both.
const Version = 1

// maxFrame bounds a frame's payload: a Result with its encoded histograms
// is a few hundred KiB at most.
const maxFrame = 64 << 20

// The message types.
const (
	msgHello   = "hello"   // coordinator → agent: version and token
	msgWelcome = "welcome" // agent → coordinator: accepted; the targets it allows
	msgPing    = "ping"    // coordinator → agent: T1
	msgPong    = "pong"    // agent → coordinator: T1 echoed, T2 (receipt), T3 (reply)
	msgRun     = "run"     // coordinator → agent: the share's configuration and start time
	msgStarted = "started" // agent → coordinator: the configuration is accepted, the run is under way
	msgDrained = "drained" // agent → coordinator (hold): the window is over, requests drained, connections still open
	msgRelease = "release" // coordinator → agent (hold): close the connections and send the result
	msgResult  = "result"  // agent → coordinator: the run's Result, or the error that prevented it
	msgError   = "error"   // either way: a refusal or failure; the sender closes after it
)

// message is every message of the protocol: Type says which fields mean
// something (see the package documentation).
type message struct {
	Type    string `json:"type"`
	Version int    `json:"version,omitempty"`
	Token   string `json:"token,omitempty"`
	Error   string `json:"error,omitempty"`
	// Allow lists the target prefixes an agent accepts (welcome).
	Allow []string `json:"allow,omitempty"`
	// T1, T2, T3 are wall-clock times in Unix ns (ping, pong).
	T1 int64 `json:"t1,omitempty"`
	T2 int64 `json:"t2,omitempty"`
	T3 int64 `json:"t3,omitempty"`
	// Config is the agent's share (run); StartUnixNs the common start in
	// the agent's clock (run), the offset already applied.
	Config      *loadgen.Config `json:"config,omitempty"`
	StartUnixNs int64           `json:"start_unix_ns,omitempty"`
	// Hold asks the agent to report the end of its window (drained) and
	// keep its connections open until released (run).
	Hold bool `json:"hold,omitempty"`
	// Target is the address the agent resolved and will drive (started).
	Target string `json:"target,omitempty"`
	// Result is the agent's Result (result).
	Result *loadgen.Result `json:"result,omitempty"`
}

// writeMsg writes m as one frame: a 4-byte big-endian length, then m as
// JSON.
func writeMsg(w io.Writer, m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxFrame {
		return fmt.Errorf("agent protocol: %s message of %d bytes exceeds the frame limit %d", m.Type, len(b), maxFrame)
	}
	buf := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	_, err = w.Write(append(buf, b...))
	return err
}

// readMsg reads one frame. An EOF before the frame's first byte is
// io.EOF; one inside it io.ErrUnexpectedEOF.
func readMsg(r io.Reader) (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("agent protocol: frame of %d bytes exceeds the limit %d (not a concbench peer?)", n, maxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	m := &message{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("agent protocol: malformed message: %w", err)
	}
	return m, nil
}

// expect reads one message within timeout and checks its type; an error
// message from the peer is returned as an error carrying its text.
func expect(c net.Conn, typ string, timeout time.Duration) (*message, error) {
	if timeout > 0 {
		c.SetReadDeadline(time.Now().Add(timeout))
		defer c.SetReadDeadline(time.Time{})
	}
	m, err := readMsg(c)
	switch {
	case err != nil:
		return nil, err
	case m.Type == msgError:
		return nil, &PeerError{Text: m.Error}
	case m.Type != typ:
		return nil, fmt.Errorf("agent protocol: expected a %s message, got %q", typ, m.Type)
	}
	return m, nil
}

// PeerError is an error the other side reported (an error message): a
// refusal, or the failure of its part.
type PeerError struct{ Text string }

func (e *PeerError) Error() string { return e.Text }

// tokenEqual compares two tokens in time independent of their contents
// and lengths (their SHA-256 digests, compared in constant time).
func tokenEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
