package stages

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The kernel's stages, in the table's order: what a request costs in the
// kernel, split by the mechanism it pays for. A symbol belongs to the
// first stage whose rule matches (kernelStage); the rest is the TCP/IP
// path, its softirqs and the loopback device, copies, memory and the
// interrupts landing there (on a VM, its interrupt-enable path).
const (
	StageTCP     = "kernel: TCP/IP, softirq, loopback, the rest"
	StageIRQ     = "kernel: interrupts re-enabled (samples held while masked)"
	StageSyscall = "kernel: system-call entry and exit, epoll, VFS"
	StageURing   = "kernel: io_uring"
	StageFiles   = "kernel: file references (fget, fdget, fput)"
	StageSched   = "kernel: scheduler, context switches, wake-ups"
	StageFutex   = "kernel: futex"
	StageRuntime = "user: Go runtime, net, system-call stubs"
	StageBytes   = "user: byte scans, compares, copies (bytealg, memmove)"
	StageLibc    = "user: libc"
	StageUnknown = "user: unresolved addresses"
	// A server's own user code is a stage per Go package below the
	// module ("user: wire", "user: models/proactor") or per binary
	// ("user: nginx").
	userPrefix = "user: "
)

// kernelStages are the kernel's stages but StageTCP, in order, each
// with the symbol prefixes (and, after "*", substrings) that select it.
var kernelStages = []struct {
	stage string
	rules []string
}{
	// The CPU clock's sampling interrupt cannot land while interrupts
	// are masked; it lands where they are enabled again, with the
	// interrupts that waited (a VM's paravirtual pvm_irq_enable).
	{StageIRQ, []string{"pvm_irq_enable", "native_irq_enable", "arch_local_irq_enable", "_raw_spin_unlock_irq", "*_irq_enable"}},
	{StageURing, []string{"io_", "__io_", "tctx_task_work", "*io_uring"}},
	{StageFutex, []string{"futex_", "__futex", "do_futex", "get_futex_key"}},
	{StageFiles, []string{"fget", "__fget", "fdget", "__fdget", "fput", "__fput", "fd_install"}},
	{StageSched, []string{"__schedule", "schedule", "finish_task_switch", "__switch_to", "switch_mm", "switch_fpu",
		"native_write_msr", "pick_next", "__pick", "put_prev", "set_next", "dequeue_", "enqueue_", "update_curr",
		"update_load", "update_cfs", "update_rq", "psi_", "try_to_wake_up", "ttwu_", "wake_up", "__wake_up",
		"select_task_rq", "resched", "check_preempt", "wakeup_preempt", "throttle_cfs", "unthrottle", "tg_",
		"sched_", "__sched", "cpuacct_", "__cgroup_account", "hrtick", "prepare_task_switch", "*_fair", "*_entity"}},
	{StageSyscall, []string{"entry_SYSCALL", "do_syscall", "syscall_", "__x64_sys_", "__arm64_sys_", "x64_sys_call",
		"el0_svc", "invoke_syscall", "exit_to_user_mode", "ep_", "do_epoll", "__do_epoll", "epoll", "__ep_",
		"vfs_", "ksys_", "rw_verify_area", "security_file", "fsnotify", "__fsnotify", "sock_read_iter",
		"sock_write_iter", "new_sync_", "fpregs_", "restore_fpregs", "__rseq", "rseq_"}},
}

// kernelStage returns the stage of kernel symbol sym.
func kernelStage(sym string) string {
	// Clones the compiler made (".isra.0", ".constprop.0", ".part.0")
	// are the function's.
	if i := strings.IndexByte(sym, '.'); i > 0 {
		sym = sym[:i]
	}
	for _, k := range kernelStages {
		for _, r := range k.rules {
			if sub, ok := strings.CutPrefix(r, "*"); ok {
				if strings.Contains(sym, sub) {
					return k.stage
				}
			} else if strings.HasPrefix(sym, r) {
				return k.stage
			}
		}
	}
	return StageTCP
}

// goRuntime are the prefixes of the Go symbols that are the runtime's
// and the standard library's system-call and network layers, not the
// server's code.
var goRuntime = []string{"runtime.", "internal/runtime/", "syscall.", "internal/syscall/", "golang.org/x/sys/",
	"internal/poll.", "net.", "internal/abi."}

// goBytes are the Go symbols that scan, compare and copy bytes: the
// HTTP parse's searches (bytes.IndexByte), its comparisons, the copies
// into and out of buffers. Their assembly bodies have no package.
var goBytes = []string{"internal/bytealg.", "runtime.memmove", "runtime.memclr", "indexbytebody", "memeqbody", "cmpbody",
	"countbody", "indexbody"}

