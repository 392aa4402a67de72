// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package agentsessionprocessor reconstructs AgentSessions from agent spans, scores each
// turn when it closes and each session when it ends, and emits the results as evaluation
// spans parented to what they evaluate (docs/architecture.md §4, §6). Every incoming span is passed
// on unchanged and at once; the processor keeps only a compact model per open session.
package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
