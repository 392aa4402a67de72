// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalhandoffextension // import "github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// defaultMaxResults is max_results' default: about two seconds of results at 30k agent
// spans/s (1,150 turns a second, each two turn spans, and 390 sessions), far more than
// the `batch` processor's 200 ms between the processor and the exporter.
const defaultMaxResults = 4096

// maxMaxResults bounds max_results: the handoff allocates its ring and map for that many
// entries at start (4,000,000,000 took 7.5 GB before the first span).
const maxMaxResults = 1 << 20

// Config is the agenteval_handoff extension's configuration.
type Config struct {
	// MaxResults bounds the results held (turn results and session analyses), oldest
	// dropped first. A dropped result costs only its span's signature check and decode
	// in the exporter; a held one costs its memory, a session analysis a few KB to tens
	// of KB (it holds all its turns' results, so it grows with the session). The bound
	// is a count, not bytes: at worst, with session spans that never reach the exporter,
	// MaxResults × the size of a session's analysis stays held until newer results push
	// it out. Nothing is held while no exporter is attached as the taker.
	MaxResults int `mapstructure:"max_results"`

	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks that max_results is in [1, 1048576].
func (c *Config) Validate() error {
	if c.MaxResults <= 0 {
		return fmt.Errorf("max_results must be positive, got %d", c.MaxResults)
	}
	if c.MaxResults > maxMaxResults {
		return fmt.Errorf("max_results must be at most %d (allocated at start), got %d", maxMaxResults, c.MaxResults)
	}
	return nil
}
