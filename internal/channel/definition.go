// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Definition is an evaluation the channel serves: from the receiver's configuration or
// from a SIP (SafeMolt Improvement Proposal) markdown file whose YAML front matter holds
// these keys.
type Definition struct {
	// ID is the evaluation id in the URLs (/api/v1/evaluations/{id}/...): letters,
	// digits, '.', '_' and '-', at most 128 bytes.
	ID string `json:"id" yaml:"id" mapstructure:"id"`
	// Name is a human-readable name (defaults to ID).
	Name string `json:"name" yaml:"name" mapstructure:"name"`
	// Type is "proctored" or "live_class_work" (the SIP `type`; other SIP types are
	// single-agent evaluations this channel does not host).
	Type Kind `json:"type" yaml:"type" mapstructure:"type"`
	// Description is free text; for a SIP file, the markdown body after the front matter.
	Description string `json:"description,omitempty" yaml:"description" mapstructure:"description"`
	// SIP is the proposal number of a SIP file (0 otherwise).
	SIP int `json:"sip,omitempty" yaml:"sip" mapstructure:"-"`
	// Module, Status and Version are copied from a SIP file's front matter.
	Module  string `json:"module,omitempty" yaml:"module" mapstructure:"-"`
	Status  string `json:"status,omitempty" yaml:"status" mapstructure:"-"`
	Version string `json:"version,omitempty" yaml:"version" mapstructure:"-"`
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// Validate checks the id and the type; field names are the YAML keys.
func (d *Definition) Validate() error {
	var errs []error
	if !idPattern.MatchString(d.ID) {
		errs = append(errs, fmt.Errorf("id: %q must be 1-128 letters, digits, '.', '_' or '-'", d.ID))
	}
	if d.Type != KindProctored && d.Type != KindLiveClassWork {
		errs = append(errs, fmt.Errorf("type: %q is not served by the channel (want %q or %q)", d.Type, KindProctored, KindLiveClassWork))
	}
	return errors.Join(errs...)
}

// ParseSIP reads a SIP markdown file: YAML front matter between two "---" lines, then the
// markdown body, which becomes the Description. Errors name the missing or invalid key.
func ParseSIP(data []byte) (Definition, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return Definition{}, errors.New("no YAML front matter (the file must start with a --- line)")
	}
	front, body, ok := strings.Cut(text[len("---\n"):], "\n---")
	if !ok {
		return Definition{}, errors.New("YAML front matter is not closed by a --- line")
	}
	var d Definition
	if err := yaml.Unmarshal([]byte(front), &d); err != nil {
		return Definition{}, fmt.Errorf("YAML front matter: %w", err)
	}
	if _, rest, ok := strings.Cut(body, "\n"); ok {
		d.Description = strings.TrimSpace(rest)
	} else {
		d.Description = ""
	}
	d.Name = cmp.Or(d.Name, d.ID)
	if err := d.Validate(); err != nil {
		return Definition{}, err
	}
	return d, nil
}

// LoadDefinitions merges the configured definitions with the SIP files matched by the
// glob patterns (sorted by path); a duplicate id is an error naming both sources.
func LoadDefinitions(configured []Definition, patterns []string) ([]Definition, error) {
	out := make([]Definition, 0, len(configured))
	seen := map[string]string{}
	add := func(d Definition, src string) error {
		if prev, dup := seen[d.ID]; dup {
			return fmt.Errorf("%s: evaluation id %q already defined by %s", src, d.ID, prev)
		}
		seen[d.ID] = src
		out = append(out, d)
		return nil
	}
	for i, d := range configured {
		d.Name = cmp.Or(d.Name, d.ID)
		src := fmt.Sprintf("evaluations[%d]", i)
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		if err := add(d, src); err != nil {
			return nil, err
		}
	}
	for _, p := range patterns {
		paths, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("evaluation_files: %q: %w", p, err)
		}
		slices.Sort(paths)
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("evaluation_files: %w", err)
			}
			d, err := ParseSIP(data)
			if err != nil {
				return nil, fmt.Errorf("evaluation_files: %s: %w", path, err)
			}
			if err := add(d, path); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