// userStage returns the stage of user-space symbol sym in shared
// object dso; module is the Go module whose packages are the server's
// own code ("concbench").
func userStage(dso, sym, module string) string {
	switch {
	case strings.HasPrefix(dso, "libc.") || strings.HasPrefix(dso, "libc-") || strings.HasPrefix(dso, "ld-linux"):
		return StageLibc
	case strings.HasPrefix(sym, "0x") || sym == "":
		// No symbol: the binary's, if perf knows which it is (a
		// stripped nginx).
		if dso == "" || strings.HasPrefix(dso, "[unknown") {
			return StageUnknown
		}
		return userPrefix + dso
	}
	for _, p := range goBytes {
		if strings.HasPrefix(sym, p) {
			return StageBytes
		}
	}
	for _, p := range goRuntime {
		if strings.HasPrefix(sym, p) {
			return StageRuntime
		}
	}
	if rest, ok := strings.CutPrefix(sym, module+"/"); ok {
		return userPrefix + goPackage(rest)
	}
	if strings.HasPrefix(sym, module+".") { // package main
		return userPrefix + "main"
	}
	if goSymbol(sym) && !strings.Contains(dso, ".so") {
		// The standard library's package ("sync", "strconv") or another
		// module's (a dependency).
		return userPrefix + goPackage(sym)
	}
	return userPrefix + dso
}

// goSymbol reports whether sym looks like a Go symbol (package.Name),
// not a C function or one of its clones ("f.part.0", "f.isra.0",
// "f.constprop.0", "f.cold").
func goSymbol(sym string) bool {
	if !strings.Contains(sym, ".") {
		return false
	}
	for _, clone := range []string{".part.", ".isra.", ".constprop.", ".cold", ".lto_priv."} {
		if strings.Contains(sym, clone) {
			return false
		}
	}
	return true
}

// goPackage returns the package path of Go symbol sym
// ("models/internal/connio.(*Conn).Read" → "models/internal/connio").
func goPackage(sym string) string {
	slash := strings.LastIndexByte(sym, '/')
	if i := strings.IndexByte(sym[slash+1:], '.'); i >= 0 {
		return sym[:slash+1+i]
	}
	return sym
}

// Sample is one line of perf report: samples of one symbol in one
// thread.
type Sample struct {
	TID     int
	Comm    string
	DSO     string
	Symbol  string
	Kernel  bool // a kernel symbol ("[k]")
	Samples int64
}

// Stage returns the sample's stage (module: the server's Go module).
func (s *Sample) Stage(module string) string {
	if s.Kernel {
		return kernelStage(s.Symbol)
	}
	return userStage(s.DSO, s.Symbol, module)
}

// ReportArgs are perf report's arguments for ParseReport: every symbol
// of every thread with its sample count, no children (the leaf's own
// samples), fields separated by '|'.
func ReportArgs(data string) []string {
	return []string{"report", "-i", data, "--no-children", "--stdio", "--percent-limit", "0",
		"-t", "|", "-F", "sample,pid,dso,sym"}
}

// ParseReport reads the output of perf report run with ReportArgs:
// lines "samples|tid:comm|dso|[k] symbol", comments (#) and blank lines
// skipped.
func ParseReport(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("stages: perf report line %d: %q: want samples|tid:comm|dso|symbol", n, line)
		}
		var s Sample
		var err error
		if s.Samples, err = strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64); err != nil {
			return nil, fmt.Errorf("stages: perf report line %d: samples %q: %v", n, f[0], err)
		}
		tid, comm, ok := strings.Cut(strings.TrimSpace(f[1]), ":")
		if s.TID, err = strconv.Atoi(tid); !ok || err != nil {
			return nil, fmt.Errorf("stages: perf report line %d: thread %q: want tid:comm", n, f[1])
		}
		s.Comm, s.DSO = comm, strings.TrimSpace(f[2])
		sym := strings.TrimSpace(f[3])
		switch {
		case strings.HasPrefix(sym, "[k] "):
			s.Kernel, s.Symbol = true, sym[4:]
		case strings.HasPrefix(sym, "[.] "):
			s.Symbol = sym[4:]
		default:
			s.Symbol = sym
			s.Kernel = strings.HasPrefix(s.DSO, "[kernel")
		}
		s.Symbol = strings.TrimSpace(s.Symbol)
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stages: perf report: %w", err)
	}
	return out, nil
}
