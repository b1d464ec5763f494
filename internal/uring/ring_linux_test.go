package uring_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"concbench/handleset"
	"concbench/internal/uring"
	"concbench/internal/uring/uringtest"

	"golang.org/x/sys/unix"
)

// waitLimit bounds every wait for completions, so that a broken binding
// fails a test instead of hanging it. It is a deadlock guard, not a timing
// assertion: every awaited completion is due at once.
const waitLimit = 30 * time.Second

// newRing creates a ring, skipping the test (with the reason) where
// io_uring is unavailable.
func newRing(t *testing.T, entries uint32, opts uring.Options) *uring.Ring {
	t.Helper()
	if err := uring.Available(); err != nil {
		t.Skip(err.Error())
	}
	r, err := uring.New(entries, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// socketpair returns a connected pair of Unix stream sockets, closed at
// cleanup.
func socketpair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

// sqe returns a free SQE with user data ud.
func sqe(t *testing.T, r *uring.Ring, ud uint64) *uring.SQE {
	t.Helper()
	s := r.GetSQE()
	if s == nil {
		t.Fatal("SQ full")
	}
	s.UserData = ud
	return s
}

// wait submits what is pending and collects n CQEs.
func wait(t *testing.T, r *uring.Ring, n int) []uring.CQE {
	t.Helper()
	var got []uring.CQE
	buf := make([]uring.CQE, 16)
	deadline := time.Now().Add(waitLimit)
	for len(got) < n {
		if _, err := r.SubmitAndWaitTimeout(1, time.Until(deadline)); err != nil {
			t.Fatalf("waiting for %d CQEs, have %d %+v: %v", n, len(got), got, err)
		}
		k := r.Reap(buf[:min(len(buf), n-len(got))])
		got = append(got, buf[:k]...)
	}
	return got
}

// byUserData indexes CQEs by user data; a user data seen twice fails the test.
func byUserData(t *testing.T, cqes []uring.CQE) map[uint64]uring.CQE {
	t.Helper()
	m := make(map[uint64]uring.CQE)
	for _, c := range cqes {
		if _, dup := m[c.UserData]; dup {
			t.Fatalf("two CQEs with user data %d: %+v", c.UserData, cqes)
		}
		m[c.UserData] = c
	}
	return m
}

func TestSubmitComplete(t *testing.T) {
	tests := []struct {
		name  string
		flags uint32
	}{
		{name: "default"},
		{name: "single-issuer-defer-taskrun", flags: uring.SetupSingleIssuer | uring.SetupDeferTaskrun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.LockOSThread() // a single issuer's thread; harmless otherwise
			defer runtime.UnlockOSThread()
			r := newRing(t, 8, uring.Options{Flags: tc.flags})
			sp := socketpair(t)
			msg := []byte("hello io_uring")
			in := make([]byte, 64) // referenced until the CQE: see prep.go
			sqe(t, r, 1).PrepSend(sp[0], msg, unix.MSG_NOSIGNAL)
			sqe(t, r, 2).PrepRecv(sp[1], in, 0)
			cqes := byUserData(t, wait(t, r, 2))
			if c := cqes[1]; c.Res != int32(len(msg)) {
				t.Errorf("send: res %d (%v), want %d", c.Res, c.Err(), len(msg))
			}
			c := cqes[2]
			if c.Res != int32(len(msg)) || !bytes.Equal(in[:max(c.Res, 0)], msg) {
				t.Errorf("recv: res %d (%v), data %q; want %q", c.Res, c.Err(), in[:max(c.Res, 0)], msg)
			}
			if got := r.Submitted(); got != 2 {
				t.Errorf("Submitted() = %d, want 2", got)
			}
			if got := r.Completed(); got != 2 {
				t.Errorf("Completed() = %d, want 2", got)
			}
			if r.Enters() == 0 {
				t.Errorf("Enters() = 0 after a submission")
			}
		})
	}
}

func TestSQFullAndNop(t *testing.T) {
	r := newRing(t, 4, uring.Options{})
	for i := range r.SQEntries() {
		sqe(t, r, uint64(i)).PrepNop()
	}
	if s := r.GetSQE(); s != nil {
		t.Fatalf("GetSQE returned an SQE with all %d in use", r.SQEntries())
	}
	if n, err := r.Submit(); err != nil || n != int(r.SQEntries()) {
		t.Fatalf("Submit() = %d, %v; want %d", n, err, r.SQEntries())
	}
	cqes := byUserData(t, wait(t, r, int(r.SQEntries())))
	for i := range uint64(r.SQEntries()) {
		if c, ok := cqes[i]; !ok || c.Res != 0 {
			t.Errorf("nop %d: %+v (present %v)", i, c, ok)
		}
	}
	if r.GetSQE() == nil {
		t.Fatal("no free SQE after the kernel consumed them all")
	}
}

// TestBufRingStride checks the buffers' layout: a size that is a multiple
// of 1 KiB is padded by a cache line, so consecutive buffers start in
// different cache sets; each buffer keeps its size, none overlaps the
// next, and a receive lands where Buf says.
func TestBufRingStride(t *testing.T) {
	for _, tc := range []struct{ size, stride int }{{4096, 4160}, {1024, 1088}, {100, 128}, {64, 64}} {
		r := newRing(t, 8, uring.Options{})
		br, err := r.NewBufRing(2, 4, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		for bid := range uint16(3) {
			a, b := br.Buf(bid), br.Buf(bid+1)
			if len(a) != tc.size || cap(a) != tc.size {
				t.Errorf("size %d: buffer %d has length %d, capacity %d", tc.size, bid, len(a), cap(a))
			}
			if d := uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&a[0])); d != uintptr(tc.stride) {
				t.Errorf("size %d: buffers %d and %d start %d bytes apart, want %d", tc.size, bid, bid+1, d, tc.stride)
			}
		}
		sp := socketpair(t)
		msg := bytes.Repeat([]byte("z"), tc.size)
		for bid := range 4 {
			sqe(t, r, uint64(bid)).PrepRecvProvided(sp[1], br.Group(), 0)
			if _, err := unix.Write(sp[0], msg); err != nil {
				t.Fatal(err)
			}
			c := wait(t, r, 1)[0]
			got, ok := c.BufferID()
			if !ok || c.Res != int32(tc.size) || !bytes.Equal(br.Buf(got), msg) {
				t.Fatalf("size %d, receive %d: buffer %d (%v), res %d (%v); want the whole message in it", tc.size, bid, got, ok, c.Res, c.Err())
			}
		}
	}
}

