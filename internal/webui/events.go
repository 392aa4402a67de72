// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui // import "github.com/agenteval/agenteval-collector/internal/webui"

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// Event types of the live stream (the SSE "event:" field).
const (
	EventTurn    = "turn"
	EventSession = "session"
	// EventGap tells the client that events were dropped for it (GapEvent).
	EventGap = "gap"
)

// Defaults of the live stream.
const (
	// DefaultMaxSubscribers bounds the open GET /api/v1/events streams.
	DefaultMaxSubscribers = 32
	// DefaultQueueSize is the events queued per stream. A stream this far behind loses
	// turn events (a session event takes the place of the oldest queued turn event) and
	// is told how many with a "gap" event.
	DefaultQueueSize = 4096
	// keepAliveInterval sends an SSE comment so that idle proxies keep the stream open.
	keepAliveInterval = 15 * time.Second
	// maxEventText caps the user message carried in a turn event, in bytes.
	maxEventText = 280
)

// streamWriteTimeout bounds each write of a stream (an event, a keep-alive): a client
// that stops reading loses its stream and its slot after it. The server's own write
// timeout (confighttp: 30 s) bounds a whole response and would cut every stream, so the
// handler replaces it write by write, and clears it between writes: HTTP/2 resets a
// stream whose deadline passes even with no write pending. A variable for the tests.
var streamWriteTimeout = 10 * time.Second

// ErrTooManySubscribers is returned by Subscribe when MaxSubscribers streams are open.
var ErrTooManySubscribers = errors.New("too many live event streams")

// ErrBroadcasterClosed is returned by Subscribe after Close.
var ErrBroadcasterClosed = errors.New("live event stream closed")

// Event is one message of the live stream: Type is EventTurn or EventSession, Data the
// JSON body (TurnEvent or SessionEvent).
type Event struct {
	Type string
	Data []byte
}

// TurnEvent is the data of a "turn" event: a turn evaluated (Final false when the turn
// closed, true with its final CCM/RDM verdict). Confidence is in [0,1]; LatencyMs in
// milliseconds; UserMessage is cut to 280 bytes.
type TurnEvent struct {
	SessionID     string  `json:"session_id"`
	TurnIndex     int     `json:"turn_index"`
	Final         bool    `json:"final"`
	IsBad         bool    `json:"is_bad"`
	DetectionType string  `json:"detection_type"`
	Confidence    float64 `json:"confidence"`
	Reason        string  `json:"reason"`
	LatencyMs     float64 `json:"latency_ms"`
	UserMessage   string  `json:"user_message,omitempty"`
}

// GapEvent is the data of a "gap" event: Missed events were dropped for this stream
// since the last gap because its queue was full (turn events; session events only when
// the queue held nothing else). It follows the events that were kept in the meantime.
type GapEvent struct {
	Missed int `json:"missed"`
}

// SessionEvent is the data of a "session" event: a session analysis stored. Scores are
// in [0,1] or null.
type SessionEvent struct {
	SessionID      string    `json:"session_id"`
	EndedAt        time.Time `json:"ended_at"`
	Partial        bool      `json:"partial"`
	OverallScore   *float64  `json:"overall_score"`
	TaskCompletion *bool     `json:"task_completion"`
	Turns          int       `json:"turns"`
	Agents         []string  `json:"agents"`
}

// Broadcaster fans evaluation events out to the live streams. Publishing never blocks:
// with no stream open it costs one atomic load; a stream whose queue is full drops the
// new turn event (a session event replaces the oldest queued turn event instead) and
// counts it, and its client gets a "gap" event with the count. A client that stops
// reading altogether loses its stream when a write times out (streamWriteTimeout). Safe
// for concurrent use.
type Broadcaster struct {
	max       int
	queueSize int
	n         atomic.Int32
	mu        sync.Mutex
	subs      map[*Subscription]struct{}
	done      bool
}

// Subscription is one stream's queue. Ready receives a value when events are queued
// or the subscription has ended (Close of the broadcaster, or Unsubscribe); Take then
// returns them.
type Subscription struct {
	Ready <-chan struct{}
	ready chan struct{} // capacity 1: one pending wake-up is enough

	mu     sync.Mutex
	queue  []Event
	limit  int
	missed int
	ended  bool
}

// Take returns the queued events, oldest first, the number of events dropped for this
// stream (queue full) since the last Take, and whether the subscription has ended (no
// event will follow). It does not wait: with nothing queued it returns nil, 0, ended.
func (s *Subscription) Take() (events []Event, missed int, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	events, missed = s.queue, s.missed
	s.queue, s.missed = nil, 0
	return events, missed, s.ended
}

// push queues ev; a full queue drops a turn event (ev itself, or for a session event the
// oldest queued turn event, else the oldest event) and counts it.
func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	switch {
	case len(s.queue) < s.limit:
		s.queue = append(s.queue, ev)
	case ev.Type != EventSession:
		s.missed++
	default:
		i := slices.IndexFunc(s.queue, func(q Event) bool { return q.Type != EventSession })
		if i < 0 {
			i = 0
		}
		s.queue = append(slices.Delete(s.queue, i, i+1), ev)
		s.missed++
	}
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.ready <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// NewBroadcaster returns a broadcaster allowing maxSubscribers streams at once
// (DefaultMaxSubscribers when <= 0), each queueing up to queueSize events
// (DefaultQueueSize when <= 0). The queues take memory only for the events they hold.
func NewBroadcaster(maxSubscribers, queueSize int) *Broadcaster {
	if maxSubscribers <= 0 {
		maxSubscribers = DefaultMaxSubscribers
	}
	if queueSize <= 0 {
		queueSize = DefaultQueueSize
	}
	return &Broadcaster{max: maxSubscribers, queueSize: queueSize, subs: map[*Subscription]struct{}{}}
}

