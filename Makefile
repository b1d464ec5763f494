# concbench — see README.md. Every tool comes from go.mod (go tool …), so a
# fresh machine with Go 1.26 needs nothing else installed.

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 10s
BIN       := bin/concbench

.PHONY: all build test check fmtcheck vet fuzz clean

# vet is a prerequisite of both check and test, so make all runs it once.
all: check test

## build: the concbench binary in bin/
build:
	$(GO) build -o $(BIN) ./cmd/concbench

## test: vet, then every test under the race detector (what CI runs)
test: vet
	$(GO) test -race -count=1 $(PKGS)

## check: formatting, vet and staticcheck
check: fmtcheck vet
	$(GO) tool staticcheck $(PKGS)

## fmtcheck: fail if gofmt would change a file
fmtcheck:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi

## vet: go vet every package
vet:
	$(GO) vet $(PKGS)

## fuzz: run every fuzz target for FUZZTIME each (default 10s; the issue's bar is 60s)
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

clean:
	rm -rf bin out

## bench: build, then run the default comparison into out/bench-<UTC time>/
## (every model, a few minutes); PROFILE=thesis for the long sweep, gate for
## the CI suite; BENCHFLAGS for more (see bin/concbench help bench)
PROFILE    ?= default
BENCHFLAGS ?=
.PHONY: bench figures
bench: build
	$(BIN) bench --profile $(PROFILE) $(BENCHFLAGS)

## figures: render the figures and the report of a run folder again:
## make figures RUN=out/bench-<UTC time>
figures: build
	@test -n "$(RUN)" || { echo "usage: make figures RUN=out/bench-<UTC time>"; exit 2; }
	$(BIN) figures --run $(RUN)

## gate: the CI performance-regression gate, same job: the base commit BASE
## (default HEAD, i.e. your uncommitted changes; for a branch or a pull
## request use its merge base: make gate BASE=$$(git merge-base origin/main HEAD))
## is built in a temporary git worktree and measured interleaved with the
## current tree, under 4 minutes. Exit 0 pass, 1 regression, 2 undecided;
## the Markdown report goes to stdout and, with gate.json, into
## out/gate-<UTC time>/. GATEFLAGS for more (see bin/concbench help gate).
## gate-ci: the current tree against the committed baseline results/baseline/
## on its robust metrics (allocations, bytes and context switches per
## request): what .ci/run runs after make test.
## baseline: measure the current tree and rewrite results/baseline/. Only on
## the CI machine type, after an intended performance change or a Go
## toolchain change, committed on its own as a reviewed change.
BASE      ?= HEAD
GATEFLAGS ?=
.PHONY: gate gate-ci baseline
gate: build
	$(BIN) gate --base $(BASE) $(GATEFLAGS)

gate-ci: build
	$(BIN) gate --baseline results/baseline --head-binary $(BIN) $(GATEFLAGS)

baseline: build
	$(BIN) gate --write-baseline results/baseline --head-binary $(BIN) $(GATEFLAGS)