func TestMultishotRecvProvidedBuffers(t *testing.T) {
	const entries, size = 4, 64
	r := newRing(t, 8, uring.Options{})
	br, err := r.NewBufRing(7, entries, size)
	if err != nil {
		t.Fatal(err)
	}
	sp := socketpair(t)
	sqe(t, r, 1).PrepRecvMultishot(sp[1], br.Group(), 0)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	// Three times as many messages as buffers: only recycling keeps the
	// receive going. One message at a time, so the stream does not merge
	// them.
	seen := map[uint16]int{}
	for i := range 3 * entries {
		msg := fmt.Appendf(nil, "message-%d", i)
		if _, err := unix.Write(sp[0], msg); err != nil {
			t.Fatal(err)
		}
		c := wait(t, r, 1)[0]
		bid, ok := c.BufferID()
		if c.Res != int32(len(msg)) || !ok || !c.More() {
			t.Fatalf("message %d: res %d (%v), flags %#x; want %d bytes with a buffer and F_MORE", i, c.Res, c.Err(), c.Flags, len(msg))
		}
		if got := br.Buf(bid)[:c.Res]; !bytes.Equal(got, msg) {
			t.Fatalf("message %d in buffer %d: %q, want %q", i, bid, got, msg)
		}
		if i < entries && seen[bid] > 0 {
			t.Fatalf("message %d reused buffer %d before the ring went round", i, bid)
		}
		seen[bid]++
		br.Recycle(bid)
		br.Publish()
	}
	if len(seen) != entries {
		t.Errorf("used buffers %v, want all %d", seen, entries)
	}
	// Without recycling the group runs dry: the receive ends with ENOBUFS.
	for i := range entries + 1 {
		if _, err := unix.Write(sp[0], []byte("x")); err != nil {
			t.Fatal(err)
		}
		c := wait(t, r, 1)[0]
		if i < entries {
			if c.Res != 1 || !c.More() {
				t.Fatalf("unrecycled message %d: res %d, flags %#x", i, c.Res, c.Flags)
			}
			continue
		}
		if !errors.Is(c.Err(), unix.ENOBUFS) || c.More() {
			t.Fatalf("with no buffer left: res %d (%v), flags %#x; want ENOBUFS ending the receive", c.Res, c.Err(), c.Flags)
		}
	}
}

