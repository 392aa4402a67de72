// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// jToolDef is one tool definition in any of the shapes seen (docs/decisions/conventions.md, §2.2,
// §4): OTel/Responses {type, name, description, parameters}, OpenAI chat
// {type:"function", function:{...}}, Strands {name, description, inputSchema{json}},
// Anthropic {input_schema}, Gemini {parameters | parameters_json_schema} and the Gemini
// wrapper {function_declarations: [...]}, Vercel {inputSchema}.
type jToolDef struct {
	Type             string          `json:"type"`
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	InputSchema      json.RawMessage `json:"inputSchema"`
	InputSchemaSnake json.RawMessage `json:"input_schema"`
	ParamsJSONSchema json.RawMessage `json:"parameters_json_schema"`
	Function         *jToolDef       `json:"function"`
	Declarations     []jToolDef      `json:"function_declarations"`
	DeclarationsJS   []jToolDef      `json:"functionDeclarations"`
}

// toolDefCache remembers parsed tool-definition lists by content: the same definitions
// are sent with every LLM call of an agent, and parsing schemas is the most expensive
// part of extraction. Bounded; cleared when full.
type toolDefCache struct {
	seed maphash.Seed
	mu   sync.Mutex
	m    map[toolDefKey]toolDefEntry
}

type toolDefEntry struct {
	// data is the definitions' raw bytes: a hit must match them, not only the hash.
	data     string
	defs     []session.ToolDefinition
	problems int
}

type toolDefKey struct {
	h     uint64
	n     int
	limit int
}

const toolDefCacheSize = 512

func newExToolDefCache() *toolDefCache {
	return &toolDefCache{seed: maphash.MakeSeed(), m: make(map[toolDefKey]toolDefEntry)}
}

// get returns a copy of the cached list for data (the ToolDefinition values are shared
// and must be treated as read-only), or ok=false. A hash collision is a miss: the entry's
// bytes must equal data.
func (c *toolDefCache) get(k toolDefKey, data []byte) ([]session.ToolDefinition, int, bool) {
	c.mu.Lock()
	ent, ok := c.m[k]
	c.mu.Unlock()
	if !ok || ent.data != string(data) {
		return nil, 0, false
	}
	if len(ent.defs) == 0 {
		return nil, ent.problems, true
	}
	return append([]session.ToolDefinition(nil), ent.defs...), ent.problems, true
}

func (c *toolDefCache) put(k toolDefKey, data []byte, defs []session.ToolDefinition, problems int) {
	c.mu.Lock()
	if len(c.m) >= toolDefCacheSize {
		clear(c.m)
	}
	c.m[k] = toolDefEntry{data: string(data), defs: append([]session.ToolDefinition(nil), defs...), problems: problems}
	c.mu.Unlock()
}

func (c *toolDefCache) key(data []byte, limit int) toolDefKey {
	return toolDefKey{h: maphash.Bytes(c.seed, data), n: len(data), limit: limit}
}

// parseToolDefs parses a tool-definition list (a JSON array, or one definition object)
// into normalised ToolDefinitions: Gemini upper-case types lower-cased and ReAsk flat
// maps converted by toolschema.Normalize. Descriptions are capped at maxText; a schema
// larger than maxText is dropped (its tool is kept, schema unknown). problems reports
// definitions that could not be read.
func parseToolDefs(data []byte, maxText int, dst []session.ToolDefinition) (defs []session.ToolDefinition, problems int) {
	var list []jToolDef
	switch firstByte(data) {
	case '[':
		// Vercel ai.prompt.tools is a list of JSON strings; accept both, and bare names.
		var raws []json.RawMessage
		if json.Unmarshal(data, &raws) != nil {
			return dst, 1
		}
		for _, r := range raws {
			if firstByte(r) == '"' {
				s, _ := rawString(r)
				if firstByte(unsafeBytes(s)) != '{' {
					// A bare name (Mastra lists its tools as ["lookup_order", ...]):
					// the tool is available, its schema unknown.
					if name := strings.TrimSpace(s); name != "" {
						list = append(list, jToolDef{Name: name})
					}
					continue
				}
				r = unsafeBytes(s)
			}
			var d jToolDef
			if err := json.Unmarshal(r, &d); err != nil && !isTypeError(err) {
				problems++
				continue
			}
			list = append(list, d)
		}
	case '{':
		var d jToolDef
		if err := json.Unmarshal(data, &d); err != nil && !isTypeError(err) {
			return dst, 1
		}
		list = append(list, d)
	default:
		return dst, 1
	}
	for i := range list {
		dst = appendToolDef(dst, &list[i], maxText, &problems)
	}
	return dst, problems
}

