# concbench — see README.md. Every tool comes from go.mod (go tool …), so a
# fresh machine with Go 1.26 needs nothing else installed.

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 10s
BIN       := bin/concbench

.PHONY: all build test check fuzz clean

all: check test

## build: the concbench binary in bin/
build:
	$(GO) build -o $(BIN) ./cmd/concbench

## test: vet, then every test under the race detector (what CI runs)
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

## check: formatting, vet and staticcheck
check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

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
