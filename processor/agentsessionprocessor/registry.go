// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// registryFromConfig converts the configured agents into session definitions with
// ToolsSource "config". key names the list in error messages: "agents" (the config key)
// or "agents_file" (buildRegistry adds the file's path).
func registryFromConfig(agents []AgentConfig, key string) ([]session.AgentDefinition, error) {
	out := make([]session.AgentDefinition, 0, len(agents))
	seen := make(map[string]bool, len(agents))
	for i, a := range agents {
		if a.Name == "" {
			return nil, fmt.Errorf("%s[%d].name: must not be empty", key, i)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("%s[%d].name: agent %q is declared twice", key, i, a.Name)
		}
		seen[a.Name] = true
		def := session.AgentDefinition{
			ID: a.Name, Name: a.Name, Role: a.Role, Description: a.Description,
			ToolsSource: session.ToolsSourceConfig, HandoffTargets: a.HandoffTargets,
			Tools: make([]session.ToolDefinition, 0, len(a.Tools)),
		}
		tools := make(map[string]bool, len(a.Tools))
		for j, t := range a.Tools {
			if t.Name == "" {
				return nil, fmt.Errorf("%s[%d].tools[%d].name: must not be empty", key, i, j)
			}
			if tools[t.Name] {
				return nil, fmt.Errorf("%s[%d].tools[%d].name: tool %q is declared twice for agent %q", key, i, j, t.Name, a.Name)
			}
			tools[t.Name] = true
			var params map[string]any
			if t.Parameters != nil {
				params = t.Parameters
			}
			schema, err := toolschema.Normalize(params)
			if err == nil && schema != nil {
				err = toolschema.Check(schema)
			}
			if err != nil {
				return nil, fmt.Errorf("%s[%d].tools[%d].parameters: %w", key, i, j, err)
			}
			def.Tools = append(def.Tools, session.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: schema})
		}
		out = append(out, def)
	}
	return out, nil
}

// loadAgentsFile reads an agents_file: a YAML or JSON list of agents, the same shape as
// the agents config key.
func loadAgentsFile(path string) ([]AgentConfig, error) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("agents_file: %w", err)
	}
	var raw []map[string]any
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		err = json.Unmarshal(b, &raw)
	} else {
		err = yaml.Unmarshal(b, &raw)
	}
	if err != nil {
		return nil, fmt.Errorf("agents_file %s: not a list of agents: %w", path, err)
	}
	// Round-trip through JSON so YAML and JSON files decode the same way.
	jb, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("agents_file %s: %w", path, err)
	}
	var files []struct {
		Name           string   `json:"name"`
		Role           string   `json:"role"`
		Description    string   `json:"description"`
		HandoffTargets []string `json:"handoff_targets"`
		Tools          []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(jb, &files); err != nil {
		return nil, fmt.Errorf("agents_file %s: %w", path, err)
	}
	out := make([]AgentConfig, 0, len(files))
	for _, f := range files {
		a := AgentConfig{Name: f.Name, Role: f.Role, Description: f.Description, HandoffTargets: f.HandoffTargets}
		for _, t := range f.Tools {
			a.Tools = append(a.Tools, ToolConfig{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		out = append(out, a)
	}
	return out, nil
}

// buildRegistry merges the agents key and the agents_file into one registry. Errors
// name the entry where it is: agents[i]... for the key, agents_file[i]... (with the
// file's path) for the file; an agent in both is an error on the file's entry.
func buildRegistry(cfg *Config) ([]session.AgentDefinition, error) {
	defs, err := registryFromConfig(cfg.Agents, "agents")
	if err != nil || cfg.AgentsFile == "" {
		return defs, err
	}
	fromFile, err := loadAgentsFile(cfg.AgentsFile)
	if err != nil {
		return nil, err
	}
	fileDefs, err := registryFromConfig(fromFile, "agents_file")
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, cfg.AgentsFile)
	}
	inline := make(map[string]bool, len(defs))
	for _, d := range defs {
		inline[d.ID] = true
	}
	for i, d := range fileDefs {
		if inline[d.ID] {
			return nil, fmt.Errorf("agents_file[%d].name: agent %q is declared in agents too (in %s)", i, d.ID, cfg.AgentsFile)
		}
	}
	return append(defs, fileDefs...), nil
}
