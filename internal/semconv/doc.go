// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package semconv declares, as string constants, every attribute key, event name, span-name
// pattern and enumerated value that agenteval-collector reads from agent traces or writes
// into its evaluation spans (docs/architecture.md §4 and §6; docs/decisions/conventions.md).
//
// The constants are grouped by the convention that defines them:
//   - genai.go: OpenTelemetry GenAI semantic conventions v1.41.1 plus the keys of the
//     unreleased semantic-conventions-genai main branch (handle_conversation_turn,
//     gen_ai.transfer.*) and the non-standard gen_ai.* keys common in the wild
//     (gen_ai.handoff.*, gen_ai.agent.tools, gen_ai.tool.status...);
//   - openinference.go: Arize OpenInference (openinference.span.kind, llm.*, tool.*...);
//   - traceloop.go: OpenLLMetry / Traceloop (traceloop.*, indexed gen_ai.prompt.N.*);
//   - vercel.go: Vercel AI SDK legacy telemetry (ai.*);
//   - adk.go: Google ADK native telemetry (gcp.vertex.agent.*);
//   - agenteval.go: this project's own keys (agent_eval.*).
//
// The Go semconv packages of opentelemetry-go stop carrying GenAI keys after v1.41.0 and
// never carried the other conventions, so the project declares its own (docs/decisions/conventions.md,
// §1.9). The GenAI keys are cross-checked against go.opentelemetry.io/otel/semconv/v1.41.0
// in this package's tests.
package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"
