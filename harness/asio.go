package harness

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"concbench/models/registry"
)

// AsioModel is the Config.Model of a configuration that runs real
// boost.asio (standalone asio: realservers/asio/server.cpp, built into
// bin/asio-server by make asio) instead of a concbench server: the
// reference the sharedqueue model is checked against, as real nginx is
// the nginx-style model's (NginxModel).
const AsioModel = "asio"

// SharedQueueModel is the asio-style model's name in the model table
// (models/registry): one operation queue run by a thread per CPU, the
// reactor token in it.
const SharedQueueModel = "sharedqueue"

// AsioBinary is the asio server's file name, beside concbench in bin/
// (make asio).
const AsioBinary = "asio-server"

// errNoAsio says the asio server is not built, and how to build it.
var errNoAsio = errors.New("the asio server is not built (no " + AsioBinary + " beside concbench, in bin/ of the working directory or a directory above it, or in PATH): make asio builds bin/" + AsioBinary + " on Debian's libasio-dev")

// asioPaths returns where the harness looks for the asio server, in
// order: beside the running binary (bin/concbench's bin/), then bin/ of
// the working directory and of each directory above it (the repository
// root from a package's test), then PATH. A variable for tests.
var asioPaths = func() []string {
	var ps []string
	if exe, err := os.Executable(); err == nil {
		ps = append(ps, filepath.Join(filepath.Dir(exe), AsioBinary))
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			ps = append(ps, filepath.Join(dir, "bin", AsioBinary))
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath(AsioBinary); err == nil {
		ps = append(ps, p)
	}
	return ps
}

// lookAsio returns the asio server's path, or errNoAsio.
func lookAsio() (string, error) {
	for _, p := range asioPaths() {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errNoAsio
}

// AsioConfig returns real asio, "asio": an io_context run by a thread
// per server CPU (the sizing rule's n), at least PractisedFloor of them,
// as the model beside it.
func AsioConfig() Config {
	return Config{Name: AsioModel, Model: AsioModel, Sizing: SizeRule, MinPool: PractisedFloor}
}

// AsioPair returns the asio profile's configurations: the sharedqueue
// model — the model table's first configuration of it, sized by the
// rule with the practised profile's floor (PractisedFloor), as the
// practised profile runs it — then real asio with as many threads. A
// model not in the table is still listed, by name, with its defaults: a
// binary without it reports it unavailable, and asio runs alone.
func AsioPair() []Config {
	c := Config{Name: SharedQueueModel, Model: SharedQueueModel}
	if m, ok := registry.Lookup(SharedQueueModel); ok {
		c.Sizing, c.MinPool = SizeRule, PractisedFloor
		if len(m.Configs) > 0 {
			c.Name, c.Args = m.Configs[0].Name, slices.Clone(m.Configs[0].Args)
		}
	}
	return []Config{c, AsioConfig()}
}

// asioProfile returns the asio experiment made from base: the
// sharedqueue model beside real asio (AsioPair) at the nginx profile's
// loads — one workload with no work (asio does none), capacity and one
// equal absolute load, 0.7 of the slower one's capacity, 5 repetitions
// — and a mechanisms point each (system calls and futex wake-ups per
// request, where the kernel's counters can be read).
func asioProfile(base Experiment) Experiment {
	e := nginxProfile(base)
	e.Configs = AsioPair()
	e.Mechanisms = DefaultMechanisms
	e.MechanismsWarmup = Duration(DefaultMechanismsWarmup)
	e.MechanismsDuration = Duration(DefaultMechanismsDuration)
	return e
}
