# agenteval-collector: build, run and test.
#   make run     build the collector (ocb) and run it with config.yaml
#   make test    the test suite (what CI runs)
# See README.md; the choices are in docs/decisions/build.md.

GO            ?= go
BUILD_DIR     := _build
DIST_NAME     := otelcol-agenteval
BIN           := bin/$(DIST_NAME)
CONFIG        ?= config.yaml
TEST_TIMEOUT  ?= 10m
TEST_FLAGS    ?=
# Benchmarks: the hot paths (span ingest, assembly, evaluation). The processor's benchmark
# also runs contrib's groupbytrace processor on the same input for comparison.
BENCH         ?= .
BENCH_PKGS    ?= ./processor/agentsessionprocessor/... ./internal/session/... ./internal/evaluation/...
BENCH_FLAGS   ?= -benchtime=1s
AGENTEVAL_DATA_DIR ?= ./data
export AGENTEVAL_DATA_DIR

.PHONY: all build run test bench lint generate frameworks clean

all: lint test build

## build: generate the distribution with ocb (builder-config.yaml) and compile it to bin/otelcol-agenteval
build:
	@mkdir -p $(BUILD_DIR) bin
	@# Seed the generated module with this repository's checksums, so ocb's `go mod tidy`
	@# reuses the versions already verified here instead of looking them up again.
	@if [ -f $(BUILD_DIR)/go.sum ]; then sort -u go.sum $(BUILD_DIR)/go.sum -o $(BUILD_DIR)/go.sum; else cp go.sum $(BUILD_DIR)/go.sum; fi
	$(GO) tool builder --config builder-config.yaml
	@cp $(BUILD_DIR)/$(DIST_NAME) $(BIN)
	@echo "built $(BIN)"

## run: build, then run the collector with config.yaml (Ctrl-C stops it)
run: build
	@mkdir -p "$(AGENTEVAL_DATA_DIR)"
	@echo "agenteval-collector is starting with $(CONFIG); where to look:"
	@echo "  OTLP in            grpc localhost:4317, http http://localhost:4318"
	@echo "  AgentSession JSON  POST http://localhost:8891/v1/agent_sessions"
	@echo "  Prometheus         http://localhost:8889/metrics"
	@echo "  query API          http://localhost:8890/api/v1/agent_sessions"
	@echo "                     http://localhost:8890/api/v1/agent_sessions/{session_id}"
	@echo "  result store       $(AGENTEVAL_DATA_DIR)/agenteval.db"
	@echo "  the bundled samples in testdata/samples/ are replayed now; their sessions are scored"
	@echo "  after $${AGENTEVAL_SESSION_TIMEOUT:-30s} of silence (AGENTEVAL_SESSION_TIMEOUT)"
	./$(BIN) --config $(CONFIG)

## test: the test suite over the whole module (set AGENTEVAL_TEST_POSTGRES_DSN for the PostgreSQL store tests)
test:
	$(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

## bench: benchmarks of the processor, session assembly and evaluation, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(BENCH_FLAGS) -timeout 30m $(BENCH_PKGS)

## frameworks: regenerate the framework traces (testdata/samples, testdata/conformance) with npm; not run by CI
frameworks:
	testdata/frameworks/generate.sh
	testdata/frameworks/conformance/generate.sh

## lint: gofmt must report nothing, go vet must pass
lint:
	@out="$$(find . -name '*.go' -not -path './$(BUILD_DIR)/*' -not -path './.git/*' -not -path '*/node_modules/*' -exec gofmt -l {} +)"; if [ -n "$$out" ]; then echo "gofmt -l reports:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## generate: regenerate the mdatagen code (metadata.yaml -> internal/metadata, tests, documentation.md)
generate:
	$(GO) generate ./...

## clean: remove the build output (not the result store in ./data)
clean:
	rm -rf $(BUILD_DIR) bin
