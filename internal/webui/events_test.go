// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

func TestBroadcasterFansOut(t *testing.T) {
	b := NewBroadcaster(2, 0)
	s1, err := b.Subscribe()
	require.NoError(t, err)
	s2, err := b.Subscribe()
	require.NoError(t, err)
	_, err = b.Subscribe()
	require.ErrorIs(t, err, ErrTooManySubscribers)

	b.Publish(Event{Type: EventTurn, Data: []byte(`{}`)})
	assert.Equal(t, []Event{{Type: EventTurn, Data: []byte(`{}`)}}, take(t, s1, false))
	assert.Equal(t, []Event{{Type: EventTurn, Data: []byte(`{}`)}}, take(t, s2, false))

	b.Unsubscribe(s1)
	b.Unsubscribe(s1) // idempotent
	assert.Empty(t, take(t, s1, true), "unsubscribed stream is ended")
	assert.Equal(t, 1, b.Subscribers())

	b.Close()
	assert.Empty(t, take(t, s2, true), "Close ends every stream")
	_, err = b.Subscribe()
	require.ErrorIs(t, err, ErrBroadcasterClosed)
	b.Publish(Event{Type: EventTurn}) // no-op after Close
}

// take waits for s to be ready and returns what it queued, expecting no missed event and
// ended as given.
func take(t *testing.T, s *Subscription, ended bool) []Event {
	t.Helper()
	select {
	case <-s.Ready:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not ready")
	}
	evs, missed, gotEnded := s.Take()
	assert.Zero(t, missed)
	assert.Equal(t, ended, gotEnded)
	return evs
}

// TestBroadcasterQueueFull: a stream whose queue is full keeps its queued events and
// its place, drops new turn events, makes room for a session event by dropping the
// oldest queued turn event, and counts every drop; Publish never blocks and a stream
// that keeps up loses nothing.
func TestBroadcasterQueueFull(t *testing.T) {
	b := NewBroadcaster(0, 4)
	slow, err := b.Subscribe()
	require.NoError(t, err)
	fast, err := b.Subscribe()
	require.NoError(t, err)
	turn := func(i int) Event { return Event{Type: EventTurn, Data: []byte{byte('0' + i)}} }
	session := func(id string) Event { return Event{Type: EventSession, Data: []byte(id)} }
	published := []Event{turn(0), turn(1), turn(2), session("a"), turn(3), turn(4), session("b"), turn(5)}
	var got []Event
	for _, ev := range published {
		b.Publish(ev)
		got = append(got, take(t, fast, false)...)
	}
	assert.Equal(t, published, got, "the stream that keeps up lost nothing")

	evs, missed, ended := slow.Take()
	assert.Equal(t, []Event{turn(1), turn(2), session("a"), session("b")}, evs,
		"the full queue kept its events, a session event replaced the oldest turn event")
	assert.Equal(t, 4, missed, "turns 3, 4 and 5 dropped, turn 0 replaced")
	assert.False(t, ended, "the slow stream stays open")
	assert.Equal(t, 2, b.Subscribers())

	b.Publish(turn(6))
	evs, missed, _ = slow.Take()
	assert.Equal(t, []Event{turn(6)}, evs, "after Take the queue has room again")
	assert.Zero(t, missed, "the count restarts after Take")
}

func TestNilBroadcasterIsANoOp(t *testing.T) {
	var b *Broadcaster
	b.Publish(Event{})
	b.PublishTurn(&evaluation.TurnResult{})
	b.PublishSession(&evaluation.Analysis{})
	b.Close()
}

func TestPublishWithoutSubscribersBuildsNothing(t *testing.T) {
	b := NewBroadcaster(1, 0)
	tr := &evaluation.TurnResult{SessionID: "s", UserMessage: strings.Repeat("x", 1000)}
	a := &evaluation.Analysis{SessionID: "s"}
	allocs := testing.AllocsPerRun(100, func() {
		b.PublishTurn(tr)
		b.PublishSession(a)
	})
	assert.Zero(t, allocs)
}

func TestTurnEventTruncatesText(t *testing.T) {
	b := NewBroadcaster(1, 0)
	s, err := b.Subscribe()
	require.NoError(t, err)
	b.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 3, Final: true, IsBad: true,
		DetectionType: evaluation.DetectionRDM, Confidence: 0.9, Reason: "user corrected", UserMessage: strings.Repeat("é", 300)})
	evs := take(t, s, false)
	require.Len(t, evs, 1)
	ev := evs[0]
	assert.Equal(t, EventTurn, ev.Type)
	assert.Contains(t, string(ev.Data), `"turn_index":3,"final":true,"is_bad":true,"detection_type":"rdm","confidence":0.9,"reason":"user corrected"`)
	assert.Contains(t, string(ev.Data), strings.Repeat("é", 140)+"…\"")
	assert.NotContains(t, string(ev.Data), strings.Repeat("é", 141))
}

