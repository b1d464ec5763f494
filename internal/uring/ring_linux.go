package uring

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// params is struct io_uring_params (120 bytes).
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFd         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

var (
	_ [unsafe.Sizeof(params{}) - 120]byte
	_ [120 - unsafe.Sizeof(params{})]byte
)

// Ring is one io_uring instance: a submission queue (SQ) the application
// fills with SQEs and a completion queue (CQ) the kernel fills with CQEs,
// both in memory shared with the kernel.
//
// A Ring is not safe for concurrent use: one goroutine (with
// SetupSingleIssuer: one locked OS thread, the one that called New) calls
// its methods. Only the counters (Enters, Submitted, Completed) may be read
// from other goroutines.
//
// Memory ordering. The SQ and CQ are single-producer single-consumer
// queues shared with the kernel. The producer writes entries, then
// publishes its tail with a release store; the consumer loads that tail
// with acquire semantics before reading the entries, then publishes its
// head with a release store so the producer may reuse the slots. Here:
// SQEs are written with plain stores and the SQ tail is published with
// atomic.StoreUint32 (the kernel reads it with smp_load_acquire); the CQ
// tail is read with atomic.LoadUint32 before the CQEs are copied, and the
// CQ head is published with atomic.StoreUint32 after. Go's atomics are
// sequentially consistent, which is at least acquire/release, and the
// compiler does not move memory accesses across them.
type Ring struct {
	fd       int
	flags    uint32
	features uint32
	closed   bool

	sqRing []byte // the SQ ring mapping (also the CQ ring with FeatSingleMmap)
	cqRing []byte // the CQ ring mapping, when separate
	sqeMem []byte // the SQE array mapping

	sqHead    *uint32 // written by the kernel as it consumes SQEs
	sqTail    *uint32 // written by us to publish SQEs
	sqFlags   *uint32
	sqMask    uint32
	sqEntries uint32
	sqes      []SQE
	sqeTail   uint32 // SQEs handed out by GetSQE (published up to *sqTail)

	cqHead    *uint32 // written by us as we consume CQEs
	cqTail    *uint32 // written by the kernel to publish CQEs
	cqMask    uint32
	cqEntries uint32
	cqes      []CQE

	bufRings []*BufRing
	// timeouts holds each SQE slot's timeout value for PrepTimeout: heap
	// memory the ring references, read by the kernel during submission.
	timeouts []timespec
	// waitArg and waitTS are SubmitAndWaitTimeout's arguments to the
	// kernel: heap memory the ring references.
	waitArg getEventsArg
	waitTS  timespec

	enters    counter
	submitted counter
	completed counter
}

// counter is a uint64 with one writer and any number of readers.
type counter struct{ v atomic.Uint64 }

func (c *counter) add(n uint64) { c.v.Store(c.v.Load() + n) }

// New creates a ring with room for entries SQEs (rounded up to a power of
// two by the kernel; 0 means 128). When the kernel refuses, the error is a
// *SetupError that names the likely reason (the kernel.io_uring_disabled
// sysctl, seccomp, an old kernel).
func New(entries uint32, opts Options) (*Ring, error) {
	entries = cmp.Or(entries, defaultEntries)
	if entries > maxEntries {
		return nil, fmt.Errorf("uring: %d SQ entries requested, at most %d", entries, maxEntries)
	}
	if opts.Flags&setupUnsupported != 0 {
		return nil, fmt.Errorf("uring: setup flags %#x are not supported by this package", opts.Flags&setupUnsupported)
	}
	var p params
	p.flags = opts.Flags
	if opts.CQEntries != 0 {
		p.flags |= SetupCQSize
		p.cqEntries = opts.CQEntries
	}
	fd, err := setup(entries, &p)
	if err != nil {
		return nil, err
	}
	r := &Ring{fd: fd, flags: p.flags, features: p.features}
	if err := r.mapRings(&p); err != nil {
		r.unmap()
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

// setup calls io_uring_setup(2), wrapping a failure in a SetupError.
func setup(entries uint32, p *params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, newSetupError(errno, p.flags)
	}
	return int(fd), nil
}

func newSetupError(errno error, flags uint32) *SetupError {
	return &SetupError{Errno: errno, Disabled: disabledSysctl(), Kernel: kernelRelease(), Flags: flags}
}

// disabledSysctl reads kernel.io_uring_disabled.
func disabledSysctl() string {
	b, err := os.ReadFile(sysctlIOUringDisable)
	if err != nil {
		return "absent"
	}
	return strings.TrimSpace(string(b))
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return string(bytes.TrimRight(u.Release[:], "\x00"))
}

// Available reports whether this process may create io_uring instances: nil,
// or the error New would return (a *SetupError naming the reason).
func Available() error {
	var p params
	fd, err := setup(1, &p)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// mapRings maps the SQ ring, the CQ ring (one mapping with FeatSingleMmap)
// and the SQE array, and locates the fields the kernel told us about.
func (r *Ring) mapRings(p *params) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(CQE{}))
	single := p.features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	r.sqRing, err = mmapRing(r.fd, offSQRing, sqSize)
	if err != nil {
		return err
	}
	cq := r.sqRing
	if !single {
		if r.cqRing, err = mmapRing(r.fd, offCQRing, cqSize); err != nil {
			return err
		}
		cq = r.cqRing
	}
	if r.sqeMem, err = mmapRing(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{}))); err != nil {
		return err
	}
	at := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead = at(r.sqRing, p.sqOff.head)
	r.sqTail = at(r.sqRing, p.sqOff.tail)
	r.sqFlags = at(r.sqRing, p.sqOff.flags)
	r.sqMask = *at(r.sqRing, p.sqOff.ringMask)
	r.sqEntries = *at(r.sqRing, p.sqOff.ringEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	// The SQ array indirection: slot i always names SQE i, so publishing
	// the tail is all a submission takes.
	array := unsafe.Slice(at(r.sqRing, p.sqOff.array), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead = at(cq, p.cqOff.head)
	r.cqTail = at(cq, p.cqOff.tail)
	r.cqMask = *at(cq, p.cqOff.ringMask)
	r.cqEntries = *at(cq, p.cqOff.ringEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&cq[p.cqOff.cqes])), r.cqEntries)
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	r.timeouts = make([]timespec, r.sqEntries)
	return nil
}

