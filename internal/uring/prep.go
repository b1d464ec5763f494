package uring

import "unsafe"

// Buffer ownership for the Prep methods that take a []byte: the SQE holds
// the buffer's address as an integer, which the Go garbage collector does
// not see. The caller must keep a reference to the buffer (a field of a
// live object, not just a local variable) until the operation's final CQE
// arrives. That is enough: Go's collector never moves heap objects, so a
// referenced heap buffer stays where the kernel was told it is. Stack memory
// is never safe (goroutine stacks move when they grow), which is why these
// methods take slices the caller owns and never addresses of locals. Memory
// from mmap (BufRing) is outside the Go heap and needs no reference.

// addrOf returns the address of p's first byte, or 0 for an empty p.
func addrOf(p []byte) uint64 {
	if len(p) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&p[0])))
}

// PrepNop prepares an operation that does nothing and completes with 0.
func (s *SQE) PrepNop() { s.Opcode = OpNop; s.Fd = -1 }

// PrepAccept prepares an accept4(2) on the listening socket fd with flags
// (unix.SOCK_CLOEXEC, unix.SOCK_NONBLOCK); the CQE's Res is the new
// descriptor. The peer's address is not returned.
func (s *SQE) PrepAccept(fd int, flags int) {
	s.Opcode = OpAccept
	s.Fd = int32(fd)
	s.OpFlags = uint32(flags)
}

// PrepMultishotAccept prepares an accept that stays armed: every connection
// produces a CQE with CQEFMore set, until an error or a cancellation ends it
// (a CQE without CQEFMore). Linux 5.19 or later.
func (s *SQE) PrepMultishotAccept(fd int, flags int) {
	s.PrepAccept(fd, flags)
	s.Ioprio |= AcceptMultishot
}

// PrepRecv prepares a recv(2) from fd into buf with msg flags. See the
// buffer ownership note above: buf must stay referenced until the CQE.
func (s *SQE) PrepRecv(fd int, buf []byte, msgFlags int) { s.prepMsg(OpRecv, fd, buf, msgFlags) }

// PrepRecvProvided prepares a single receive into a buffer the kernel picks
// from buffer group group when data arrives (IOSQE_BUFFER_SELECT); the CQE
// names the buffer (CQE.BufferID). Buffers stay in the application's hands
// while no data is pending.
func (s *SQE) PrepRecvProvided(fd int, group uint16, msgFlags int) {
	s.PrepRecv(fd, nil, msgFlags)
	s.Flags |= SQEBufferSelect
	s.BufIndex = group
}

// PrepRecvMultishot prepares a receive that stays armed, each arrival of
// data producing a CQE (with CQEFMore while it stays armed) naming the
// provided buffer from group that holds the data. It ends with a CQE
// without CQEFMore: end of stream (Res 0), an error, ENOBUFS when the group
// ran out of buffers, or a cancellation. Linux 6.0 or later.
func (s *SQE) PrepRecvMultishot(fd int, group uint16, msgFlags int) {
	s.PrepRecvProvided(fd, group, msgFlags)
	s.Ioprio |= RecvMultishot
}

// PrepSend prepares a send(2) of buf to fd with msg flags (use
// unix.MSG_NOSIGNAL for sockets). On a stream socket the CQE's Res may be
// less than len(buf): a partial send, whose remainder the caller submits
// again. buf must stay referenced and unmodified until the CQE.
func (s *SQE) PrepSend(fd int, buf []byte, msgFlags int) { s.prepMsg(OpSend, fd, buf, msgFlags) }

// prepMsg prepares op, a recv or a send, of buf on fd with msg flags: the
// kernel reads both from the same fields.
func (s *SQE) prepMsg(op Op, fd int, buf []byte, msgFlags int) {
	s.Opcode = op
	s.Fd = int32(fd)
	s.Addr = addrOf(buf)
	s.Len = uint32(len(buf))
	s.OpFlags = uint32(msgFlags)
}

// PrepClose prepares a close(2) of fd.
func (s *SQE) PrepClose(fd int) {
	s.Opcode = OpClose
	s.Fd = int32(fd)
}

// PrepCancel prepares the cancellation of the in-flight operation whose SQE
// had UserData target (flags: CancelAll to cancel every such operation).
// The cancelled operation completes with -ECANCELED (or with its result, if
// it finished first); the cancellation's own CQE has Res 0 (or the number
// cancelled with CancelAll), -ENOENT when nothing matched, or -EALREADY
// when the operation was running and may still complete.
func (s *SQE) PrepCancel(target uint64, flags uint32) {
	s.Opcode = OpAsyncCancel
	s.Fd = -1
	s.Addr = target
	s.OpFlags = flags
}

// PrepCancelFd prepares the cancellation of in-flight operations on
// descriptor fd (CancelFd; add CancelAll for all of them).
func (s *SQE) PrepCancelFd(fd int, flags uint32) {
	s.Opcode = OpAsyncCancel
	s.Fd = int32(fd)
	s.OpFlags = flags | CancelFd
}

// PrepPollAdd prepares a one-shot poll of fd for events (unix.POLLIN, …);
// the CQE's Res is the ready mask.
func (s *SQE) PrepPollAdd(fd int, events uint32) {
	s.Opcode = OpPollAdd
	s.Fd = int32(fd)
	s.OpFlags = events
}