func TestPartialSend(t *testing.T) {
	r := newRing(t, 8, uring.Options{})
	sp := socketpair(t)
	for i, opt := range []int{unix.SO_SNDBUF, unix.SO_RCVBUF} {
		if err := unix.SetsockoptInt(sp[i], unix.SOL_SOCKET, opt, 4096); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]byte, 1<<20)
	for i := range out {
		out[i] = byte(i * 7)
	}
	sqe(t, r, 1).PrepSend(sp[0], out, unix.MSG_NOSIGNAL)
	first := wait(t, r, 1)[0]
	if first.Res <= 0 || int(first.Res) >= len(out) {
		t.Fatalf("first send of %d bytes into a small buffer: res %d (%v); want a partial send", len(out), first.Res, first.Err())
	}
	// Now drain the peer and complete the rest, resubmitting remainders.
	got := make(chan []byte)
	go func() {
		var all []byte
		buf := make([]byte, 64<<10)
		for len(all) < len(out) {
			n, err := unix.Read(sp[1], buf)
			if err != nil || n == 0 {
				break
			}
			all = append(all, buf[:n]...)
		}
		got <- all
	}()
	sent, partials := int(first.Res), 1
	for sent < len(out) {
		sqe(t, r, 2).PrepSend(sp[0], out[sent:], unix.MSG_NOSIGNAL)
		c := wait(t, r, 1)[0]
		if c.Res <= 0 {
			t.Fatalf("send of the remaining %d bytes: res %d (%v)", len(out)-sent, c.Res, c.Err())
		}
		if int(c.Res) < len(out)-sent {
			partials++
		}
		sent += int(c.Res)
	}
	if all := <-got; !bytes.Equal(all, out) {
		t.Fatalf("peer received %d bytes, not the %d sent (or not the same)", len(all), len(out))
	}
	t.Logf("1 MiB sent in %d partial sends", partials)
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name      string
		multishot bool
		// cancel ends the pending receive on fd (user data 1); it may
		// submit an SQE with user data 2 and then reports how many CQEs
		// to expect in total.
		cancel  func(t *testing.T, r *uring.Ring, fd int) int
		wantRes func(res int32) bool
		want    string
	}{
		{
			name: "async-cancel-user-data",
			cancel: func(t *testing.T, r *uring.Ring, fd int) int {
				sqe(t, r, 2).PrepCancel(1, 0)
				return 2
			},
			wantRes: func(res int32) bool { return res == -int32(unix.ECANCELED) },
			want:    "ECANCELED",
		},
		{
			name:      "async-cancel-fd-all-multishot",
			multishot: true,
			cancel: func(t *testing.T, r *uring.Ring, fd int) int {
				sqe(t, r, 2).PrepCancelFd(fd, uring.CancelAll)
				return 2
			},
			wantRes: func(res int32) bool { return res == -int32(unix.ECANCELED) },
			want:    "ECANCELED",
		},
		{
			name: "socket-shutdown",
			cancel: func(t *testing.T, r *uring.Ring, fd int) int {
				if err := unix.Shutdown(fd, unix.SHUT_RDWR); err != nil {
					t.Fatal(err)
				}
				return 1
			},
			wantRes: func(res int32) bool { return res <= 0 },
			want:    "end of stream or an error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(t, 8, uring.Options{})
			br, err := r.NewBufRing(1, 4, 64)
			if err != nil {
				t.Fatal(err)
			}
			sp := socketpair(t)
			buf := make([]byte, 64)
			if tc.multishot {
				sqe(t, r, 1).PrepRecvMultishot(sp[1], br.Group(), 0)
			} else {
				sqe(t, r, 1).PrepRecv(sp[1], buf, 0)
			}
			if _, err := r.Submit(); err != nil {
				t.Fatal(err)
			}
			if r.Ready() != 0 {
				t.Fatalf("receive on an idle socket completed: %+v", wait(t, r, 1))
			}
			n := tc.cancel(t, r, sp[1])
			cqes := byUserData(t, wait(t, r, n))
			recv := cqes[1]
			if !tc.wantRes(recv.Res) || recv.More() {
				t.Errorf("cancelled receive: res %d (%v), flags %#x; want %s, final", recv.Res, recv.Err(), recv.Flags, tc.want)
			}
			if c, ok := cqes[2]; ok && c.Res < 0 {
				t.Errorf("cancellation: res %d (%v)", c.Res, c.Err())
			}
		})
	}
}