func mmapRing(fd int, off int64, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("uring: map ring at offset %#x: %w", off, os.NewSyscallError("mmap", err))
	}
	mappedBytes.Add(int64(len(b)))
	return b, nil
}

// unmap removes the ring mappings that exist.
func (r *Ring) unmap() error {
	err := munmapAll(&r.sqeMem, &r.cqRing, &r.sqRing)
	r.sqes, r.cqes = nil, nil
	return err
}

// mappedBytes is the memory the rings and buffer rings of the process have
// mapped and not yet unmapped; see MappedBytes.
var mappedBytes atomic.Int64

// MappedBytes returns the bytes that the rings and buffer rings of the
// process have mapped (ring mappings and provided buffers) and not unmapped
// since. A test compares it before a ring is made and after it is closed:
// unlike /proc/self/maps, it cannot be misled by a mapping someone else
// makes at a freed address, nor by the kernel merging neighbouring
// mappings into one line.
func MappedBytes() int64 { return mappedBytes.Load() }

// munmapAll unmaps each mapping that exists and forgets it.
func munmapAll(ms ...*[]byte) error {
	var errs []error
	for _, m := range ms {
		if *m != nil {
			if err := unix.Munmap(*m); err != nil {
				errs = append(errs, os.NewSyscallError("munmap", err))
			} else {
				mappedBytes.Add(-int64(len(*m)))
			}
			*m = nil
		}
	}
	return errors.Join(errs...)
}

// Fd returns the ring's descriptor.
func (r *Ring) Fd() int { return r.fd }

// Features returns the kernel's feature flags (Feat*).
func (r *Ring) Features() uint32 { return r.features }

// SetupFlags returns the flags the ring was set up with (Setup*).
func (r *Ring) SetupFlags() uint32 { return r.flags }

// SQEntries returns the submission queue's size.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }

// CQEntries returns the completion queue's size.
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

// SQFlags returns the SQ ring's flags (SQCQOverflow, …).
func (r *Ring) SQFlags() uint32 { return atomic.LoadUint32(r.sqFlags) }

// Enters returns the number of io_uring_enter calls made (retries after
// EINTR included). Safe to call from any goroutine.
func (r *Ring) Enters() uint64 { return r.enters.v.Load() }

// Submitted returns the number of SQEs the kernel consumed. Safe to call
// from any goroutine.
func (r *Ring) Submitted() uint64 { return r.submitted.v.Load() }

// Completed returns the number of CQEs reaped. Safe to call from any
// goroutine.
func (r *Ring) Completed() uint64 { return r.completed.v.Load() }

// GetSQE returns the next free SQE, zeroed, or nil when the SQ is full
// (call Submit, then try again). The SQE is submitted by the next Submit or
// SubmitAndWait; fill it completely before then.
func (r *Ring) GetSQE() *SQE {
	if r.closed {
		return nil
	}
	head := atomic.LoadUint32(r.sqHead)
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	*sqe = SQE{}
	r.sqeTail++
	return sqe
}

