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
BENCH_PKGS    ?= ./processor/agentsessionprocessor/... ./internal/conventions/... ./internal/tracker/... ./internal/assembly/... ./internal/evaluation/...
BENCH_FLAGS   ?= -benchtime=1s
AGENTEVAL_DATA_DIR ?= ./data
export AGENTEVAL_DATA_DIR
# End-to-end benchmark (bench/e2e): a bench-only collector (bench/e2e/builder-bench.yaml) run
# as a real process per pipeline under OTLP load. BENCH_E2E_FLAGS go to the harness
# (`go run ./bench/e2e -h`), e.g. BENCH_E2E_FLAGS='-duration 10s -pipelines passthrough,agentsession'.
BENCH_BUILD_DIR := _build-bench
BENCH_BIN     := bin/otelcol-agenteval-bench
BENCH_E2E_FLAGS ?=
MODULE        := github.com/agenteval/agenteval-collector
# Linters (goimports, staticcheck) from their own module: `go tool` builds them from internal/tools/go.mod.
TOOLS         := $(GO) tool -modfile=internal/tools/go.mod
LINT_FILES    := find . -name '*.go' -not -path './$(BUILD_DIR)/*' -not -path './$(BENCH_BUILD_DIR)/*' -not -path './.git/*' -not -path '*/node_modules/*'

.PHONY: all build run test bench bench-build bench-e2e fault lint generate frameworks clean

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
	@echo "  evaluation channel http://localhost:8891/api/v1/evaluations/non-spamminess/... (keys: POST http://localhost:8892/api/v1/admin/agents)"
	@echo "  Prometheus         http://localhost:8889/metrics"
	@echo "  web UI             http://localhost:8890/ (sessions, transcripts, live view)"
	@echo "  query API          http://localhost:8890/api/v1/agent_sessions"
	@echo "                     http://localhost:8890/api/v1/agent_sessions/{session_id}"
	@echo "  result store       $(AGENTEVAL_DATA_DIR)/agenteval.db"
	@echo "  the bundled samples (testdata/samples/: one support conversation per file, run with the"
	@echo "  Vercel AI SDK, LangGraph and OpenAI Agents) are replayed now. What each shows:"
	@echo "    *_handoff.json          triage_agent hands a refund to refund_agent: a clean run"
	@echo "    *_bad_tool_args.json    a refund call with a made-up argument, rejected, then retried right"
	@echo "    *_unknown_tool.json     triage_agent calls refund_agent's tool: UNAUTHORIZED_TOOL"
	@echo "    *_multi_turn.json       the user corrects the order number in turn 2: RDM on turn 1"
	@echo "    *_one_trace.json        the multi_turn conversation, all three turns inside one trace"
	@echo "    openai_agents_unknown_tool_raise.json  the run crashes with no answer"
	@echo "  each is scored $${AGENTEVAL_SESSION_TIMEOUT:-30s} after its last span (AGENTEVAL_SESSION_TIMEOUT),"
	@echo "  the crashed run too (its unfinished turn closes as partial): the web UI lists them then"
	./$(BIN) --config $(CONFIG)