func TestMultishotAccept(t *testing.T) {
	const conns = 3
	r := newRing(t, 8, uring.Options{})
	ln, err := handleset.Listen("127.0.0.1:0", handleset.ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sqe(t, r, 1).PrepMultishotAccept(ln.Fd(), unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	dialed := map[netip.AddrPort]bool{}
	for range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		dialed[c.LocalAddr().(*net.TCPAddr).AddrPort()] = true
	}
	for i, c := range wait(t, r, conns) {
		if c.Res < 0 || !c.More() {
			t.Fatalf("accept %d: res %d (%v), flags %#x; want a descriptor and F_MORE", i, c.Res, c.Err(), c.Flags)
		}
		fd := int(c.Res)
		peer, err := unix.Getpeername(fd)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		sa := peer.(*unix.SockaddrInet4)
		ap := netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
		if !dialed[ap] {
			t.Fatalf("accepted a connection from %v, dialed from %v", ap, dialed)
		}
		delete(dialed, ap)
	}
	sqe(t, r, 2).PrepCancel(1, 0)
	last := byUserData(t, wait(t, r, 2))[1]
	if last.More() || !errors.Is(last.Err(), unix.ECANCELED) {
		t.Errorf("cancelled multishot accept: res %d (%v), flags %#x", last.Res, last.Err(), last.Flags)
	}
}

func TestProbe(t *testing.T) {
	r := newRing(t, 4, uring.Options{})
	p, err := r.Probe()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(p)
	for _, op := range []uring.Op{uring.OpNop, uring.OpAccept, uring.OpRecv, uring.OpSend, uring.OpAsyncCancel,
		uring.OpClose, uring.OpPollAdd, uring.OpTimeout} {
		if !p.Supported(op) {
			t.Errorf("%v not supported (probe: %v)", op, p)
		}
		if !strings.Contains(p.String(), " "+op.String()) {
			t.Errorf("probe output lacks %v: %v", op, p)
		}
	}
	if p.LastOp < 255 && p.Supported(p.LastOp+1) {
		t.Errorf("operation %d past last_op %d reported supported", p.LastOp+1, p.LastOp)
	}
}

func TestRegisterFiles(t *testing.T) {
	r := newRing(t, 8, uring.Options{})
	sp := socketpair(t)
	if err := r.RegisterFiles([]int32{int32(sp[0]), -1}); err != nil {
		t.Fatal(err)
	}
	if n, err := r.UpdateFiles(1, []int32{int32(sp[1])}); err != nil || n != 1 {
		t.Fatalf("UpdateFiles = %d, %v", n, err)
	}
	msg, in := []byte("fixed"), make([]byte, 16)
	s := sqe(t, r, 1)
	s.PrepSend(0, msg, unix.MSG_NOSIGNAL) // registered slot 0: sp[0]
	s.Flags |= uring.SQEFixedFile
	s = sqe(t, r, 2)
	s.PrepRecv(1, in, 0) // registered slot 1: sp[1]
	s.Flags |= uring.SQEFixedFile
	cqes := byUserData(t, wait(t, r, 2))
	if c := cqes[2]; c.Res != int32(len(msg)) || !bytes.Equal(in[:len(msg)], msg) {
		t.Fatalf("recv through a registered file: res %d (%v), data %q", c.Res, c.Err(), in)
	}
	if err := r.UnregisterFiles(); err != nil {
		t.Fatal(err)
	}
	s = sqe(t, r, 3)
	s.PrepSend(0, msg, unix.MSG_NOSIGNAL)
	s.Flags |= uring.SQEFixedFile
	if c := wait(t, r, 1)[0]; c.Res >= 0 {
		t.Errorf("send through an unregistered slot succeeded: res %d", c.Res)
	}
}

func TestTimeout(t *testing.T) {
	r := newRing(t, 4, uring.Options{})
	r.PrepTimeout(sqe(t, r, 9), time.Millisecond, 0, 0)
	c := wait(t, r, 1)[0]
	if c.UserData != 9 || !errors.Is(c.Err(), unix.ETIME) {
		t.Fatalf("timeout: %+v (%v); want user data 9, ETIME", c, c.Err())
	}
	if _, err := r.SubmitAndWaitTimeout(1, time.Millisecond); !errors.Is(err, unix.ETIME) {
		t.Fatalf("waiting with nothing in flight: %v; want ETIME", err)
	}
}

// TestSingleIssuer checks the rule SetupSingleIssuer imposes: another
// thread's submission and registration are refused, the owner's go through.
func TestSingleIssuer(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, 4, uring.Options{Flags: uring.SetupSingleIssuer | uring.SetupDeferTaskrun})
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // surely another thread
		defer runtime.UnlockOSThread()
		s := r.GetSQE()
		s.PrepNop()
		_, err := r.Submit()
		done <- err
		_, err = r.Probe()
		done <- err
	}()
	if err := <-done; !errors.Is(err, unix.EEXIST) {
		t.Fatalf("submission from another thread: %v; want EEXIST", err)
	}
	if err := <-done; !errors.Is(err, unix.EEXIST) {
		t.Fatalf("registration (probe) from another thread: %v; want EEXIST", err)
	}
	if _, err := r.Probe(); err != nil {
		t.Fatalf("the owner's probe: %v", err)
	}
	if c := wait(t, r, 1)[0]; c.Res != 0 {
		t.Fatalf("the owner's submission of the same NOP: %+v", c)
	}
}