// timespec is struct __kernel_timespec.
type timespec struct{ sec, nsec int64 }

// PrepTimeout prepares sqe, which GetSQE returned, as a timeout that
// completes with -ETIME after d, or with 0 once count other completions
// were posted (count 0: only the time counts). flags are Timeout* flags.
// The duration is kept in memory the ring owns until the kernel has read
// it (during submission), so no caller memory is involved.
func (r *Ring) PrepTimeout(sqe *SQE, d time.Duration, count, flags uint32) {
	slot := (uintptr(unsafe.Pointer(sqe)) - uintptr(unsafe.Pointer(&r.sqes[0]))) / unsafe.Sizeof(SQE{})
	ts := &r.timeouts[slot]
	*ts = timespec{sec: int64(d / time.Second), nsec: int64(d % time.Second)}
	*sqe = SQE{Opcode: OpTimeout, Fd: -1, Addr: uint64(uintptr(unsafe.Pointer(ts))), Len: 1, Off: uint64(count),
		OpFlags: flags, UserData: sqe.UserData}
}

// Pending returns the number of SQEs handed out by GetSQE that the kernel
// has not consumed yet.
func (r *Ring) Pending() uint32 { return r.sqeTail - atomic.LoadUint32(r.sqHead) }

// flush publishes every SQE handed out and returns how many the kernel has
// yet to consume.
func (r *Ring) flush() uint32 {
	atomic.StoreUint32(r.sqTail, r.sqeTail) // release: the SQEs' contents before the tail
	return r.Pending()
}

// Submit hands the pending SQEs to the kernel without waiting and returns
// how many it consumed.
func (r *Ring) Submit() (int, error) { return r.submit(0, false) }

// SubmitAndWait hands the pending SQEs to the kernel and waits until at
// least wait CQEs are available (with SetupDeferTaskrun, this is where the
// kernel runs the completion work). It returns how many SQEs the kernel
// consumed. A signal can end the wait early once SQEs were submitted; EINTR
// before anything was submitted is retried. Callers reap what is there and
// call it again.
func (r *Ring) SubmitAndWait(wait uint32) (int, error) { return r.submit(wait, true) }

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask     uint64
	sigmaskSz   uint32
	minWaitUsec uint32
	ts          uint64
}

// SubmitAndWaitTimeout is SubmitAndWait with a bound on the wait: when d
// passes with fewer than wait CQEs available it returns an error satisfying
// errors.Is(err, unix.ETIME). It needs FeatExtArg (Linux 5.11).
func (r *Ring) SubmitAndWaitTimeout(wait uint32, d time.Duration) (int, error) {
	if r.features&FeatExtArg == 0 {
		return 0, fmt.Errorf("uring: wait with timeout: %w", unix.EOPNOTSUPP)
	}
	return r.submitDeadline(wait, true, time.Now().Add(max(d, 0)))
}

func (r *Ring) submit(wait uint32, getEvents bool) (int, error) {
	return r.submitDeadline(wait, getEvents, time.Time{})
}

// submitDeadline calls io_uring_enter, retrying EINTR; a non-zero deadline
// bounds the wait for events.
func (r *Ring) submitDeadline(wait uint32, getEvents bool, deadline time.Time) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	for {
		n := r.flush()
		if n == 0 && !getEvents {
			return 0, nil
		}
		var flags, arg, argSize uintptr
		if getEvents {
			flags |= EnterGetEvents
		}
		if !deadline.IsZero() {
			left := max(time.Until(deadline), 0)
			r.waitTS = timespec{sec: int64(left / time.Second), nsec: int64(left % time.Second)}
			r.waitArg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.waitTS)))}
			flags |= EnterExtArg
			arg, argSize = uintptr(unsafe.Pointer(&r.waitArg)), unsafe.Sizeof(r.waitArg)
		}
		r.enters.add(1)
		// Syscall6, not RawSyscall6: the call may block, and the Go
		// runtime must be told so it can hand this thread's P to others.
		ret, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(wait), flags, arg, argSize)
		switch errno {
		case 0:
			r.submitted.add(uint64(ret))
			return int(ret), nil
		case unix.EINTR:
			continue
		}
		return 0, os.NewSyscallError("io_uring_enter", errno)
	}
}

// Reap copies the available CQEs (at most len(dst)) into dst, releases
// their slots to the kernel and returns how many it copied.
func (r *Ring) Reap(dst []CQE) int {
	if r.closed {
		return 0
	}
	head := *r.cqHead // only we write the head
	tail := atomic.LoadUint32(r.cqTail)
	n := min(tail-head, uint32(len(dst)))
	for i := range n {
		dst[i] = r.cqes[(head+i)&r.cqMask]
	}
	atomic.StoreUint32(r.cqHead, head+n) // release: the copies before the slots are reused
	r.completed.add(uint64(n))
	return int(n)
}

