package uring

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unsafe"
)

// ErrUnsupported is returned where io_uring does not exist (any operating
// system but Linux).
var ErrUnsupported = errors.New("uring: io_uring requires Linux")

// ErrClosed is returned by operations on a closed Ring.
var ErrClosed = errors.New("uring: ring closed")

// SQE is a submission queue entry, struct io_uring_sqe of
// include/uapi/linux/io_uring.h (64 bytes). Field names follow the kernel's;
// where the kernel has a union, the field is named after its most common
// member and the others are listed in its comment. The Prep methods fill an
// SQE for one operation; an SQE obtained from Ring.GetSQE is zeroed.
type SQE struct {
	Opcode Op     // IORING_OP_*
	Flags  uint8  // IOSQE_* (SQEFixedFile, SQEBufferSelect, …)
	Ioprio uint16 // ioprio; for send/recv/accept: the RecvMultishot, AcceptMultishot, … flags
	Fd     int32  // the descriptor (or registered-file index with SQEFixedFile)
	Off    uint64 // off / addr2 / cmd_op
	Addr   uint64 // addr / splice_off_in: a buffer address, or the user_data to cancel
	Len    uint32 // buffer length, or a count
	// OpFlags is the per-operation flags union: rw_flags, msg_flags,
	// accept_flags, cancel_flags, timeout_flags, poll32_events, …
	OpFlags  uint32
	UserData uint64 // returned unchanged in the operation's CQEs
	BufIndex uint16 // buf_index / buf_group (the provided-buffer group with SQEBufferSelect)
	// Personality selects a registered credential set.
	Personality uint16
	SpliceFdIn  int32  // splice_fd_in / file_index / addr_len
	Addr3       uint64 // addr3
	_           uint64 // __pad2
}

// CQE is a completion queue entry, struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64 // the SQE's UserData
	Res      int32  // the result: a count or descriptor, or a negated errno
	Flags    uint32 // CQEFBuffer, CQEFMore, …; the buffer id in the upper 16 bits
}

// The structure sizes are the kernel ABI: a compile error here means a
// field was added or removed.
var (
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(CQE{}) - 16]byte
	_ [16 - unsafe.Sizeof(CQE{})]byte
)

// More reports whether the operation that produced c (a multishot one) will
// produce further CQEs (IORING_CQE_F_MORE). A multishot operation has ended
// when a CQE comes without it.
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// BufferID returns the id of the provided buffer the kernel filled and
// whether there is one (IORING_CQE_F_BUFFER).
func (c *CQE) BufferID() (uint16, bool) {
	return uint16(c.Flags >> CQEBufferShift), c.Flags&CQEFBuffer != 0
}

// Err returns the CQE's error (the negated errno in Res), or nil when Res is
// not negative.
func (c *CQE) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return syscall.Errno(-c.Res)
}

// Op is an io_uring operation code (enum io_uring_op).
type Op uint8

// Operation codes, in the kernel's order.
const (
	OpNop Op = iota
	OpReadv
	OpWritev
	OpFsync
	OpReadFixed
	OpWriteFixed
	OpPollAdd
	OpPollRemove
	OpSyncFileRange
	OpSendmsg
	OpRecvmsg
	OpTimeout
	OpTimeoutRemove
	OpAccept
	OpAsyncCancel
	OpLinkTimeout
	OpConnect
	OpFallocate
	OpOpenat
	OpClose
	OpFilesUpdate
	OpStatx
	OpRead
	OpWrite
	OpFadvise
	OpMadvise
	OpSend
	OpRecv
	OpOpenat2
	OpEpollCtl
	OpSplice
	OpProvideBuffers
	OpRemoveBuffers
	OpTee
	OpShutdown
	OpRenameat
	OpUnlinkat
	OpMkdirat
	OpSymlinkat
	OpLinkat
	OpMsgRing
	OpFsetxattr
	OpSetxattr
	OpFgetxattr
	OpGetxattr
	OpSocket
	OpUringCmd
	OpSendZC
	OpSendmsgZC
	OpReadMultishot
	OpWaitid
	OpFutexWait
	OpFutexWake
	OpFutexWaitv
	OpFixedFdInstall
	OpFtruncate
	OpBind
	OpListen
	OpRecvZC
	OpEpollWait
	OpReadvFixed
	OpWritevFixed
	OpPipe
)

