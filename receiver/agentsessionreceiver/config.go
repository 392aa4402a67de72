// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// Config is the receiver's configuration.
//
//	receivers:
//	  agentsession:
//	    endpoint: localhost:8891          # confighttp.ServerConfig (tls, auth, cors... too)
//	    max_request_body_size: 10485760   # bytes; larger bodies get 413
//	    end_session: true
//	    service_name: agentsession
//	    channel:                          # optional: the evaluation channel (README.md)
//	      evaluations: [{id: sip-5, type: proctored}]
//	      evaluation_files: [./evaluations/SIP-*.md]
//	      store: {driver: sqlite, dsn: ./data/agenteval.db}
//	      admin: {endpoint: localhost:8892, auth: {authenticator: basicauth/admin}}
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

	// Channel is the hosted multi-agent evaluation channel under /api/v1/evaluations/
	// on the same endpoint (README.md "Evaluation channel"). Off unless the section is
	// present.
	Channel configoptional.Optional[ChannelConfig] `mapstructure:"channel"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ChannelConfig configures the evaluation channel.
type ChannelConfig struct {
	// Evaluations are evaluation definitions: {id, name, type: proctored |
	// live_class_work, description}.
	Evaluations []channel.Definition `mapstructure:"evaluations"`
	// EvaluationFiles are glob patterns of SIP markdown files (YAML front matter with
	// id, name, type... then the description), read at start.
	EvaluationFiles []string `mapstructure:"evaluation_files"`
	// Store is where registrations, sessions, messages, results and agents' API keys
	// live: the same shape (and usually the same database) as the agenteval exporter's
	// store. Default SQLite at ./data/agenteval.db.
	Store StoreConfig `mapstructure:"store"`
	// Admin is the server of the admin endpoint (POST /api/v1/admin/agents issues API
	// keys): its own confighttp server, default localhost:8892. Its auth setting (a
	// collector authenticator extension) is required unless it listens on loopback only.
	Admin confighttp.ServerConfig `mapstructure:"admin"`
	// MaxMessageBytes bounds one message's content (and a proctor's feedback); larger
	// content is answered 413. Default 65536.
	MaxMessageBytes int `mapstructure:"max_message_bytes"`
	// MaxSessionMessages bounds the messages of one session; a post to a session that
	// holds this many is answered 409. Default 10000.
	MaxSessionMessages int `mapstructure:"max_session_messages"`
	// MaxPageBytes bounds the bytes of message content in one page of GET .../messages
	// and of a transcript, on top of the page's limit (count): a page ends before the
	// message that would pass it, except that a single larger message is a page alone.
	// Default 4194304 (4 MiB).
	MaxPageBytes int `mapstructure:"max_page_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// StoreConfig selects the channel's database (internal/store.Open's driver and DSN).
type StoreConfig struct {
	// Driver is "sqlite" or "postgres". Default "sqlite".
	Driver string `mapstructure:"driver"`
	// DSN is the SQLite file path or the PostgreSQL connection string (opaque: it may
	// hold a password). Default "./data/agenteval.db".
	DSN configopaque.String `mapstructure:"dsn"`

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
	if ch := cfg.Channel.Get(); ch != nil {
		errs = append(errs, ch.validate(cfg.NetAddr.Endpoint))
	}
	return errors.Join(errs...)
}

// validate checks the channel settings, loading the SIP files to report their errors.
func (ch *ChannelConfig) validate(mainEndpoint string) error {
	var errs []error
	defs, err := channel.LoadDefinitions(ch.Evaluations, ch.EvaluationFiles)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("channel.%w", err))
	case len(defs) == 0 && len(ch.EvaluationFiles) > 0:
		// Patterns that match nothing are most often relative paths read from another
		// working directory than the one they were written for.
		wd, _ := os.Getwd()
		errs = append(errs, fmt.Errorf("channel.evaluation_files: no file matches %q (relative paths are read from the working directory %q); "+
			"define at least one evaluation there or in channel.evaluations", ch.EvaluationFiles, wd))
	case len(defs) == 0:
		errs = append(errs, errors.New("channel.evaluations: define at least one evaluation (or channel.evaluation_files)"))
	}
	if !store.ValidDriver(ch.Store.Driver) {
		errs = append(errs, fmt.Errorf("channel.store.driver: invalid value %q, valid values are %q", ch.Store.Driver, store.Drivers()))
	}
	if ch.Store.DSN == "" {
		errs = append(errs, errors.New("channel.store.dsn: must not be empty"))
	} else if err := store.ValidateDSN(ch.Store.Driver, string(ch.Store.DSN)); err != nil {
		errs = append(errs, fmt.Errorf("channel.store.dsn: %w", err))
	}
	admin := ch.Admin.NetAddr.Endpoint
	switch {
	case admin == "":
		errs = append(errs, errors.New("channel.admin.endpoint: must not be empty (e.g. localhost:8892)"))
	case !hasPort(admin):
		errs = append(errs, fmt.Errorf("channel.admin.endpoint: %q has no port: want host:port (e.g. localhost:8892)", admin))
	case admin == mainEndpoint && !strings.HasSuffix(admin, ":0"):
		errs = append(errs, fmt.Errorf("channel.admin.endpoint: %q is the receiver's endpoint; the admin endpoint needs its own", admin))
	case !ch.Admin.Auth.HasValue() && !loopbackOnly(admin):
		errs = append(errs, fmt.Errorf("channel.admin.auth: required when the admin endpoint %q is not loopback-only: it issues API keys", admin))
	}
	if ch.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("channel.max_message_bytes: must be >= 0 (0 = %d), got %d", channel.DefaultMaxContentBytes, ch.MaxMessageBytes))
	}
	if ch.MaxSessionMessages < 0 {
		errs = append(errs, fmt.Errorf("channel.max_session_messages: must be >= 0 (0 = %d), got %d", channel.DefaultMaxSessionMessages, ch.MaxSessionMessages))
	}
	if ch.MaxPageBytes < 0 {
		errs = append(errs, fmt.Errorf("channel.max_page_bytes: must be >= 0 (0 = %d), got %d", channel.DefaultMaxPageBytes, ch.MaxPageBytes))
	}
	return errors.Join(errs...)
}

// hasPort reports whether endpoint is host:port, as the listener needs.
func hasPort(endpoint string) bool {
	_, _, err := net.SplitHostPort(endpoint)
	return err == nil
}

// loopbackOnly reports whether endpoint (host:port) listens on loopback only.
func loopbackOnly(endpoint string) bool {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