// Ready returns the number of CQEs waiting to be reaped.
func (r *Ring) Ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// register calls io_uring_register(2).
func (r *Ring) register(op uint32, arg unsafe.Pointer, nr uint32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	for {
		ret, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uintptr(op), uintptr(arg), uintptr(nr), 0, 0)
		switch errno {
		case 0:
			return int(ret), nil
		case unix.EINTR:
			continue
		}
		return 0, os.NewSyscallError("io_uring_register", errno)
	}
}

// Probe asks the kernel which operations it supports.
func (r *Ring) Probe() (*Probe, error) {
	buf := make([]byte, probeHeaderSize+maxProbeOps*probeOpSize)
	if _, err := r.register(registerProbe, unsafe.Pointer(&buf[0]), maxProbeOps); err != nil {
		return nil, fmt.Errorf("uring: probe: %w", err)
	}
	p := &Probe{LastOp: Op(buf[0])}
	n := int(buf[1]) // ops_len
	for i := range min(n, maxProbeOps) {
		op := buf[probeHeaderSize+i*probeOpSize]
		p.flags[op] = uint16(buf[probeHeaderSize+i*probeOpSize+2]) | uint16(buf[probeHeaderSize+i*probeOpSize+3])<<8
	}
	return p, nil
}

// RegisterFiles registers descriptors with the ring (IORING_REGISTER_FILES):
// an SQE with SQEFixedFile then names fds[i] as i, which saves the kernel a
// descriptor-table lookup per operation. -1 leaves a slot empty, to be
// filled by UpdateFiles.
func (r *Ring) RegisterFiles(fds []int32) error {
	if len(fds) == 0 {
		return errors.New("uring: register files: no descriptors")
	}
	_, err := r.register(registerFiles, unsafe.Pointer(&fds[0]), uint32(len(fds)))
	if err != nil {
		return fmt.Errorf("uring: register files: %w", err)
	}
	return nil
}

// filesUpdate is struct io_uring_files_update.
type filesUpdate struct {
	offset uint32
	resv   uint32
	fds    uint64
}

// UpdateFiles replaces registered slots off, off+1, … with fds
// (IORING_REGISTER_FILES_UPDATE); -1 empties a slot, FileSkip leaves it. It
// returns how many slots were updated.
func (r *Ring) UpdateFiles(off uint32, fds []int32) (int, error) {
	if len(fds) == 0 {
		return 0, nil
	}
	up := filesUpdate{offset: off, fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	n, err := r.register(registerFilesUpdate, unsafe.Pointer(&up), uint32(len(fds)))
	if err != nil {
		return 0, fmt.Errorf("uring: update files: %w", err)
	}
	return n, nil
}

// UnregisterFiles drops every registered descriptor.
func (r *Ring) UnregisterFiles() error {
	if _, err := r.register(unregisterFiles, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister files: %w", err)
	}
	return nil
}

// Regions returns the memory mappings the ring and its buffer rings hold.
func (r *Ring) Regions() []Region {
	var rs []Region
	add := func(b []byte, what string) {
		if b != nil {
			rs = append(rs, Region{Addr: uintptr(unsafe.Pointer(&b[0])), Len: len(b), What: what})
		}
	}
	add(r.sqRing, "sq ring")
	add(r.cqRing, "cq ring")
	add(r.sqeMem, "sqes")
	for _, b := range r.bufRings {
		add(b.ringMem, "buffer ring")
		add(b.bufMem, "buffers")
	}
	return rs
}

// Close unregisters and unmaps the ring's buffer rings, unmaps the rings
// and closes the ring descriptor. With SetupSingleIssuer it must be called
// from the ring's thread (the kernel refuses unregistration from others).
//
// Operations still in flight are cancelled by the kernel as the ring is torn
// down; a caller that handed the kernel its own memory (a Go buffer to send
// or receive into) must first wait for those operations' CQEs. Provided
// buffers are safe: they are unregistered before they are unmapped, so the
// kernel picks no buffer from them afterwards. Close is idempotent.
func (r *Ring) Close() error {
	if r.closed {
		return nil
	}
	var errs []error
	for _, b := range r.bufRings {
		errs = append(errs, b.release())
	}
	r.bufRings = nil
	errs = append(errs, r.unmap())
	if err := unix.Close(r.fd); err != nil {
		errs = append(errs, os.NewSyscallError("close", err))
	}
	r.closed = true
	r.fd = -1
	return errors.Join(errs...)
}