// opNames must match the Op constants.
var opNames = [...]string{
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
	"SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL",
	"LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ",
	"WRITE", "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE",
	"PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT",
	"SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET",
	"URING_CMD", "SEND_ZC", "SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE",
	"FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT",
	"READV_FIXED", "WRITEV_FIXED", "PIPE",
}

var _ [len(opNames) - int(OpPipe) - 1]struct{} // opNames has one name per Op constant

// String returns the kernel's name of the operation without its IORING_OP_
// prefix, or OP_n for an operation this package does not name.
func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("OP_%d", uint8(op))
}

// SQE flags (sqe->flags, IOSQE_*).
const (
	SQEFixedFile      = 1 << 0 // Fd is an index into the registered files
	SQEIODrain        = 1 << 1 // issue after every earlier SQE completed
	SQEIOLink         = 1 << 2 // the next SQE starts when this one completes
	SQEIOHardlink     = 1 << 3 // like SQEIOLink, not broken by an error
	SQEAsync          = 1 << 4 // always go to the io-wq worker pool
	SQEBufferSelect   = 1 << 5 // pick a provided buffer from group BufIndex
	SQECQESkipSuccess = 1 << 6 // post no CQE when the operation succeeds
)

// Setup flags (io_uring_params.flags, IORING_SETUP_*), for Options.Flags.
const (
	SetupIOPoll       = 1 << 0
	SetupSQPoll       = 1 << 1
	SetupSQAff        = 1 << 2
	SetupCQSize       = 1 << 3 // set by New when Options.CQEntries is given
	SetupClamp        = 1 << 4
	SetupAttachWQ     = 1 << 5
	SetupRDisabled    = 1 << 6
	SetupSubmitAll    = 1 << 7 // keep submitting a batch after an SQE fails to prepare
	SetupCoopTaskrun  = 1 << 8
	SetupTaskrunFlag  = 1 << 9
	SetupSQE128       = 1 << 10
	SetupCQE32        = 1 << 11
	SetupSingleIssuer = 1 << 12 // only the creating thread may submit (and register)
	SetupDeferTaskrun = 1 << 13 // completion work runs only when the issuer waits for events
	SetupNoMmap       = 1 << 14
	SetupRegisteredFd = 1 << 15
	SetupNoSQArray    = 1 << 16
	SetupHybridIOPoll = 1 << 17

	// setupUnsupported are the flags whose ring layouts or submission
	// protocols this package does not implement.
	setupUnsupported = SetupSQPoll | SetupSQAff | SetupIOPoll | SetupHybridIOPoll | SetupSQE128 | SetupCQE32 |
		SetupNoMmap | SetupRegisteredFd | SetupNoSQArray | SetupRDisabled | SetupAttachWQ
)

// Feature flags (io_uring_params.features, IORING_FEAT_*) reported by
// Ring.Features.
const (
	FeatSingleMmap     = 1 << 0 // SQ and CQ rings share one mapping
	FeatNoDrop         = 1 << 1 // CQEs are never dropped on CQ overflow
	FeatSubmitStable   = 1 << 2
	FeatRWCurPos       = 1 << 3
	FeatCurPersonality = 1 << 4
	FeatFastPoll       = 1 << 5 // socket operations are driven by internal poll, not worker threads
	FeatPoll32Bits     = 1 << 6
	FeatSQPollNonfixed = 1 << 7
	FeatExtArg         = 1 << 8
	FeatNativeWorkers  = 1 << 9
	FeatRsrcTags       = 1 << 10
	FeatCQESkip        = 1 << 11
	FeatLinkedFile     = 1 << 12
	FeatRegRegRing     = 1 << 13
	FeatRecvSendBundle = 1 << 14
	FeatMinTimeout     = 1 << 15
	FeatRWAttr         = 1 << 16
	FeatNoIOWait       = 1 << 17
)