// TestServeHTTPStreamsAndEnds: the SSE handler writes the retry hint and each event,
// and returns when the client goes away.
func TestServeHTTPStreamsAndEnds(t *testing.T) {
	b := NewBroadcaster(1, 0)
	srv := newServer(t, Options{Store: failingStore{}, Events: b})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+PathEvents, http.NoBody)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "retry: 3000\n", line)
	require.Eventually(t, func() bool { return b.Subscribers() == 1 }, 5*time.Second, time.Millisecond)
	b.PublishSession(&evaluation.Analysis{SessionID: "s1", EndedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	var lines []string
	for len(lines) < 3 {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if line != "\n" || len(lines) > 0 {
			lines = append(lines, line)
		}
	}
	assert.Equal(t, []string{
		"event: session\n",
		`data: {"session_id":"s1","ended_at":"2026-01-02T03:04:05Z","partial":false,"overall_score":null,"task_completion":null,"turns":0,"agents":[]}` + "\n",
		"\n",
	}, lines)
	cancel()
	require.Eventually(t, func() bool { return b.Subscribers() == 0 }, 5*time.Second, time.Millisecond, "handler unsubscribed")
}

// TestServeHTTPHead: HEAD of the stream answers its headers and returns at once,
// without taking one of the MaxSubscribers slots, so the keep-alive connection serves
// the next request: here a GET of the stream on the same connection, which gets the
// only slot.
func TestServeHTTPHead(t *testing.T) {
	b := NewBroadcaster(1, 0)
	srv := newServer(t, Options{Store: failingStore{}, Events: b})
	t.Cleanup(b.Close) // ends the GET stream before srv.Close waits for it
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = fmt.Fprintf(conn, "HEAD %[1]s HTTP/1.1\r\nHost: ui\r\n\r\nGET %[1]s HTTP/1.1\r\nHost: ui\r\n\r\n", PathEvents)
	require.NoError(t, err)

	br := bufio.NewReader(conn)
	head, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	require.NoError(t, err)
	require.NoError(t, head.Body.Close())
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Equal(t, "text/event-stream", head.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache", head.Header.Get("Cache-Control"))

	get, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err, "the HEAD must not wedge the connection")
	defer func() { // the connection first: closing the endless body would drain it
		_ = conn.Close()
		_ = get.Body.Close()
	}()
	assert.Equal(t, http.StatusOK, get.StatusCode)
	line, err := bufio.NewReader(get.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "retry: 3000\n", line)
	assert.Equal(t, 1, b.Subscribers(), "only the GET holds a slot")
}

// openStream serves b's stream on a test server that setup configures before it
// starts (TLS and HTTP/2 when h2), opens the stream and reads its first line.
func openStream(t *testing.T, b *Broadcaster, h2 bool, setup func(*httptest.Server)) (*bufio.Reader, *http.Response) {
	t.Helper()
	ui, err := New(Options{Store: failingStore{}, Events: b})
	require.NoError(t, err)
	mux := http.NewServeMux()
	ui.Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	setup(srv)
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	t.Cleanup(b.Close) // ends the stream before srv.Close waits for it
	resp, err := srv.Client().Get(srv.URL + PathEvents)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "retry: 3000\n", line)
	return r, resp
}

// readUntilEvent reads r until an event of type typ; msg says why the stream must last.
func readUntilEvent(t *testing.T, r *bufio.Reader, typ, msg string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, msg)
		if line == "event: "+typ+"\n" {
			return
		}
	}
}

// TestServeHTTPOutlivesServerWriteTimeout: the stream stays open past the server's
// WriteTimeout (confighttp's default is 30 s), which applies to a whole response: an
// event published after it still arrives. Before, the server cut the stream at the
// timeout and the live view lost what was evaluated while it reconnected.
func TestServeHTTPOutlivesServerWriteTimeout(t *testing.T) {
	b := NewBroadcaster(1, 0)
	const writeTimeout = 200 * time.Millisecond
	r, _ := openStream(t, b, false, func(srv *httptest.Server) { srv.Config.WriteTimeout = writeTimeout })
	time.Sleep(3 * writeTimeout)
	b.PublishSession(&evaluation.Analysis{SessionID: "late"})
	readUntilEvent(t, r, "session", "the stream must outlive the server's write timeout")
}

