// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/webui"
)

// defaultMaxEventClients is the default of ui.max_event_clients.
const defaultMaxEventClients = webui.DefaultMaxSubscribers

// UIConfig is the web UI served at / on the query API server (same endpoint, same
// authenticator as the API; docs in README.md "Web UI").
type UIConfig struct {
	// Enabled serves the pages and the live event stream (GET /api/v1/events). Default
	// true.
	Enabled bool `mapstructure:"enabled"`
	// TraceURLTemplate links each turn to its trace in your trace backend: an absolute
	// http(s) URL with {trace_id} and optionally {span_id} (the turn's root span) and
	// {session_id}, e.g. "http://localhost:16686/trace/{trace_id}" (Jaeger). Empty: no
	// links. Default empty.
	TraceURLTemplate string `mapstructure:"trace_url_template"`
	// MaxEventClients bounds the open live event streams; more get 503. Default 32.
	MaxEventClients int `mapstructure:"max_event_clients"`
	// EventQueueSize is the events queued for each live event stream, so that a burst
	// (a long session's batch: two turn events per turn and a session event) reaches
	// every client. A client this far behind loses turn events, not its stream, and is
	// told how many (a "gap" event); the export path never waits for a browser. Memory
	// is taken only for queued events. Default 4096.
	EventQueueSize int `mapstructure:"event_queue_size"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func defaultUIConfig() UIConfig {
	return UIConfig{Enabled: true, MaxEventClients: defaultMaxEventClients, EventQueueSize: webui.DefaultQueueSize}
}

// validate returns the errors of the ui section, each naming its key.
func (c *UIConfig) validate() []error {
	var errs []error
	if _, err := webui.ParseTraceURLTemplate(c.TraceURLTemplate); err != nil {
		errs = append(errs, fmt.Errorf("ui.trace_url_template: %w", err))
	}
	if c.MaxEventClients < 1 {
		errs = append(errs, fmt.Errorf("ui.max_event_clients: must be >= 1, got %d", c.MaxEventClients))
	}
	if c.EventQueueSize < 1 {
		errs = append(errs, fmt.Errorf("ui.event_queue_size: must be >= 1, got %d", c.EventQueueSize))
	}
	return errs
}

// apiHandler is the query API server's handler over st: the JSON API and, when
// ui.enabled, the web UI and its live event stream, which it creates (e.events) for
// pushTraces to publish to. The server's error handler is apiServerError (api.go, set
// by start).
func (e *agentEvalExporter) apiHandler(st store.Store) (http.Handler, error) {
	mux := newQueryAPI(st, e.logger)
	if !e.cfg.UI.Enabled {
		// Only the JSON API: any other path is a JSON 404 too.
		mux.Handle("/", unmatched(mux, "/"))
		return mux, nil
	}
	tmpl, err := webui.ParseTraceURLTemplate(e.cfg.UI.TraceURLTemplate)
	if err != nil { // Validate has already checked it
		return nil, fmt.Errorf("agenteval: ui.trace_url_template: %w", err)
	}
	events := webui.NewBroadcaster(e.cfg.UI.MaxEventClients, e.cfg.UI.EventQueueSize)
	opts := webui.Options{Store: st, TraceURL: tmpl, Events: events, Logger: e.logger}
	// The proctored evaluation channel's messages (written by the agentsession receiver
	// when its channel.store is this database) appear under a session's transcript.
	if cs, ok := store.ChannelOf(st); ok {
		opts.Channel = channelTranscripts{cs: cs}
	}
	ui, err := webui.New(opts)
	if err != nil {
		return nil, fmt.Errorf("agenteval: web UI: %w", err)
	}
	ui.Register(mux)
	e.events = events
	return mux, nil
}

// maxTranscriptMessages and maxTranscriptBytes bound the channel messages one session
// page shows: the first 1000, within the receiver's page budget of content bytes (a
// message can be 64 KiB, so 1000 of them could be 64 MiB in one page).
const (
	maxTranscriptMessages = 1000
	maxTranscriptBytes    = channel.DefaultMaxPageBytes
)

// channelTranscripts reads a session's channel messages from the result store. A session
// that is not a channel session has none.
type channelTranscripts struct{ cs *store.ChannelStore }

func (c channelTranscripts) ChannelMessages(ctx context.Context, sessionID string) ([]webui.ChannelMessage, bool, error) {
	msgs, more, err := c.cs.Messages(ctx, sessionID, 0, maxTranscriptMessages, maxTranscriptBytes)
	if err != nil || len(msgs) == 0 {
		return nil, false, err
	}
	out := make([]webui.ChannelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = webui.ChannelMessage{
			Sequence: m.Sequence, SenderAgentID: m.SenderAgentID, Role: string(m.Role),
			Content: m.Content, CreatedAt: m.CreatedAt,
		}
	}
	return out, more, nil
}
