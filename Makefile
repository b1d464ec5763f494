# concbench — see README.md. Every tool comes from go.mod (go tool …), so a
# fresh machine with Go 1.26 needs nothing else installed.

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 10s
BIN       := bin/concbench

.PHONY: all build test check fmtcheck vet fuzz clean

# vet is a prerequisite of both check and test, so make all runs it once.
all: check test

## build: the concbench binary in bin/ (-buildvcs=auto: stamped with its
## commit even where GOFLAGS says -buildvcs=false, so that every run
## records what was measured)
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/concbench

## static: a static concbench for another machine of this architecture,
## one without a Go toolchain (bin/concbench-linux-$(GOARCH)): copy it
## there and run it as bin/concbench (README, "On a bigger machine")
GOARCH ?= $(shell $(GO) env GOARCH)
.PHONY: static
static:
	CGO_ENABLED=0 GOARCH=$(GOARCH) $(GO) build -trimpath -buildvcs=auto -o bin/concbench-linux-$(GOARCH) ./cmd/concbench

## test: vet, then every test under the race detector (what CI runs);
## TESTFLAGS for more (CI: -json, for its list of skipped tests)
TESTFLAGS ?=
test: vet
	$(GO) test -race -count=1 $(TESTFLAGS) $(PKGS)

## test-short: the unit tier only (-short skips the end-to-end tests that
## start servers, drive load or build the command): seconds, for quick work
.PHONY: test-short
test-short:
	$(GO) test -short -count=1 $(PKGS)

## check: formatting, vet (here and for another system: every package
## builds where the models cannot run, their stubs say so), staticcheck
check: fmtcheck vet
	GOOS=darwin $(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

## fmtcheck: fail if gofmt would change a file
fmtcheck:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi

## vet: go vet every package
vet:
	$(GO) vet $(PKGS)

## fuzz: run every fuzz target for FUZZTIME each (default 10s; give a codec change 60s or more)
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

clean:
	rm -rf bin out

## browser: install Debian's headless Chromium, which the report's browser
## test (skipped without it) and report.png (a screenshot of each run's
## report) use; nothing else needs it
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
.PHONY: browser
browser:
	$(SUDO) apt-get install -y chromium || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y chromium; }

## nginx: install Debian's nginx-light, which the nginx profile runs beside
## the nginx-style model (its configurations are unavailable without it,
## with the reason) and its end-to-end test uses (skipped without it);
## nothing else needs it. Where the system starts the package's service,
## it is stopped and disabled again: the harness starts nginx itself.
.PHONY: nginx
nginx:
	$(SUDO) apt-get install -y nginx-light || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y nginx-light; }
	-$(SUDO) sh -c 'command -v systemctl >/dev/null && systemctl disable --now nginx 2>/dev/null; command -v invoke-rc.d >/dev/null && invoke-rc.d nginx stop 2>/dev/null; true'

## wrk: install Debian's wrk, for checking a server by hand under a
## second, independent load generator (docs/usage.md; docs/findings.md's
## side-by-side rates against nginx); no test or profile needs it.
.PHONY: wrk
wrk:
	$(SUDO) apt-get install -y wrk || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y wrk; }

## asio: install Debian's libasio-dev (standalone asio, header-only) and
## build bin/asio-server (realservers/asio/server.cpp), real boost.asio
## that the asio profile runs beside the sharedqueue model (its
## configuration is unavailable without it, with the reason) and its
## end-to-end test uses (skipped without it); nothing else needs it.
ASIO_BIN := bin/asio-server
.PHONY: asio
asio:
	$(SUDO) apt-get install -y libasio-dev || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y libasio-dev; }
	@mkdir -p bin
	$(CXX) -O2 -std=c++17 -pthread -o $(ASIO_BIN) realservers/asio/server.cpp

## bench: build, then run the default comparison into out/bench-<UTC time>/
## (the workload suite, every model family: about 9 minutes on 2 CPUs);
## PROFILE=<name> for another profile (bin/concbench help bench lists
## them; docs/profiles.md says what each measures); BENCHFLAGS for more
PROFILE    ?= default
BENCHFLAGS ?=
.PHONY: bench figures
bench: build
	$(BIN) bench --profile $(PROFILE) $(BENCHFLAGS)

## validate: check the measurement chain against queueing theory (M/M/1 and
## M/D/1 at rho 0.3, 0.5, 0.7, on the effective service time from measured
## inputs, the plain M/G/1 with the floor beside it; --threads c for M/M/c,
## on c + 1 CPUs) and decompose each response time; about 2 minutes; results in
## out/validate-<UTC time>/; exit 0 validated, 3 not validated.
## VALIDATEFLAGS for more (see bin/concbench help validate)
VALIDATEFLAGS ?=
.PHONY: validate
validate: build
	$(BIN) validate $(VALIDATEFLAGS)

## figures: render the figures and the report of a run folder again:
## make figures RUN=out/bench-<UTC time>
figures: build
	@test -n "$(RUN)" || { echo "usage: make figures RUN=out/bench-<UTC time>"; exit 2; }
	$(BIN) figures --run $(RUN)

## soak: build, then soak every model (one configuration each, and the
## front end over a netpoll back end): 10^7 verified requests of a mixed
## workload per configuration, connections killed at random, the ledger's
## money checked to the unit (a few minutes per configuration on 2 CPUs).
## SOAKFLAGS for more: SOAKFLAGS='--requests 100000 --models netpoll'
SOAKFLAGS ?=
.PHONY: soak
soak: build
	$(BIN) soak $(SOAKFLAGS)

## gate: the CI performance-regression gate: the base revision BASE (default
## HEAD, i.e. your uncommitted changes; for a branch use its merge base:
## make gate BASE=$$(git merge-base origin/main HEAD)) is built in a
## temporary git worktree, the current tree is built too, and both are
## measured in this job, interleaved and counterbalanced, at equal load.
## Exit 0 pass, 1 regression, 2 undecided; the Markdown report goes to
## stdout and, with gate.json, into out/gate-<UTC time>/. GATEFLAGS for
## more (see bin/concbench help gate), e.g. GATEFLAGS="--head-tags
## concbench_regress_cpu" for a self-test with an injected regression.
## gate-ci: the same against the revision named in results/baseline/reference
## (what .ci/run runs after make test).
BASE      ?= HEAD
GATEFLAGS ?=
.PHONY: gate gate-ci
gate: build
	$(BIN) gate --base $(BASE) $(GATEFLAGS)

gate-ci: build
	$(BIN) gate --reference $(GATEFLAGS)
