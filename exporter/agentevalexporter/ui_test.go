// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/webui"
)

// httpGet GETs url with an optional bearer token and returns the status and body.
func httpGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, http.NoBody)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestUIServedOnTheAPIServer: the pages of the stored analyses are on the API endpoint,
// next to the JSON API, and link to it.
func TestUIServedOnTheAPIServer(t *testing.T) {
	cfg := testConfig()
	cfg.UI.TraceURLTemplate = "http://tempo.example/trace/{trace_id}"
	x := newTestExporter(t, cfg, nil)
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(true)).turn(turn1(true)).session(analysisCheckout()).traces()))

	code, page := httpGet(t, x.apiURL("/"), "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, `href="/sessions/sess-checkout"`)
	code, page = httpGet(t, x.apiURL("/sessions/sess-checkout"), "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, `href="/api/v1/agent_sessions/sess-checkout"`)
	assert.Contains(t, page, `href="http://tempo.example/trace/`+traceTurn0.String()+`"`)
	code, _ = httpGet(t, x.apiURL("/api/v1/agent_sessions/sess-checkout"), "")
	assert.Equal(t, http.StatusOK, code, "the JSON link resolves")
	code, _ = httpGet(t, x.apiURL("/agents/executor"), "")
	assert.Equal(t, http.StatusOK, code)
	code, _ = httpGet(t, x.apiURL("/static/live.js"), "")
	assert.Equal(t, http.StatusOK, code)
}

func TestUIDisabled(t *testing.T) {
	cfg := testConfig()
	cfg.UI.Enabled = false
	x := newTestExporter(t, cfg, nil)
	for _, path := range []string{"/", "/sessions/x", "/live", "/api/v1/events", "/static/style.css"} {
		code, _ := httpGet(t, x.apiURL(path), "")
		assert.Equal(t, http.StatusNotFound, code, path)
	}
	code, _ := httpGet(t, x.apiURL("/api/v1/agent_sessions"), "")
	assert.Equal(t, http.StatusOK, code, "the JSON API stays")
	// Publishing without a broadcaster is a no-op.
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(false)).session(analysisCheckout()).traces()))
}

// httpDo sends method to url and returns the status, the headers and the body.
func httpDo(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, http.NoBody)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(body)
}

// TestAPIErrorsAreJSONNextToTheUI: on the running server, with the UI or without, a
// request under /api/ that no route serves gets a JSON error (404, or 405 with Allow),
// the event stream's path included; the UI's pages keep their own answers. Without
// the UI the server is the JSON API only, so every unknown path is a JSON 404.
func TestAPIErrorsAreJSONNextToTheUI(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(map[bool]string{true: "ui", false: "no ui"}[enabled], func(t *testing.T) {
			cfg := testConfig()
			cfg.UI.Enabled = enabled
			x := newTestExporter(t, cfg, nil)
			type answer struct {
				status int
				allow  string
			}
			want := map[string]answer{
				"POST /api/v1/agent_sessions":             {http.StatusMethodNotAllowed, "GET, HEAD"},
				"OPTIONS /api/v1/agent_sessions":          {http.StatusMethodNotAllowed, "GET, HEAD"},
				"GET /api/v1/agent_sessions/nope/":        {http.StatusNotFound, ""},
				"GET /api/v1/nothing":                     {http.StatusNotFound, ""},
				"POST /api/v1/agent_sessions/x/something": {http.StatusNotFound, ""},
				"POST /api/v1/events":                     {http.StatusMethodNotAllowed, "GET, HEAD"},
			}
			if !enabled {
				want["POST /api/v1/events"] = answer{http.StatusNotFound, ""}
				want["GET /"] = answer{http.StatusNotFound, ""}
				want["GET /sessions/x"] = answer{http.StatusNotFound, ""}
			}
			for req, w := range want {
				method, path, _ := strings.Cut(req, " ")
				status, h, body := httpDo(t, method, x.apiURL(path))
				assert.Equal(t, w.status, status, req)
				assert.Equal(t, w.allow, h.Get("Allow"), req)
				assert.Equal(t, "application/json", h.Get("Content-Type"), req)
				var e map[string]string
				if assert.NoError(t, json.Unmarshal([]byte(body), &e), "%s: %s", req, body) {
					assert.NotEmpty(t, e["error"], req)
				}
			}
			if enabled {
				status, h, _ := httpDo(t, http.MethodGet, x.apiURL("/sessions/nope"))
				assert.Equal(t, http.StatusNotFound, status, "the UI's own error page")
				assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
			}
		})
	}
}

