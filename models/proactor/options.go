package proactor

import (
	"cmp"
	"fmt"
)

// Receive modes, for Options.Recv.
const (
	// RecvAuto uses multishot receives where the kernel supports them
	// (Linux 6.0), otherwise single-shot receives re-armed after each
	// completion. Start probes the kernel; Stats.Variant says which ran.
	RecvAuto = ""
	// RecvMultishot requires multishot receives: Start fails without them.
	RecvMultishot = "multishot"
	// RecvSingle arms one single-shot receive at a time per connection,
	// re-armed after each completion, even where multishot is supported
	// (for comparison).
	RecvSingle = "single"
)

// ModeRingPerThread is the work-sharing mode, the only one implemented:
// each dispatcher thread owns a ring and the connections accepted on it.
// See the package documentation for why.
const ModeRingPerThread = "ring-per-thread"

// Defaults of the Options fields.
const (
	DefaultBuffers    = 1024
	DefaultBufferSize = 4096
	DefaultEntries    = 512
	// cqPerSQ is the completion queue's size relative to the submission
	// queue: multishot operations post many CQEs per SQE.
	cqPerSQ = 8
)

// Options are the model's own settings.
type Options struct {
	// Recv is the receive mode: RecvAuto (the default), RecvMultishot or
	// RecvSingle.
	Recv string
	// Buffers is the number of provided receive buffers per ring (a power
	// of two, at most 32768; 0 means DefaultBuffers). A connection holds a
	// buffer only from the completion that fills it until its bytes are
	// copied into the connection's input buffer, within the same dispatch.
	Buffers int
	// BufferSize is the size of each provided buffer in bytes (0 means
	// DefaultBufferSize).
	BufferSize int
	// Entries is the submission queue size per ring (a power of two, at
	// most 4096; 0 means DefaultEntries); the completion queue is 8 times
	// larger.
	Entries int
}

// withDefaults returns o with zero fields replaced by their defaults, or an
// error naming the first field out of range.
func (o Options) withDefaults() (Options, error) {
	o.Buffers = cmp.Or(o.Buffers, DefaultBuffers)
	o.BufferSize = cmp.Or(o.BufferSize, DefaultBufferSize)
	o.Entries = cmp.Or(o.Entries, DefaultEntries)
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	switch {
	case o.Recv != RecvAuto && o.Recv != RecvMultishot && o.Recv != RecvSingle:
		return o, fmt.Errorf("proactor: receive mode %q (accepted: %q, %q, or empty for automatic)", o.Recv, RecvMultishot, RecvSingle)
	case !pow2(o.Buffers) || o.Buffers > 1<<15:
		return o, fmt.Errorf("proactor: %d buffers (accepted: a power of two up to 32768)", o.Buffers)
	case o.BufferSize < 64 || o.BufferSize > 1<<20:
		return o, fmt.Errorf("proactor: buffer size %d (accepted: 64 bytes to 1 MiB)", o.BufferSize)
	case !pow2(o.Entries) || o.Entries > 4096:
		return o, fmt.Errorf("proactor: %d ring entries (accepted: a power of two up to 4096)", o.Entries)
	}
	return o, nil
}

// variant is Stats.Variant: the work-sharing mode and the receive mode.
func variant(multishot bool) string {
	recv := RecvSingle
	if multishot {
		recv = RecvMultishot
	}
	return "mode=" + ModeRingPerThread + ",recv=" + recv
}