## test: the test suite over the whole module (set AGENTEVAL_TEST_POSTGRES_DSN for the PostgreSQL store tests)
test:
	$(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

## bench: benchmarks of the processor, session assembly and evaluation, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(BENCH_FLAGS) -timeout 30m $(BENCH_PKGS)

## bench-build: the bench-only collector (distribution components + groupbytrace + pprof), not built by CI
bench-build:
	@mkdir -p $(BENCH_BUILD_DIR) bin
	@if [ -f $(BENCH_BUILD_DIR)/go.sum ]; then sort -u go.sum $(BENCH_BUILD_DIR)/go.sum -o $(BENCH_BUILD_DIR)/go.sum; else cp go.sum $(BENCH_BUILD_DIR)/go.sum; fi
	$(GO) tool builder --config bench/e2e/builder-bench.yaml
	@cp $(BENCH_BUILD_DIR)/otelcol-agenteval-bench $(BENCH_BIN)
	@echo "built $(BENCH_BIN)"

## bench-e2e: each pipeline (pass-through, groupbytrace, agentsession, agentsession+agenteval, shipped) as a real collector under the same OTLP load; prints the results table
bench-e2e: build bench-build
	$(GO) run ./bench/e2e -collector $(BENCH_BIN) $(BENCH_E2E_FLAGS)

## frameworks: regenerate the framework traces (testdata/samples, testdata/conformance) with npm; not run by CI
frameworks:
	testdata/frameworks/generate.sh
	testdata/frameworks/conformance/generate.sh

## fault: issue 13's fault scenarios. First the tests (forged evaluation spans, store down at
## start, store down across SIGTERM and restart on SQLite and PostgreSQL, kill -9 with the
## persistent queue, sessions cut by kill -9 recovered as partial, a 2,000-turn request, deep
## nesting) with in-process collectors and faultcol processes; then e2e/internal/faultrun
## against the built collector ($(BIN), built when missing): the hostile OTLP corpus over
## OTLP/HTTP JSON, OTLP/HTTP protobuf and gRPC, a SIGTERM under load with a restart, and a
## PostgreSQL store outage (AGENTEVAL_TEST_POSTGRES_DSN; cut through a proxy) across a SIGTERM
## and at start, printing spans in/out and analyses sent/stored per scenario. FAULT_FLAGS=-short
## is CI's short form (200 instead of 2,000 turns, 1s of load, a 3s outage). Not part of
## `make test`.
## docs/decisions/result-durability.md
FAULT_TESTS := TestForgedEvaluationSpansChangeNothing|TestShutdownWithTheStoreDownLosesNothing|TestStartsWhileTheStoreIsDown|TestPostgresOutageAcrossRestart|TestCollectorStartsWithTheStoreDown|TestConfigKeepsAnalysesThroughOutages|TestDeepNestingRefused|TestOneRequestOfManyTurnsIsBounded|TestKill9WithTheStoreDownLosesNothing|TestKill9SessionsRecoveredAsPartial|TestCrashedSessionsRecoveredAsPartial|TestRecoverySweepersRace
FAULT_FLAGS ?=
fault:
	@out=$$(mktemp); $(GO) test -count=1 -v -run '^($(FAULT_TESTS))$$' ./exporter/agentevalexporter/ ./e2e/ ./processor/agentsessionprocessor/ >$$out 2>&1; rc=$$?; \
		grep -E '^(--- |ok|FAIL|panic)|_test.go:[0-9]+: (forged|SQLite|PostgreSQL|store down|shutdown|slowest|kill|recovered)' $$out; \
		if [ $$rc -ne 0 ]; then cat $$out; fi; rm -f $$out; exit $$rc
	$(GO) test -run '^$$' -bench BenchmarkOneRequestOfManyTurns -benchtime=1x ./processor/agentsessionprocessor/ | grep Benchmark
	@test -x $(BIN) || $(MAKE) build
	$(GO) run ./e2e/internal/faultrun -collector $(BIN) $(FAULT_FLAGS)

## lint: what reviewers check: gofmt, import grouping (stdlib / third party / this module,
## goimports -local), go vet, staticcheck. The linters are pinned in internal/tools/go.mod, a
## separate module, so they stay out of the distribution's dependency graph. Every check runs;
## the target fails if any failed.
lint:
	@fail=0; \
	out="$$($(LINT_FILES) | xargs gofmt -l)"; \
	if [ -n "$$out" ]; then echo "gofmt -l reports (run gofmt -w FILE):"; echo "$$out"; fail=1; fi; \
	out="$$($(LINT_FILES) -not -name 'generated_*' | xargs $(TOOLS) goimports -local $(MODULE) -l)"; \
	if [ -n "$$out" ]; then echo "imports not grouped stdlib / third party / $(MODULE) (run $(TOOLS) goimports -local $(MODULE) -w FILE):"; echo "$$out"; fail=1; fi; \
	echo "$(GO) vet ./..."; $(GO) vet ./... || fail=1; \
	echo "staticcheck ./..."; $(TOOLS) staticcheck ./... || fail=1; \
	exit $$fail

## generate: regenerate the mdatagen code (metadata.yaml -> internal/metadata, tests, documentation.md)
generate:
	$(GO) generate ./...

## clean: remove the build output (not the result store in ./data)
clean:
	rm -rf $(BUILD_DIR) $(BENCH_BUILD_DIR) bin
