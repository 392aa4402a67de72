// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalhandoffextension // import "github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension/internal/metadata"
)

// NewFactory returns the factory of the agenteval_handoff extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{MaxResults: defaultMaxResults}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newHandoffExtension(set, cfg.(*Config))
}