// TestServeHTTPIdleOverHTTP2: over HTTP/2 (confighttp offers h2 with TLS), a stream
// with no event for longer than streamWriteTimeout stays open: net/http's HTTP/2 server
// resets a stream whose write deadline passes even when no write is pending, so the
// deadline is cleared after each write.
func TestServeHTTPIdleOverHTTP2(t *testing.T) {
	old := streamWriteTimeout
	streamWriteTimeout = 200 * time.Millisecond
	t.Cleanup(func() { streamWriteTimeout = old })
	b := NewBroadcaster(1, 0)
	r, resp := openStream(t, b, true, func(*httptest.Server) {})
	require.Equal(t, 2, resp.ProtoMajor, "served over HTTP/2")
	time.Sleep(5 * streamWriteTimeout)
	b.PublishSession(&evaluation.Analysis{SessionID: "idle"})
	readUntilEvent(t, r, "session", "an idle HTTP/2 stream must stay open")
}

// readEvents reads r until it has n events and returns their "event: type" and "data:"
// lines, joined by a space.
func readEvents(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	var typ string
	for len(out) < n {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "after %d events", len(out))
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, typ+" "+strings.TrimPrefix(line, "data: "))
		}
	}
	return out
}

// TestServeHTTPBurst: a long session's batch (500 turns: a provisional and a final
// event each, then the session event) published at once reaches the stream whole, with
// no gap, and the stream stays open. Before, a stream was closed past 64 queued events
// and lost the rest, the session event included.
func TestServeHTTPBurst(t *testing.T) {
	b := NewBroadcaster(1, 0)
	r, _ := openStream(t, b, false, func(*httptest.Server) {})
	require.Eventually(t, func() bool { return b.Subscribers() == 1 }, 5*time.Second, time.Millisecond)
	const turns = 500
	for i := range turns {
		b.PublishTurn(&evaluation.TurnResult{SessionID: "long", TurnIndex: i})
		b.PublishTurn(&evaluation.TurnResult{SessionID: "long", TurnIndex: i, Final: true})
	}
	b.PublishSession(&evaluation.Analysis{SessionID: "long"})
	got := readEvents(t, r, 2*turns+1)
	for i, ev := range got[:2*turns] {
		require.True(t, strings.HasPrefix(ev, fmt.Sprintf(`turn {"session_id":"long","turn_index":%d,"final":%t,`, i/2, i%2 == 1)), ev)
	}
	assert.True(t, strings.HasPrefix(got[2*turns], `session {"session_id":"long"`), got[2*turns])
	b.PublishSession(&evaluation.Analysis{SessionID: "after"})
	assert.True(t, strings.HasPrefix(readEvents(t, r, 1)[0], `session {"session_id":"after"`), "the stream stayed open")
}

// gatedWriter is a ResponseWriter whose writes wait until open is closed.
type gatedWriter struct {
	*httptest.ResponseRecorder
	open chan struct{}
	mu   sync.Mutex
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseRecorder.Write(p)
}

func (w *gatedWriter) Flush() {}

func (w *gatedWriter) body() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.Body.String()
}

// TestServeHTTPGap: events that a stream's full queue dropped are announced by a "gap"
// event with their count, after the events it kept; the stream goes on.
func TestServeHTTPGap(t *testing.T) {
	b := NewBroadcaster(1, 8)
	w := &gatedWriter{ResponseRecorder: httptest.NewRecorder(), open: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, PathEvents, http.NoBody)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.ServeHTTP(w, req)
	}()
	// The handler is subscribed and waits in its first write: nothing is read yet.
	require.Eventually(t, func() bool { return b.Subscribers() == 1 }, 5*time.Second, time.Millisecond)
	for i := range 20 {
		b.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: i})
	}
	b.PublishSession(&evaluation.Analysis{SessionID: "s"})
	close(w.open)
	want := "event: gap\ndata: {\"missed\":13}\n\n"
	require.Eventually(t, func() bool { return strings.Contains(w.body(), want) }, 5*time.Second, time.Millisecond)
	body := w.body()
	assert.NotContains(t, body, `"turn_index":0,`, "turn 0 made room for the session event")
	assert.NotContains(t, body, `"turn_index":8,`, "turns past the queue were dropped")
	assert.Less(t, strings.Index(body, `"turn_index":7,`), strings.Index(body, "event: session"))
	assert.Less(t, strings.Index(body, "event: session"), strings.Index(body, want), "the gap follows the kept events")
	b.PublishSession(&evaluation.Analysis{SessionID: "after"})
	require.Eventually(t, func() bool { return strings.Contains(w.body(), `"session_id":"after"`) }, 5*time.Second, time.Millisecond, "the stream goes on")
	cancel()
	<-done
}
