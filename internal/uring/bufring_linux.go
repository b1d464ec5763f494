package uring

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufReg is struct io_uring_buf_reg, the argument of
// IORING_(UN)REGISTER_PBUF_RING.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// bufEntry is struct io_uring_buf, one slot of a buffer ring. In slot 0 the
// resv field is the ring's tail: it is never written through this type.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

var (
	_ [unsafe.Sizeof(bufReg{}) - 40]byte
	_ [40 - unsafe.Sizeof(bufReg{})]byte
	_ [unsafe.Sizeof(bufEntry{}) - pbufRingEntrySize]byte
)

// tailShift is where the 16-bit ring tail (bytes 14–15) sits in the 32-bit
// word at bytes 12–15 of the ring: the high half on little-endian machines.
var tailShift = func() uint32 {
	x := uint32(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return 16
	}
	return 0
}()

// BufRing is a ring of provided buffers (IORING_REGISTER_PBUF_RING): a pool
// the kernel picks a receive buffer from when a receive completes, rather
// than one buffer fixed per operation. A receive SQE with SQEBufferSelect
// and BufIndex = the group takes one; its CQE carries the buffer's id
// (CQE.BufferID). The buffer then belongs to the application until it hands
// it back with Recycle and Publish.
//
// Memory: both the ring of {addr, len, bid} entries and the buffers are
// anonymous mmap'd memory, outside the Go heap, so the Go runtime never
// moves or frees them while the kernel may write into them; they are
// unmapped only after the ring is unregistered.
//
// A BufRing belongs to its Ring's goroutine.
type BufRing struct {
	r        *Ring
	group    uint16
	mask     uint32
	size     int
	stride   int // bytes from one buffer's start to the next's (bufStride)
	ringMem  []byte
	bufMem   []byte
	ring     []bufEntry
	tail     uint16  // entries staged (published up to the kernel-visible tail)
	tailWord *uint32 // bytes 12–15 of the ring: slot 0's bid and the tail
}

// NewBufRing registers a ring of entries buffers of size bytes each as
// buffer group group, and provides every buffer to the kernel. entries must
// be a power of two, at most 32768.
func (r *Ring) NewBufRing(group uint16, entries, size int) (*BufRing, error) {
	if r.closed {
		return nil, ErrClosed
	}
	if entries <= 0 || entries > maxBufRingEntries || entries&(entries-1) != 0 {
		return nil, fmt.Errorf("uring: buffer ring of %d entries: need a power of two in 1..%d", entries, maxBufRingEntries)
	}
	if size <= 0 || size > 1<<30 || entries*size > 1<<32 {
		return nil, fmt.Errorf("uring: %d buffers of %d bytes: size out of range", entries, size)
	}
	b := &BufRing{r: r, group: group, mask: uint32(entries - 1), size: size, stride: bufStride(size)}
	var err error
	ringLen := (entries*pbufRingEntrySize + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)
	if b.ringMem, err = mmapAnon(ringLen); err != nil {
		return nil, err
	}
	if b.bufMem, err = mmapAnon(entries * b.stride); err != nil {
		b.unmap()
		return nil, err
	}
	b.ring = unsafe.Slice((*bufEntry)(unsafe.Pointer(&b.ringMem[0])), entries)
	b.tailWord = (*uint32)(unsafe.Pointer(&b.ringMem[12]))
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&b.ringMem[0]))), ringEntries: uint32(entries), bgid: group}
	if _, err := r.register(registerPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		b.unmap()
		if errors.Is(err, unix.EINVAL) {
			return nil, fmt.Errorf("uring: register buffer ring %d (provided-buffer rings need Linux 5.19): %w", group, err)
		}
		return nil, fmt.Errorf("uring: register buffer ring %d: %w", group, err)
	}
	for bid := range entries {
		b.Recycle(uint16(bid))
	}
	b.Publish()
	r.bufRings = append(r.bufRings, b)
	return b, nil
}

// cacheLine is the stride's padding unit: a cache line on the machines
// this runs on (x86-64, arm64).
const cacheLine = 64

// bufStride returns the distance between the starts of two consecutive
// buffers of size bytes: the size rounded up to a cache line, plus one
// line where that is a multiple of 1 KiB. A receive writes a small
// request into the first lines of its buffer, and the kernel takes the
// buffers in turn; at a stride of a power of two (4 KiB, the default
// size) every buffer's first lines fall into the same few sets of the
// CPU caches, which hold only a few of them, so nearly every receive
// writes into lines that had to be fetched again. One line more spreads
// the starts over every set. Measured in docs/findings.md ("Lean").
func bufStride(size int) int {
	s := (size + cacheLine - 1) &^ (cacheLine - 1)
	if s%1024 == 0 {
		s += cacheLine
	}
	return s
}

func mmapAnon(size int) ([]byte, error) {
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("uring: map %d bytes: %w", size, os.NewSyscallError("mmap", err))
	}
	mappedBytes.Add(int64(len(m)))
	return m, nil
}

// Group returns the buffer group id.
func (b *BufRing) Group() uint16 { return b.group }

// Entries returns the number of buffers.
func (b *BufRing) Entries() int { return int(b.mask) + 1 }

// Size returns the size of each buffer.
func (b *BufRing) Size() int { return b.size }

// Buf returns buffer bid. Its contents are valid from the CQE that names it
// until it is recycled.
func (b *BufRing) Buf(bid uint16) []byte {
	off := int(bid) * b.stride
	return b.bufMem[off : off+b.size : off+b.size]
}

// Recycle stages buffer bid to be provided to the kernel again; the kernel
// sees it after Publish. The caller must be done with its contents.
func (b *BufRing) Recycle(bid uint16) {
	e := &b.ring[uint32(b.tail)&b.mask]
	// Field by field: slot 0's resv is the ring tail.
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufMem[int(bid)*b.stride])))
	e.len = uint32(b.size)
	e.bid = bid
	b.tail++
}

// Publish makes the recycled buffers visible to the kernel: a release store
// of the ring tail, after the entries' contents. Go has no 16-bit atomics,
// so it stores the 32-bit word that holds the tail and slot 0's bid; the
// kernel only reads that word, and we are its only writer.
func (b *BufRing) Publish() {
	w := atomic.LoadUint32(b.tailWord)
	keep := uint32(0xffff) << (16 - tailShift) // the half that is slot 0's bid
	atomic.StoreUint32(b.tailWord, w&keep|uint32(b.tail)<<tailShift)
}

// Close unregisters the buffer group and unmaps its memory. Ring.Close does
// this for every buffer ring still open.
func (b *BufRing) Close() error {
	i := slices.Index(b.r.bufRings, b)
	if i < 0 {
		return nil
	}
	b.r.bufRings = slices.Delete(b.r.bufRings, i, i+1)
	return b.release()
}

// release unregisters the group, then unmaps the ring and the buffers.
func (b *BufRing) release() error {
	reg := bufReg{bgid: b.group}
	if _, err := b.r.register(unregisterPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		// Note: if the kernel still holds the group (a failed
		// unregistration, e.g. from a thread other than a single issuer),
		// unmapping the buffers could let a late receive write into
		// memory later reused for something else. Leak them instead;
		// closing the ring drops the kernel's reference.
		return fmt.Errorf("uring: unregister buffer ring %d (its memory is left mapped): %w", b.group, err)
	}
	return b.unmap()
}

func (b *BufRing) unmap() error {
	err := munmapAll(&b.bufMem, &b.ringMem)
	b.ring = nil
	return err
}