// CQE flags (cqe->flags, IORING_CQE_F_*).
const (
	CQEFBuffer       = 1 << 0 // the upper 16 bits hold a provided buffer's id
	CQEFMore         = 1 << 1 // the multishot operation continues
	CQEFSockNonempty = 1 << 2 // the socket had more data after this receive
	CQEFNotif        = 1 << 3 // a zero-copy send's notification
	CQEFBufMore      = 1 << 4 // an incrementally consumed buffer stays in use
	CQEBufferShift   = 16
)

// Send, receive and accept flags, carried in SQE.Ioprio.
const (
	RecvSendPollFirst = 1 << 0 // arm poll first instead of trying the transfer
	RecvMultishot     = 1 << 1 // IORING_RECV_MULTISHOT
	RecvSendFixedBuf  = 1 << 2
	SendZCReportUsage = 1 << 3
	RecvSendBundle    = 1 << 4
	AcceptMultishot   = 1 << 0 // IORING_ACCEPT_MULTISHOT
	AcceptDontWait    = 1 << 1
	AcceptPollFirst   = 1 << 2
)

// Cancellation flags (sqe->cancel_flags, IORING_ASYNC_CANCEL_*).
const (
	CancelAll      = 1 << 0 // cancel every match, not just the first
	CancelFd       = 1 << 1 // match on the descriptor instead of user_data
	CancelAny      = 1 << 2 // match any request
	CancelFdFixed  = 1 << 3 // the descriptor is a registered-file index
	CancelUserData = 1 << 4 // match on user_data (the default)
	CancelOp       = 1 << 5 // match on the operation code
)

// Timeout flags (sqe->timeout_flags, IORING_TIMEOUT_*).
const (
	TimeoutAbs       = 1 << 0
	TimeoutUpdate    = 1 << 1
	TimeoutBoottime  = 1 << 2
	TimeoutRealtime  = 1 << 3
	TimeoutETimeOK   = 1 << 5 // IORING_TIMEOUT_ETIME_SUCCESS
	TimeoutMultishot = 1 << 6
)

// Poll-add flags, carried in SQE.Len (IORING_POLL_*).
const (
	PollAddMulti = 1 << 0
	PollAddLevel = 1 << 3
)

// Enter flags (io_uring_enter(2), IORING_ENTER_*).
const (
	EnterGetEvents = 1 << 0
	EnterSQWakeup  = 1 << 1
	EnterSQWait    = 1 << 2
	EnterExtArg    = 1 << 3
)

// SQ ring flags (IORING_SQ_*), as Ring.SQFlags reports them.
const (
	SQNeedWakeup = 1 << 0
	SQCQOverflow = 1 << 1 // completions wait in the kernel for CQ space
	SQTaskrun    = 1 << 2
)

// Registration opcodes (io_uring_register(2)).
const (
	registerFiles        = 2
	unregisterFiles      = 3
	registerFilesUpdate  = 6
	registerProbe        = 8
	registerPbufRing     = 22
	unregisterPbufRing   = 23
	registerFilesSkipFd  = -2
	ioUringOpSupported   = 1
	maxProbeOps          = 256
	offSQRing            = 0
	offCQRing            = 0x8000000
	offSQEs              = 0x10000000
	pbufRingEntrySize    = 16 // sizeof(struct io_uring_buf)
	pbufRingTailOffset   = 14 // the ring tail overlays buf[0].resv
	maxBufRingEntries    = 1 << 15
	defaultEntries       = 128
	maxEntries           = 32768
	probeHeaderSize      = 16 // sizeof(struct io_uring_probe)
	probeOpSize          = 8  // sizeof(struct io_uring_probe_op)
	sysctlIOUringDisable = "/proc/sys/kernel/io_uring_disabled"
)

