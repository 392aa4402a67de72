// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package handoff // import "github.com/agenteval/agenteval-collector/internal/handoff"

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// FromHost returns the Handoff of the extension id names among host's extensions (the
// `handoff` setting of the agentsession processor and of the agenteval exporter), or
// nil for a nil id (the handoff is off). Errors name the setting and the id: the
// extension is not in service::extensions, or it is not a Provider.
func FromHost(host component.Host, id *component.ID) (*Handoff, error) {
	if id == nil {
		return nil, nil
	}
	ext, ok := host.GetExtensions()[*id]
	if !ok {
		return nil, fmt.Errorf("handoff: extension %q is not configured in service::extensions", id.String())
	}
	p, ok := ext.(Provider)
	if !ok {
		return nil, fmt.Errorf("handoff: extension %q is not an agenteval handoff (agenteval_handoff)", id.String())
	}
	h := p.Handoff()
	if h == nil {
		return nil, fmt.Errorf("handoff: extension %q has no handoff (not started?)", id.String())
	}
	return h, nil
}