func appendToolDef(dst []session.ToolDefinition, d *jToolDef, maxText int, problems *int) []session.ToolDefinition {
	for _, decls := range [2][]jToolDef{d.Declarations, d.DeclarationsJS} {
		for i := range decls {
			dst = appendToolDef(dst, &decls[i], maxText, problems)
		}
	}
	if d.Function != nil {
		f := *d.Function
		if f.Name == "" {
			f.Name = d.Name
		}
		if f.Description == "" {
			f.Description = d.Description
		}
		d = &f
	}
	if d.Name == "" || len(dst) >= MaxList {
		return dst
	}
	name, _ := cleanText(d.Name, maxText)
	desc, _ := cleanText(d.Description, maxText)
	td := session.ToolDefinition{Name: name, Description: desc}
	schema := firstRaw(d.Parameters, d.InputSchema, d.InputSchemaSnake, d.ParamsJSONSchema)
	if len(schema) > 0 {
		schema = unwrapJSONSchema(schema)
		switch {
		case len(schema) > maxText:
			*problems++
		case firstByte(schema) == '{':
			norm, err := toolschema.Normalize([]byte(schema))
			if err != nil {
				*problems++
			} else {
				td.Parameters = norm
			}
		}
	}
	return append(dst, td)
}

// unwrapJSONSchema unwraps the Bedrock/Strands {"json": {...schema}} envelope and a
// schema that arrives as a JSON string.
func unwrapJSONSchema(raw json.RawMessage) json.RawMessage {
	if firstByte(raw) == '"' {
		if s, ok := rawString(raw); ok {
			raw = json.RawMessage(s)
		}
	}
	if firstByte(raw) != '{' || !bytes.Contains(raw, []byte(`"json"`)) {
		return raw
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(raw, &env) == nil && len(env) == 1 {
		if inner, ok := env["json"]; ok && firstByte(inner) == '{' {
			return inner
		}
	}
	return raw
}

// parseToolSchema reads a single tool's schema from OpenInference tool.json_schema (OpenAI
// function format or a bare schema) or tool.parameters (when it is a schema), normalised.
func parseToolSchema(data []byte) (json.RawMessage, error) {
	var d jToolDef
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.Function != nil && len(firstRaw(d.Function.Parameters, d.Function.InputSchema)) > 0 {
		return toolschema.Normalize([]byte(unwrapJSONSchema(firstRaw(d.Function.Parameters, d.Function.InputSchema))))
	}
	if s := firstRaw(d.Parameters, d.InputSchema, d.InputSchemaSnake, d.ParamsJSONSchema); len(s) > 0 && d.Name != "" {
		return toolschema.Normalize([]byte(unwrapJSONSchema(s)))
	}
	return toolschema.Normalize(data)
}

// isSchema applies the OpenInference tool.parameters rule (docs/decisions/conventions.md): a JSON
// object with "type":"object" and "properties" is a schema; anything else is arguments.
func isSchema(data []byte) bool {
	if firstByte(data) != '{' {
		return false
	}
	var probe struct {
		Type       json.RawMessage `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(data, &probe) != nil || len(probe.Properties) == 0 || firstByte(probe.Properties) != '{' {
		return false
	}
	t, _ := rawString(probe.Type)
	return strings.EqualFold(t, "object")
}

// parseNameList reads a list of names: a JSON array of strings or of objects with "name"
// (gen_ai.agent.tools, openai.agent.handoffs), or a string array attribute (already
// split by the caller).
func parseNameList(data []byte, maxText int) ([]string, bool) {
	var raws []json.RawMessage
	if json.Unmarshal(data, &raws) != nil {
		return nil, false
	}
	out := make([]string, 0, len(raws))
	for _, r := range raws {
		if len(out) >= MaxList {
			break
		}
		name, ok := rawString(r)
		if !ok {
			var o struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(r, &o) != nil {
				continue
			}
			name = o.Name
		}
		if name = strings.TrimSpace(name); name != "" {
			name, _ = cleanText(name, maxText)
			out = append(out, name)
		}
	}
	return out, true
}
