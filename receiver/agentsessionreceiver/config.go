// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
)

// Config is the receiver's configuration.
//
//	receivers:
//	  agentsession:
//	    endpoint: localhost:8891          # confighttp.ServerConfig (tls, auth, cors... too)
//	    max_request_body_size: 10485760   # bytes; larger bodies get 413
//	    end_session: true
//	    service_name: agentsession
type Config struct {
	// ServerConfig is the HTTP server: endpoint (default localhost:8891, loopback only),
	// TLS, auth extensions, CORS, compression, and max_request_body_size (default 10 MiB:
	// a larger body, before or after decompression, is answered 413).
	confighttp.ServerConfig `mapstructure:",squash"`

	// EndSession marks the last turn of every posted session with
	// agent_eval.session.end=true, so the agentsession processor closes and evaluates the
	// session as soon as that turn settles instead of after session_timeout. Turn it off to
	// post one session in several requests (same session_id). Default true.
	EndSession bool `mapstructure:"end_session"`

	// ServiceName is the resource service.name of the spans made from posted sessions.
	// Default "agentsession".
	ServiceName string `mapstructure:"service_name"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ confmap.Validator = (*Config)(nil)

// Validate checks the receiver-specific settings (confighttp validates its own).
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: must not be empty (e.g. localhost:8891)"))
	}
	if cfg.MaxRequestBodySize < 0 {
		errs = append(errs, fmt.Errorf("max_request_body_size: must be >= 0 bytes (0 = confighttp's 20 MiB), got %d", cfg.MaxRequestBodySize))
	}
	if cfg.ServiceName == "" {
		errs = append(errs, errors.New("service_name: must not be empty"))
	}
	return errors.Join(errs...)
}