func TestCloseReleasesEverything(t *testing.T) {
	if err := uring.Available(); err != nil {
		t.Skip(err.Error())
	}
	base := uringtest.Before(t)
	r, err := uring.New(64, uring.Options{CQEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NewBufRing(3, 256, 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NewBufRing(4, 8, 100); err != nil {
		t.Fatal(err)
	}
	mapped := base.Opened(t, 1, r.Regions())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	base.Released(t, mapped)
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.Submit(); !errors.Is(err, uring.ErrClosed) {
		t.Errorf("Submit after Close: %v", err)
	}
}

func TestSetupErrorNamesTheReason(t *testing.T) {
	tests := []struct {
		name string
		err  uring.SetupError
		want []string
	}{
		{
			name: "sysctl-2",
			err:  uring.SetupError{Errno: syscall.EPERM, Disabled: "2", Kernel: "6.18.44"},
			want: []string{"uring: io_uring_setup: operation not permitted (kernel.io_uring_disabled=2", "disabled for every process", "kernel 6.18.44"},
		},
		{
			name: "sysctl-1",
			err:  uring.SetupError{Errno: syscall.EPERM, Disabled: "1", Kernel: "6.6"},
			want: []string{"operation not permitted", "kernel.io_uring_disabled=1", "io_uring_group"},
		},
		{
			name: "seccomp-eperm",
			err:  uring.SetupError{Errno: syscall.EPERM, Disabled: "0", Kernel: "6.6"},
			want: []string{"operation not permitted", "kernel.io_uring_disabled=0", "seccomp"},
		},
		{
			name: "old-kernel",
			err:  uring.SetupError{Errno: syscall.ENOSYS, Disabled: "absent", Kernel: "4.19"},
			want: []string{"function not implemented", "kernel.io_uring_disabled=absent", "lacks io_uring", "kernel 4.19"},
		},
		{
			name: "flags",
			err:  uring.SetupError{Errno: syscall.EINVAL, Disabled: "absent", Kernel: "5.10", Flags: uring.SetupDeferTaskrun},
			want: []string{"invalid argument", "0x2000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if !errors.Is(&tc.err, tc.err.Errno) {
				t.Errorf("errors.Is(err, %v) is false", tc.err.Errno)
			}
		})
	}
}

// TestUnavailableUnderSeccomp runs Available and New in a child process
// whose io_uring_setup a seccomp filter makes fail, as container runtimes
// do, and checks that the error says so.
func TestUnavailableUnderSeccomp(t *testing.T) {
	if child, err := uringtest.Denied(); child {
		if err != nil {
			fmt.Println("FILTER:", err)
			return
		}
		_, newErr := uring.New(8, uring.Options{})
		var se *uring.SetupError
		fmt.Printf("AVAILABLE: %v\nNEW: %v\nSETUPERROR: %v\n", uring.Available(), newErr, errors.As(newErr, &se))
		return
	}
	if err := uring.Available(); err != nil {
		t.Skip(err.Error())
	}
	tests := []struct {
		name  string
		errno syscall.Errno
		want  string
	}{
		{name: "eperm", errno: syscall.EPERM, want: "operation not permitted"},
		{name: "enosys", errno: syscall.ENOSYS, want: "function not implemented"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := uringtest.RunDenied(t, "^TestUnavailableUnderSeccomp$", tc.errno)
			for _, w := range []string{
				"AVAILABLE: uring: io_uring_setup: " + tc.want + " (kernel.io_uring_disabled=",
				"NEW: uring: io_uring_setup: " + tc.want,
				"seccomp",
				"SETUPERROR: true",
			} {
				if !strings.Contains(out, w) {
					t.Errorf("child output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestOpString(t *testing.T) {
	tests := []struct {
		op   uring.Op
		want string
	}{
		{op: uring.OpNop, want: "NOP"},
		{op: uring.OpRecv, want: "RECV"},
		{op: uring.OpRecvZC, want: "RECV_ZC"},
		{op: uring.OpEpollWait, want: "EPOLL_WAIT"},
		{op: uring.OpPipe, want: "PIPE"},
		{op: 250, want: "OP_250"},
	}
	for _, tc := range tests {
		if got := tc.op.String(); got != tc.want {
			t.Errorf("Op(%d).String() = %q, want %q", uint8(tc.op), got, tc.want)
		}
	}
}