// TestUIBehindTheAuthenticator: the pages and the event stream take the API's
// authenticator.
func TestUIBehindTheAuthenticator(t *testing.T) {
	authID := component.MustNewIDWithName("bearertokenauth", "api")
	cfg := testConfig()
	cfg.API.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	x := newTestExporterWithExtensions(t, cfg, nil, map[component.ID]component.Component{authID: headerAuth{}})
	for _, path := range []string{"/", "/live", "/agents/a", "/static/style.css", "/api/v1/events"} {
		code, _ := httpGet(t, x.apiURL(path), "")
		assert.Equal(t, http.StatusUnauthorized, code, path)
	}
	code, _ := httpGet(t, x.apiURL("/"), "s3cret")
	assert.Equal(t, http.StatusOK, code)

	// A 401 challenges the browser to ask for credentials.
	resp, err := http.Get(x.apiURL("/"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Basic realm="agenteval", charset="UTF-8"`, resp.Header.Get("WWW-Authenticate"))
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	typ  string
	data string
}

// readEvents parses the stream into ch until it ends.
func readEvents(body io.Reader, ch chan<- sseEvent) {
	defer close(ch)
	sc := bufio.NewScanner(body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		case line == "" && ev.typ != "":
			ch <- ev
			ev = sseEvent{}
		}
	}
}

func nextEvent(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return sseEvent{}
	}
}

// TestEventStream: a client of GET /api/v1/events receives each turn as the exporter
// reads it and each session once it is stored; shutting the exporter down ends the
// stream (the goleak check of TestMain covers the handler).
func TestEventStream(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	resp, err := http.Get(x.apiURL(webui.PathEvents))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan sseEvent, 16)
	go readEvents(resp.Body, events)
	require.Eventually(t, func() bool { return x.exp.events.Subscribers() == 1 }, 5*time.Second, 10*time.Millisecond)

	require.NoError(t, x.consume(newSpanBuilder(t).appSpan().turn(turn0(false)).traces()))
	ev := nextEvent(t, events)
	require.Equal(t, webui.EventTurn, ev.typ)
	var turn webui.TurnEvent
	require.NoError(t, json.Unmarshal([]byte(ev.data), &turn))
	assert.Equal(t, webui.TurnEvent{SessionID: "sess-checkout", TurnIndex: 0, DetectionType: turn0(false).DetectionType,
		Confidence: turn0(false).Confidence, Reason: turn0(false).Reason, LatencyMs: 2400}, turn)

	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisCheckout()).traces()))
	ev = nextEvent(t, events)
	require.Equal(t, webui.EventSession, ev.typ)
	var sess webui.SessionEvent
	require.NoError(t, json.Unmarshal([]byte(ev.data), &sess))
	a := analysisCheckout()
	assert.Equal(t, "sess-checkout", sess.SessionID)
	assert.Equal(t, a.OverallScore, sess.OverallScore)
	assert.Equal(t, a.Agents(), sess.Agents)
	assert.Equal(t, len(a.TurnResults), sess.Turns)

	// Shutdown ends the open stream instead of waiting for it: a stream still open at
	// the deadline would make the server's Shutdown, hence this one, fail.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, x.te.Shutdown(ctx))
	for range events { //nolint:revive // drain until the stream ends
	}
}

// TestEventStreamClientLimit: past ui.max_event_clients, a stream gets 503.
func TestEventStreamClientLimit(t *testing.T) {
	cfg := testConfig()
	cfg.UI.MaxEventClients = 1
	x := newTestExporter(t, cfg, nil)
	resp, err := http.Get(x.apiURL(webui.PathEvents))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return x.exp.events.Subscribers() == 1 }, 5*time.Second, 10*time.Millisecond)
	code, body := httpGet(t, x.apiURL(webui.PathEvents), "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "too many live event streams")
}

// liveClassSession stores the checkout analysis through x and opens a live class work
// session of the same id in its result store's channel (hosted by teacher, with
// participants), returning the channel store and the session's start.
func liveClassSession(t *testing.T, x *testExporter, participants ...channel.Participant) (*store.ChannelStore, time.Time) {
	t.Helper()
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(true)).session(analysisCheckout()).traces()))
	cs, ok := store.ChannelOf(x.exp.store)
	require.True(t, ok)
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	for i := range participants {
		participants[i].JoinedAt = at
	}
	require.NoError(t, cs.CreateSession(context.Background(), channel.Session{ID: "sess-checkout", EvaluationID: "class-1",
		Kind: channel.KindLiveClassWork, Status: channel.SessionActive, StartedAt: at,
		Participants: append([]channel.Participant{{ID: "p1", AgentID: "teacher", Role: channel.RoleHost, JoinedAt: at}}, participants...)}))
	return cs, at
}

// TestUIShowsChannelMessages: a channel session's messages (here live class work, which
// needs no registration), written to the same result store by the agentsession receiver,
// appear on its session page.
func TestUIShowsChannelMessages(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	cs, at := liveClassSession(t, x, channel.Participant{ID: "p2", AgentID: "research-bot", Role: channel.RoleParticipant})
	ctx := context.Background()
	for i, m := range []channel.Message{
		{ID: "m1", SenderAgentID: "teacher", Role: channel.RoleHost, Content: "Summarise the refund policy."},
		{ID: "m2", SenderAgentID: "research-bot", Role: channel.RoleParticipant, Content: "Refunds within 30 days of delivery."},
	} {
		m.SessionID, m.CreatedAt = "sess-checkout", at.Add(time.Duration(i)*time.Second)
		_, err := cs.AddMessage(ctx, m)
		require.NoError(t, err)
	}
	code, page := httpGet(t, x.apiURL("/sessions/sess-checkout"), "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, "Summarise the refund policy.")
	assert.Contains(t, page, "Refunds within 30 days of delivery.")
	assert.Contains(t, page, "research-bot")
}

// TestUIChannelMessagesBoundedByBytes: a session page shows the channel's first messages
// within the receiver's page budget of content bytes and says that more follow. Before,
// it read up to 1000 messages whatever their size: 64 MiB in one page at the receiver's
// 64 KiB a message.
func TestUIChannelMessagesBoundedByBytes(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	cs, at := liveClassSession(t, x)
	ctx := context.Background()
	const size = 1 << 20 // 1 MiB a message: the 4 MiB budget holds four
	post := func(i int) {
		marker := fmt.Sprintf("message-%d-", i)
		m := channel.Message{ID: fmt.Sprintf("m%d", i), SessionID: "sess-checkout", SenderAgentID: "teacher",
			Role: channel.RoleHost, Content: marker + strings.Repeat("x", size-len(marker)), CreatedAt: at.Add(time.Duration(i) * time.Second)}
		_, err := cs.AddMessage(ctx, m)
		require.NoError(t, err)
	}
	for i := range 4 {
		post(i)
	}
	code, page := httpGet(t, x.apiURL("/sessions/sess-checkout"), "")
	require.Equal(t, http.StatusOK, code)
	for i := range 4 {
		assert.Contains(t, page, fmt.Sprintf("message-%d-", i))
	}
	assert.NotContains(t, page, "Only the first", "four messages fill the budget exactly and none follows")
	post(4)
	post(5)
	code, page = httpGet(t, x.apiURL("/sessions/sess-checkout"), "")
	require.Equal(t, http.StatusOK, code)
	for i := range 4 {
		assert.Contains(t, page, fmt.Sprintf("message-%d-", i))
	}
	assert.NotContains(t, page, "message-4-", "the fifth MiB is over the page budget")
	assert.Less(t, len(page), 5<<20)
	assert.Contains(t, page, "Only the first 4 messages are shown")
	assert.Contains(t, page, "/sessions/sess-checkout/messages</code>", "a live class work session has no transcript: the page names its messages")
}

// TestLiveStreamOutlivesAPIWriteTimeout: on the exporter's confighttp server (its
// middlewares included), the live stream stays open past api.write_timeout (30 s by
// default): a session stored after it still reaches the stream.
func TestLiveStreamOutlivesAPIWriteTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.API.WriteTimeout = 300 * time.Millisecond
	x := newTestExporter(t, cfg, nil)
	resp, err := http.Get(x.apiURL("/api/v1/events"))
	require.NoError(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "retry: 3000\n", line)
	time.Sleep(3 * cfg.API.WriteTimeout)
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(false)).session(analysisCheckout()).traces()))
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "the stream must outlive api.write_timeout")
		if line == "event: session\n" {
			return
		}
	}
}