// Subscribe opens a stream. Errors: ErrTooManySubscribers, ErrBroadcasterClosed.
func (b *Broadcaster) Subscribe() (*Subscription, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil, ErrBroadcasterClosed
	}
	if len(b.subs) >= b.max {
		return nil, ErrTooManySubscribers
	}
	ready := make(chan struct{}, 1)
	s := &Subscription{Ready: ready, ready: ready, limit: b.queueSize}
	b.subs[s] = struct{}{}
	b.n.Store(int32(len(b.subs)))
	return s, nil
}

// Unsubscribe ends s (idempotent).
func (b *Broadcaster) Unsubscribe(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(s)
}

func (b *Broadcaster) removeLocked(s *Subscription) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.end()
	b.n.Store(int32(len(b.subs)))
}

// Subscribers returns the number of open streams.
func (b *Broadcaster) Subscribers() int { return int(b.n.Load()) }

// Close ends every stream; later Subscribe calls fail and Publish does nothing. A nil
// broadcaster does nothing.
func (b *Broadcaster) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		b.removeLocked(s)
	}
	b.done = true
}

// Publish queues ev on every stream; a full queue drops a turn event and counts it
// (Subscription.Take).
func (b *Broadcaster) Publish(ev Event) {
	if b == nil || b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.push(ev)
	}
}

// PublishTurn publishes a "turn" event for tr. The JSON is built only when a stream is
// open. A nil broadcaster does nothing.
func (b *Broadcaster) PublishTurn(tr *evaluation.TurnResult) {
	if b == nil || b.n.Load() == 0 || tr == nil {
		return
	}
	b.publishJSON(EventTurn, TurnEvent{
		SessionID: tr.SessionID, TurnIndex: tr.TurnIndex, Final: tr.Final, IsBad: tr.IsBad,
		DetectionType: tr.DetectionType, Confidence: tr.Confidence, Reason: tr.Reason,
		LatencyMs: tr.LatencyMs, UserMessage: text.Truncate(tr.UserMessage, maxEventText),
	})
}

// PublishSession publishes a "session" event for a stored analysis. A nil broadcaster
// does nothing.
func (b *Broadcaster) PublishSession(a *evaluation.Analysis) {
	if b == nil || b.n.Load() == 0 || a == nil {
		return
	}
	b.publishJSON(EventSession, SessionEvent{
		SessionID: a.SessionID, EndedAt: a.EndedAt.UTC(), Partial: a.Partial, OverallScore: a.OverallScore,
		TaskCompletion: a.TaskCompletion, Turns: len(a.TurnResults), Agents: a.Agents(),
	})
}

func (b *Broadcaster) publishJSON(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // only a NaN score can fail; the stored analysis is unaffected
	}
	b.Publish(Event{Type: typ, Data: data})
}

// ServeHTTP streams events as server-sent events (text/event-stream): "event: turn" or
// "event: session" and one "data:" line of JSON per event, "event: gap" with a GapEvent
// after events that were dropped for this stream, a ": keep-alive" comment every 15s.
// 503 when MaxSubscribers streams are open or the broadcaster is closed. The stream ends
// when the client goes away, when a write times out (a client that stopped reading), or
// at Close.
// HEAD (which a GET route also serves) answers the stream's headers and returns at once,
// without a subscription: a HEAD response has no body, so a stream would never end and
// would hold its slot and the client's connection.
func (b *Broadcaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		setStreamHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		return
	}
	rc := http.NewResponseController(w)
	sub, err := b.Subscribe()
	if err != nil {
		w.Header().Set("Retry-After", "10")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer b.Unsubscribe(sub)
	// write sends one message of the stream and flushes it, within streamWriteTimeout.
	write := func(format string, args ...any) bool {
		// A writer that cannot set deadlines (a middleware without Unwrap) keeps the
		// server's: the stream then ends at its write timeout and EventSource reconnects.
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		if _, err := fmt.Fprintf(w, format, args...); err != nil || rc.Flush() != nil {
			return false
		}
		err := rc.SetWriteDeadline(time.Time{})
		return err == nil || errors.Is(err, http.ErrNotSupported)
	}
	setStreamHeaders(w.Header())
	// Tell EventSource to reconnect after 3s when the stream ends.
	if !write("retry: 3000\n\n") {
		return
	}
	keepAlive := time.NewTicker(keepAliveInterval)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			if !write(": keep-alive\n\n") {
				return
			}
		case <-sub.Ready:
			events, missed, ended := sub.Take()
			for _, ev := range events {
				// The JSON has no newline (encoding/json escapes them in strings).
				if !write("event: %s\ndata: %s\n\n", ev.Type, ev.Data) {
					return
				}
			}
			// The dropped events came after those queued before the queue filled.
			if missed > 0 && !writeGap(write, missed) {
				return
			}
			if ended {
				return
			}
		}
	}
}

// writeGap sends a "gap" event for missed events with write.
func writeGap(write func(string, ...any) bool, missed int) bool {
	data, _ := json.Marshal(GapEvent{Missed: missed}) // an int cannot fail
	return write("event: %s\ndata: %s\n\n", EventGap, data)
}

func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}
