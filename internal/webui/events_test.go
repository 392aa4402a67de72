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
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

func TestBroadcasterFansOut(t *testing.T) {
	b := NewBroadcaster(2)
	s1, err := b.Subscribe()
	require.NoError(t, err)
	s2, err := b.Subscribe()
	require.NoError(t, err)
	_, err = b.Subscribe()
	require.ErrorIs(t, err, ErrTooManySubscribers)

	b.Publish(Event{Type: EventTurn, Data: []byte(`{}`)})
	assert.Equal(t, EventTurn, (<-s1.C).Type)
	assert.Equal(t, EventTurn, (<-s2.C).Type)

	b.Unsubscribe(s1)
	b.Unsubscribe(s1) // idempotent
	_, ok := <-s1.C
	assert.False(t, ok, "unsubscribed stream is closed")
	assert.Equal(t, 1, b.Subscribers())

	b.Close()
	_, ok = <-s2.C
	assert.False(t, ok, "Close ends every stream")
	_, err = b.Subscribe()
	require.ErrorIs(t, err, ErrBroadcasterClosed)
	b.Publish(Event{Type: EventTurn}) // no-op after Close
}

// TestBroadcasterDropsSlowSubscriber: a stream that does not read is dropped once its
// buffer is full; Publish never blocks and the other streams keep every event.
func TestBroadcasterDropsSlowSubscriber(t *testing.T) {
	b := NewBroadcaster(0)
	slow, err := b.Subscribe()
	require.NoError(t, err)
	fast, err := b.Subscribe()
	require.NoError(t, err)

	var got []Event
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range fast.C {
			got = append(got, ev)
		}
	}()
	const n = 10 * subscriberBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			b.Publish(Event{Type: EventTurn, Data: []byte{byte(i)}})
			// Let the fast reader keep up, as a healthy client does.
			for len(fast.ch) > 0 {
				runtime.Gosched()
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked")
	}
	assert.Equal(t, 1, b.Subscribers(), "the slow stream was dropped")
	buffered := 0
	for range slow.C {
		buffered++
	}
	assert.Equal(t, subscriberBuffer, buffered, "the slow stream kept what it had queued, then ended")
	b.Close()
	wg.Wait()
	assert.Len(t, got, n, "the fast stream lost nothing")
}

func TestNilBroadcasterIsANoOp(t *testing.T) {
	var b *Broadcaster
	b.Publish(Event{})
	b.PublishTurn(&evaluation.TurnResult{})
	b.PublishSession(&evaluation.Analysis{})
	b.Close()
}

func TestPublishWithoutSubscribersBuildsNothing(t *testing.T) {
	b := NewBroadcaster(1)
	tr := &evaluation.TurnResult{SessionID: "s", UserMessage: strings.Repeat("x", 1000)}
	a := &evaluation.Analysis{SessionID: "s"}
	allocs := testing.AllocsPerRun(100, func() {
		b.PublishTurn(tr)
		b.PublishSession(a)
	})
	assert.Zero(t, allocs)
}

func TestTurnEventTruncatesText(t *testing.T) {
	b := NewBroadcaster(1)
	s, err := b.Subscribe()
	require.NoError(t, err)
	b.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 3, Final: true, IsBad: true,
		DetectionType: evaluation.DetectionRDM, Confidence: 0.9, Reason: "user corrected", UserMessage: strings.Repeat("é", 300)})
	ev := <-s.C
	assert.Equal(t, EventTurn, ev.Type)
	assert.Contains(t, string(ev.Data), `"turn_index":3,"final":true,"is_bad":true,"detection_type":"rdm","confidence":0.9,"reason":"user corrected"`)
	assert.Contains(t, string(ev.Data), strings.Repeat("é", 140)+"…\"")
	assert.NotContains(t, string(ev.Data), strings.Repeat("é", 141))
}

// TestServeHTTPStreamsAndEnds: the SSE handler writes the retry hint and each event,
// and returns when the client goes away.
func TestServeHTTPStreamsAndEnds(t *testing.T) {
	b := NewBroadcaster(1)
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
	b := NewBroadcaster(1)
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
	b := NewBroadcaster(1)
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
	b := NewBroadcaster(1)
	r, resp := openStream(t, b, true, func(*httptest.Server) {})
	require.Equal(t, 2, resp.ProtoMajor, "served over HTTP/2")
	time.Sleep(5 * streamWriteTimeout)
	b.PublishSession(&evaluation.Analysis{SessionID: "idle"})
	readUntilEvent(t, r, "session", "an idle HTTP/2 stream must stay open")
}
