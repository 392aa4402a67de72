// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package conventions turns one span into a session.SpanRecord (Extractor.Extract): its
// class, session key, agent, model, usage, messages, tool call, tool definitions and
// handoff, read from the OTel GenAI, OpenInference, OpenLLMetry, Vercel AI SDK and
// framework conventions (docs/architecture.md §4, docs/decisions/conventions.md). It reads
// pdata spans and writes plain Go values; it knows nothing of the collector.
package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"
