// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package toolschema is the one home of tool parameter schemas: Normalize turns a
// configured or traced description (JSON Schema, Gemini upper-case types, a ReAsk flat
// map) into a JSON Schema draft-07 object; Compile, Check and Cache compile it with
// santhosh-tekuri/jsonschema (external $refs refused), and Schema.Validate reports the
// violations of a call's arguments. The evaluator maps violations to its issue types.
package toolschema // import "github.com/agenteval/agenteval-collector/internal/toolschema"