// FileSkip is the descriptor value that UpdateFiles leaves unchanged
// (IORING_REGISTER_FILES_SKIP).
const FileSkip = registerFilesSkipFd

// Options configure New.
type Options struct {
	// CQEntries is the completion queue size; 0 means the kernel's default
	// (twice the submission queue). Multishot operations post many CQEs per
	// SQE, so servers size it well above the SQ.
	CQEntries uint32
	// Flags are extra setup flags (Setup*). SetupSingleIssuer requires that
	// every submission and registration come from the OS thread that called
	// New (lock it with runtime.LockOSThread); SetupDeferTaskrun (which needs
	// SetupSingleIssuer) makes completions appear only while that thread
	// waits in SubmitAndWait. SQPOLL, IOPOLL, 128-byte SQEs, 32-byte CQEs,
	// application-provided ring memory, rings without the SQ index array,
	// rings started disabled and shared worker pools are not supported.
	Flags uint32
}

// Probe is the kernel's list of supported operations
// (IORING_REGISTER_PROBE).
type Probe struct {
	// LastOp is the highest operation code the kernel knows.
	LastOp Op
	flags  [maxProbeOps]uint16
}

// Supported reports whether the kernel supports op.
func (p *Probe) Supported(op Op) bool {
	return op <= p.LastOp && p.flags[op]&ioUringOpSupported != 0
}

// String lists the supported operations: "last_op=62 supported: NOP READV …".
func (p *Probe) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "last_op=%d supported:", p.LastOp)
	for op := 0; op <= int(p.LastOp); op++ {
		if p.Supported(Op(op)) {
			b.WriteByte(' ')
			b.WriteString(Op(op).String())
		}
	}
	return b.String()
}

// Region is one memory mapping a Ring made (for leak checks).
type Region struct {
	Addr uintptr
	Len  int
	What string // "sq ring", "cq ring", "sqes", "buffer ring", "buffers"
}

// SetupError is the failure of io_uring_setup(2), with what the kernel's
// configuration says about it, so that "io_uring is unavailable here" names
// its reason.
type SetupError struct {
	Errno error // the system call's errno (a syscall.Errno)
	// Disabled is the value of the kernel.io_uring_disabled sysctl ("0",
	// "1", "2"), or "absent" where the kernel has no such sysctl.
	Disabled string
	Kernel   string // the kernel release (uname -r)
	Flags    uint32 // the setup flags asked for
}

// Error returns e.g. "uring: io_uring_setup: operation not permitted
// (kernel.io_uring_disabled=2: io_uring is disabled for every process; kernel 6.18.44)".
func (e *SetupError) Error() string {
	return fmt.Sprintf("uring: io_uring_setup: %v (kernel.io_uring_disabled=%s: %s; kernel %s)",
		e.Errno, e.Disabled, e.reason(), e.Kernel)
}

// reason explains the errno in terms of its usual cause.
func (e *SetupError) reason() string {
	switch e.Disabled {
	case "2":
		return "io_uring is disabled for every process"
	case "1":
		if errors.Is(e.Errno, syscall.EPERM) {
			return "io_uring is restricted to CAP_SYS_ADMIN and the kernel.io_uring_group group"
		}
	}
	switch {
	case errors.Is(e.Errno, syscall.ENOSYS):
		return "the kernel lacks io_uring, or a seccomp filter hides it"
	case errors.Is(e.Errno, syscall.EPERM):
		return "denied by a seccomp filter or security module"
	case errors.Is(e.Errno, syscall.EINVAL):
		return fmt.Sprintf("the kernel rejects setup flags %#x (too old)", e.Flags)
	case errors.Is(e.Errno, syscall.ENOMEM):
		return "out of memory or over RLIMIT_MEMLOCK"
	}
	return "unexpected error"
}

// Unwrap returns the errno, so errors.Is(err, unix.EPERM) works.
func (e *SetupError) Unwrap() error { return e.Errno }
