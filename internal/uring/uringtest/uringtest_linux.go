package uringtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"concbench/internal/uring"

	"golang.org/x/sys/unix"
)

// ringLink is what /proc/self/fd/N links to for an io_uring descriptor.
const ringLink = "anon_inode:[io_uring]"

// RingFDs returns the number of open io_uring descriptors of the process.
func RingFDs() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == ringLink {
			n++
		}
	}
	return n, nil
}

// Mappings is, for each of a set of regions, the /proc/self/maps line of
// the mapping that holds it, as recorded by Mapped.
type Mappings struct {
	regions []uring.Region
	lines   []string
}

// Mapped records the mapping that holds each region and fails if a region
// is not mapped whole by one mapping.
//
// Why a record, not an overlap check after the fact: once a region is
// unmapped, the process (the Go runtime, another test) may map something
// else at the same address, and an overlap check then reports the region
// as still mapped (it did, once in a fresh-clone make test). A region is
// still mapped if the very mapping that held it is still listed: same
// bounds, permissions, offset, device, inode and name.
func Mapped(regions []uring.Region) (*Mappings, error) {
	lines, err := mappingLines(regions)
	if err != nil {
		return nil, err
	}
	for i, r := range regions {
		if lines[i] == "" {
			return nil, fmt.Errorf("uringtest: region %+v is not mapped whole by one mapping", r)
		}
	}
	return &Mappings{regions: regions, lines: lines}, nil
}

// StillMapped returns the regions whose mapping recorded by Mapped is
// still listed in /proc/self/maps.
func (m *Mappings) StillMapped() ([]uring.Region, error) {
	lines, err := mappingLines(m.regions)
	if err != nil {
		return nil, err
	}
	var live []uring.Region
	for i, r := range m.regions {
		if lines[i] == m.lines[i] {
			live = append(live, r)
		}
	}
	return live, nil
}

// Baseline is the process's io_uring resources before a test opens rings:
// its ring descriptors and the bytes its rings map (uring.MappedBytes).
type Baseline struct {
	fds   int
	bytes int64
}

// Before records the baseline; an error fails t.
func Before(t testing.TB) Baseline {
	t.Helper()
	n, err := RingFDs()
	if err != nil {
		t.Fatal(err)
	}
	return Baseline{fds: n, bytes: uring.MappedBytes()}
}

// Opened checks that rings more descriptors are open than at the baseline,
// and records the mappings of regions, the open rings' (Mapped), for
// Released; an unmapped region fails t.
func (b Baseline) Opened(t testing.TB, rings int, regions []uring.Region) *Mappings {
	t.Helper()
	if n, _ := RingFDs(); n != b.fds+rings {
		t.Errorf("%d io_uring descriptors open, %d before; want %d more", n, b.fds, rings)
	}
	m, err := Mapped(regions)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Released checks, once the rings are closed, that the process is back at
// the baseline: no more ring descriptors than before, none of m's mappings
// left, and no more bytes mapped by rings.
func (b Baseline) Released(t testing.TB, m *Mappings) {
	t.Helper()
	if n, _ := RingFDs(); n != b.fds {
		t.Errorf("%d io_uring descriptors after Close, %d before", n, b.fds)
	}
	if live, err := m.StillMapped(); err != nil || len(live) != 0 {
		t.Errorf("still mapped after Close: %+v (%v)", live, err)
	}
	if n := uring.MappedBytes(); n != b.bytes {
		t.Errorf("rings hold %d bytes mapped after Close, %d before", n, b.bytes)
	}
}

// mappingLines returns, for each region, the /proc/self/maps line whose
// range holds the whole region, or "" if none does.
func mappingLines(regions []uring.Region) ([]string, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines := make([]string, len(regions))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rng, _, _ := strings.Cut(sc.Text(), " ")
		los, his, ok := strings.Cut(rng, "-")
		if !ok {
			continue
		}
		lo, err1 := strconv.ParseUint(los, 16, 64)
		hi, err2 := strconv.ParseUint(his, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("uringtest: bad line in /proc/self/maps: %q", sc.Text())
		}
		for i, r := range regions {
			if rlo, rhi := uint64(r.Addr), uint64(r.Addr)+uint64(r.Len); lo <= rlo && rhi <= hi {
				lines[i] = strings.Join(strings.Fields(sc.Text()), " ")
			}
		}
	}
	return lines, sc.Err()
}

// childEnv names the errno a child process must make io_uring_setup fail
// with.
const childEnv = "URINGTEST_DENY_SETUP_ERRNO"

// Denied reports whether this process is a child started by RunDenied. If
// it is, it has installed a seccomp filter that makes every io_uring_setup
// call of every thread fail with the requested errno; the test then does
// what it wants to observe, prints it, and exits.
func Denied() (bool, error) {
	v := os.Getenv(childEnv)
	if v == "" {
		return false, nil
	}
	errno, err := strconv.Atoi(v)
	if err != nil {
		return true, fmt.Errorf("uringtest: %s=%q: %w", childEnv, v, err)
	}
	return true, denySetup(syscall.Errno(errno))
}

// RunDenied runs the test matching run (a -test.run pattern) of the current
// test binary in a child process in which io_uring_setup fails with errno,
// and returns what the child printed.
func RunDenied(t *testing.T, run string, errno syscall.Errno) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, int(errno)))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process (io_uring_setup denied with %v): %v\n%s", errno, err, out)
	}
	return string(out)
}

// denySetup installs a seccomp filter on every thread of the process that
// makes io_uring_setup fail with errno and allows everything else.
func denySetup(errno syscall.Errno) error {
	// The system call number is the same (425) on every 64-bit Linux
	// architecture, so the filter need not check the architecture.
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl", err)
	}
	// TSYNC applies the filter to every thread of the process.
	const seccompSetModeFilter = 1
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, seccompSetModeFilter, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return os.NewSyscallError("seccomp", e)
	}
	runtime.KeepAlive(prog)
	return nil
}
