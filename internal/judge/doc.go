// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package judge is the optional LLM judge and embeddings client over an OpenAI-compatible
// API (OpenAI, Ollama, vLLM, LiteLLM) through the official openai-go client.
//
// A Client implements reference.Judge: one chat completion per request with structured
// output {score, pass, reason}, a cache by content hash, a calls-per-minute budget, a
// per-call timeout and the client's retries with exponential backoff on 408/409/429/5xx.
// Its Pool runs judge work on a bounded number of workers from a bounded queue and never
// blocks the submitter: the judge never runs on the ingest path. Sampled chooses the
// judged sessions by a hash of the conversation id. Every failure is an error for the
// caller to record as `judge_error` next to the deterministic score it leaves in place.
//
// Configuration and behaviour: docs/judge.md.
package judge // import "github.com/agenteval/agenteval-collector/internal/judge"
