// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"cmp"
	"container/list"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Defaults used for zero Config fields (docs/architecture.md §4, §11).
const (
	DefaultTurnSettle         = 2 * time.Second
	DefaultTurnTimeout        = 60 * time.Second
	DefaultSessionTimeout     = 5 * time.Minute
	DefaultMaxSessionDuration = time.Hour
	DefaultMaxSessions        = 10000
	DefaultMaxSpansPerSession = 10000
)

// Config configures a Tracker. Zero (or negative) fields take the Default* values.
type Config struct {
	// TurnSettle: a turn whose root record arrived closes after this much silence of its
	// trace (turn_settle, default 2s).
	TurnSettle time.Duration
	// TurnTimeout: a turn closes after this much silence of its trace even without its
	// root record, then marked Partial (turn_timeout, default 60s).
	TurnTimeout time.Duration
	// SessionTimeout: a session whose turns are all closed ends after this much silence
	// (session_timeout, default 5m).
	SessionTimeout time.Duration
	// MaxSessionDuration: a session is closed as partial this long after its first record
	// (max_session_duration, default 1h).
	MaxSessionDuration time.Duration
	// MaxSessions bounds the open sessions, counting traces still waiting for a session
	// key; past it the least recently active is closed as partial (max_sessions, default
	// 10000).
	MaxSessions int
	// MaxSpansPerSession: a session that exceeds it is closed as partial and its further
	// records are counted, not retained, until session_timeout of silence
	// (max_spans_per_session, default 10000).
	MaxSpansPerSession int
	// Registry holds the configured agents and their tools (ToolsSource "config"). For an
	// agent it names, it wins over what the traces show.
	Registry []session.AgentDefinition
	// RetainTurns bounds the closed turns a session keeps for its session-end snapshot
	// (the most recent; at least 2, for the turn events' window). 0 keeps them all. The
	// snapshot's totals (usage, latency, cost, outcome, time span) cover every turn
	// either way. A consumer that keeps its own per-turn results (the processor) sets it
	// to 2, so that a long session's memory does not grow with its turns.
	RetainTurns int
	// Extractor completes the records whose message lists the ingest left undecoded
	// (conventions.Extractor.ExtractDeferred) when their turn is assembled
	// (Closed.Assemble), with Extractor.CompleteAll. Nil when every record is complete
	// (conventions.Extractor.ExtractInto): records still holding a deferred part are
	// then completed by a default Extractor, whose text cap may differ from the one
	// that extracted them.
	Extractor *conventions.Extractor
}

func (c Config) withDefaults() Config {
	dur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	dur(&c.TurnSettle, DefaultTurnSettle)
	dur(&c.TurnTimeout, DefaultTurnTimeout)
	dur(&c.SessionTimeout, DefaultSessionTimeout)
	dur(&c.MaxSessionDuration, DefaultMaxSessionDuration)
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxSpansPerSession <= 0 {
		c.MaxSpansPerSession = DefaultMaxSpansPerSession
	}
	return c
}

// EventKind is the kind of an Event.
type EventKind uint8

// Event kinds.
const (
	// EventTurnClosed: a turn closed. Event.Session is a window of the session: the
	// previous closed turn (when there is one) and the closed turn, last.
	EventTurnClosed EventKind = iota + 1
	// EventSessionEnded: a session ended; Session.EndReason and Session.Partial say how.
	EventSessionEnded
)

// String returns "turn_closed" or "session_ended".
func (k EventKind) String() string {
	switch k {
	case EventTurnClosed:
		return "turn_closed"
	case EventSessionEnded:
		return "session_ended"
	}
	return "unknown"
}

// Event is something the Tracker decided: a turn closed or a session ended.
type Event struct {
	Kind EventKind
	// Session is a snapshot of the session at the event: for EventSessionEnded every
	// turn, for EventTurnClosed a window of at most two turns (the previous closed turn
	// and the closed one), so that a turn's close costs the same in a long session as
	// in a short one. Agents are the session's so far in both. The Tracker never
	// modifies it afterwards, but its nested slices (turns' interactions and steps,
	// agents' tools) are shared with the Tracker and later snapshots: treat it as
	// read-only.
	Session *session.AgentSession
	// TurnIndex is the closed turn's position in Session.Turns (EventTurnClosed): the
	// last one of the window.
	TurnIndex int
	// TurnOutcome is the closed turn's explicit task outcome (agent_eval.task.completed),
	// nil without one (EventTurnClosed).
	TurnOutcome *bool
	// EarlierOpen is true when a turn of the session that started before the closed one
	// is still open (EventTurnClosed): its root has not arrived (it may close at
	// turn_timeout) or it runs longer. The closed turn is then not the next one, in the
	// conversation, after the session's previous closed turn: that one's follow-up is
	// the open turn's user message (docs/decisions/sessions.md §4.5).
	EarlierOpen bool
}

// Stats reports the Tracker's state and counters. Every record passed to Observe
// is counted once: SpansObserved = RetainedSpans + SpansAssembled + SpansDiscarded +
// SpansIgnored + SpansDropped + LateSpans.
type Stats struct {
	// OpenSessions are the open sessions with a session key.
	OpenSessions int
	// PendingTraces are open traces whose records carried no session key yet.
	PendingTraces int
	// OpenTurns are the open traces (turns), pending or attached to a session.
	OpenTurns int
	// RetainedSpans are the records held for open turns.
	RetainedSpans int

	// SpansObserved counts every record passed to Observe.
	SpansObserved uint64
	// SpansAssembled counts records assembled into closed turns.
	SpansAssembled uint64
	// SpansDiscarded counts records of traces without any GenAI span (no turn).
	SpansDiscarded uint64
	// SpansIgnored counts ClassEvaluation records (never part of a turn).
	SpansIgnored uint64
	// SpansDropped counts records of sessions and traces closed by max_spans_per_session,
	// received until their timeout.
	SpansDropped uint64
	// LateSpans counts records of traces whose turn had already closed.
	LateSpans uint64
	// TurnsClosed, SessionsEvicted (max_sessions) and EmptySessions (sessions that ended
	// without any turn nor explicit outcome, not reported) count events.
	TurnsClosed     uint64
	SessionsEvicted uint64
	EmptySessions   uint64
}

// Tracker groups SpanRecords into traces and sessions and decides when turns close and
// sessions end (docs/architecture.md §4 "Turn", "Session end"). It is deterministic: time is passed
// in, it starts no goroutine, and events come out in a fixed order. It is NOT safe for
// concurrent use: the caller (the processor) serialises calls with a mutex.
//
// Records wait with their trace until a record of that trace carries a session key
// (SpanRecord.SessionID); the trace then joins that session. A trace that closes without
// any session key forms a session of its own, keyed by its trace id (KeySource
// "trace_id"), which ends with that turn (EndReasonSingleTrace). Records are retained
// only while their turn is open; a closed turn keeps the assembled Turn only.
type Tracker struct {
	cfg      Config
	registry map[string]*session.AgentDefinition

	traces   map[string]*traceState
	sessions map[string]*sessionState
	// lru orders the open sessions and the pending traces, most recently active first.
	lru *list.List
	// closed remembers the traces whose turn closed, for late spans.
	closed     map[string]*closedTurn
	closedFIFO []expiry
	// deadSessions and deadTraces are closed by max_spans_per_session: their records are
	// counted, not retained, until session_timeout of silence.
	deadSessions map[string]time.Time
	// A dead trace's time is updated in place: assigning to a map's existing string
	// key stores the new key too, which would keep a record's id (and the batch memory
	// it shares) alive.
	deadTraces map[string]*time.Time
	// Timers (timeorder.go): the open traces by their last record's arrival, those
	// whose root arrived (due at turn_settle) apart from the others (due at
	// turn_timeout); the open sessions by their last activity and by their creation;
	// the sessions that received an end signal. AdvanceClosing reads only what may be
	// due.
	rooted    timeList[*traceState]
	unrooted  timeList[*traceState]
	byActive  timeList[*sessionState]
	byCreated timeList[*sessionState]
	signalled []*sessionState
	// pending counts the open traces without a session (in lru as traces).
	pending int
	// vocab holds the strings that records of all traces share (tracker_recs.go).
	vocab valueVocab

	now   time.Time
	stats Stats
}

type traceState struct {
	id   string
	sess *sessionState
	// recs holds the records received, in the compact form of tracker_recs.go; it also
	// knows the class of every distinct span id received.
	recs traceRecords
	// root is true once the turn's root record arrived (see hasRoot).
	root bool
	// remoteTop is true once a record whose parent is remote arrived
	// (SpanRecord.ParentRemote): see partialClose.
	remoteTop bool
	genAI     bool
	endSignal bool
	// outcome is the last explicit task outcome (agent_eval.task.completed) received.
	outcome *bool
	service string
	// key is the session key the trace joined its session by (SpanRecord.SessionKey).
	key       string
	firstSeen time.Time
	// seen.at is when the trace's last record arrived (Tracker.rooted or unrooted,
	// timers).
	seen timeNode[*traceState]
	// start is the earliest span start of the trace (ns since the Unix epoch; 0 when
	// none is known): turns that arrive together are numbered in start order.
	start int64
	// after is the end (ns since the Unix epoch) of the records of the trace's turns
	// that closed before this one opened (closedTurn.end; 0 when none): a record that
	// starts at or before it is a late record of those.
	after int64
	// next is true for the next turn of a trace whose earlier turns closed (reopen):
	// Tracker.closed knows the trace too.
	next bool
	elem *list.Element // in Tracker.lru while pending
}

// turnOrder orders the traces that close together, so that a session's turn indexes
// follow the conversation: by arrival, then by the earliest span start (the turns of a
// recorded session or a replay arrive in one request), then by trace id.
func turnOrder(x, y *traceState) int {
	if c := x.firstSeen.Compare(y.firstSeen); c != 0 {
		return c
	}
	if c := cmp.Compare(x.start, y.start); c != 0 {
		return c
	}
	return cmp.Compare(x.id, y.id)
}

// hasRoot reports whether the turn's root record has arrived: a turn marker (ClassTurn),
// a record without a parent (the trace root, of any class), or an agent/LLM/tool record
// whose parent already arrived and is not a GenAI span. A GenAI span whose parent has
// not arrived does not count: spans arrive as they end, children first, and the missing
// parent is usually an agent still running (a coordinator between two LLM calls, an
// agent-as-tool); closing on turn_settle then would cut the turn in two. Such a trace
// closes when its root arrives, or after turn_timeout of silence.
func (tr *traceState) hasRoot() bool { return tr.root }

type sessionState struct {
	id        string
	keySource string
	service   string
	byTrace   bool
	// created.at is when the session was created and active.at its last activity
	// (Tracker.byCreated, Tracker.byActive; a session keyed by its trace is in neither).
	created timeNode[*sessionState]
	active  timeNode[*sessionState]
	// ended is set once the session left Tracker.sessions.
	ended bool
	open  map[string]*traceState
	// turns are the closed turns in close order (the last RetainTurns when set); a
	// turn's Index is its position among all the session's closed turns (closedTurns
	// before it), given once.
	turns       []turnState
	closedTurns int
	// Totals over every closed turn, for the session-end snapshot.
	latencyMs          float64
	usage              session.Usage
	cost               float64
	costSeen           bool
	outcome            *bool
	startedAt, endedAt time.Time
	// agents merges the agents of the closed turns (mergeAgents); agentPos indexes it
	// and fromRegistry marks the configured ones.
	agents       []session.AgentDefinition
	agentPos     map[string]int
	fromRegistry map[string]bool
	// closedTraces are the traces whose turn closed, in close order (their turns join
	// turns when Finish completes them).
	closedTraces []string
	// spans counts the records retained for the session's open turns.
	spans     int
	endSignal bool
	// traceDone is true for a session keyed by a trace that may hold a conversation
	// (traceSession) once the trace's root arrived: it ends, as single_trace, once its
	// open turns close.
	traceDone bool
	elem      *list.Element
}

type turnState struct {
	turn    session.Turn
	agents  []session.AgentDefinition
	outcome *bool
	cost    *float64
}

type closedTurn struct {
	sess *sessionState // nil once the session ended
	// end is the latest end (ns since the Unix epoch) of the records of the trace's
	// closed turns.
	end int64
	// continues is true when the trace may hold a conversation (its root has not
	// arrived, splitTrace): a record that starts after end opens its next turn.
	continues bool
	// spans are the span ids of the closed turns' records while the trace may go on
	// (nil once a turn closes with the trace known complete): a record with one of
	// their ids (a duplicate: no later turn takes a closed one's identity) or under one
	// of them (a call an agent made after it answered) is late, whatever its times say.
	spans map[string]struct{}
}

type expiry struct {
	trace string
	at    time.Time
}

// New returns a Tracker with cfg (zero fields take the defaults). The registry is
// copied.
func New(cfg Config) *Tracker {
	t := &Tracker{
		cfg:          cfg.withDefaults(),
		registry:     map[string]*session.AgentDefinition{},
		traces:       map[string]*traceState{},
		sessions:     map[string]*sessionState{},
		lru:          list.New(),
		closed:       map[string]*closedTurn{},
		deadSessions: map[string]time.Time{},
		deadTraces:   map[string]*time.Time{},
	}
	for _, d := range cfg.Registry {
		c := cloneAgent(d)
		if c.ToolsSource == "" {
			c.ToolsSource = session.ToolsSourceConfig
		}
		for _, k := range []string{c.ID, c.Name} {
			if _, dup := t.registry[k]; k != "" && !dup {
				t.registry[k] = &c
			}
		}
	}
	return t
}

// Observe takes a batch of records at time now. It returns the events that the batch
// caused at once: sessions closed by max_sessions or max_spans_per_session (with their
// open turns). It is Finish(ObserveClosing(recs, now)).
func (t *Tracker) Observe(recs []session.SpanRecord, now time.Time) []Event {
	return t.Finish(t.ObserveClosing(recs, now))
}

// ObserveClosing is Observe without the assembly of the turns it closes: it returns
// what closed, to be assembled (Closed.Assemble, safe outside the caller's lock) and
// completed by Finish, in order.
func (t *Tracker) ObserveClosing(recs []session.SpanRecord, now time.Time) []Closed {
	t.tick(now)
	var ev []Closed
	for i := range recs {
		ev = t.observe(&recs[i], now, ev)
	}
	t.vocab.forgetMemo()
	return ev
}

func (t *Tracker) tick(now time.Time) {
	if now.After(t.now) {
		t.now = now
	}
}

func (t *Tracker) observe(r *session.SpanRecord, now time.Time, ev []Closed) []Closed {
	t.stats.SpansObserved++
	if r.Class == session.ClassEvaluation {
		t.stats.SpansIgnored++
		return ev
	}
	// An open trace is never dead, and closed only when it is the next turn of a trace
	// that may hold a conversation (forget runs before a trace id enters deadTraces or
	// closed, and observe looks at both before it opens a trace): the records of open
	// traces, most of them, take one lookup.
	tr := t.traces[r.TraceID]
	if tr == nil {
		if at := t.deadTraces[r.TraceID]; at != nil {
			*at = now
			t.stats.SpansDropped++
			return ev
		}
		if c, ok := t.closed[r.TraceID]; ok {
			if !c.opens(r) {
				t.late(c, r, now)
				return ev
			}
			// The trace's next turn (a conversation inside one trace): it joins the
			// session of the trace's earlier turns while that is open.
			var key string
			if c.sess != nil {
				key = c.sess.keySource
			}
			tr = t.reopen(strings.Clone(r.TraceID), c.end, c.sess, key, nil, now)
		}
	} else if tr.next {
		// A record of the trace's closed turns, come while its next turn is open.
		c := t.closed[r.TraceID]
		switch {
		case c != nil && c.holds(r):
			t.late(c, r, now)
			return ev
		case r.StartUnixNano != 0 && r.StartUnixNano <= tr.after:
			if c != nil {
				t.late(c, r, now)
			} else {
				t.stats.LateSpans++
			}
			return ev
		}
	}
	if r.SessionID != "" && (tr == nil || tr.sess == nil) {
		if _, dead := t.deadSessions[r.SessionID]; dead {
			t.deadSessions[r.SessionID] = now
			if tr != nil {
				t.dropTrace(tr)
			}
			t.markDead(strings.Clone(r.TraceID), now)
			t.stats.SpansDropped++
			return ev
		}
	}
	if tr == nil {
		// The Tracker keeps its own copy of the id: a record's may share memory with the
		// batch (conventions.IDBuffer).
		tr = t.openTrace(strings.Clone(r.TraceID), now)
	}
	switch {
	case tr.sess == nil && r.SessionID != "":
		t.attach(tr, t.foldSubAgent(r.SessionID), r.SessionKey, r.Service, now)
	case tr.sess != nil && r.SessionID != "" && r.SessionID != tr.sess.id && ParentSessionID(tr.sess.id) == r.SessionID:
		// The trace joined a sub-agent's id first; the parent's id folds it back.
		t.rekey(tr, r.SessionID, r.SessionKey, r.Service, now)
	case tr.sess != nil && r.SessionID != "" && r.SessionKey != tr.key:
		t.betterKey(tr, r, now)
	}
	t.retain(tr, r, now)
	if s := tr.sess; s != nil {
		if s.spans > t.cfg.MaxSpansPerSession {
			ev = t.killSession(s, now, ev)
		}
	} else if tr.recs.n > t.cfg.MaxSpansPerSession {
		t.markDead(tr.id, now)
		ev = t.closeTrace(tr, session.EndReasonMaxSpans, now, ev)
	}
	return t.evict(now, ev)
}

// retain adds r to its open trace and updates the root tracking and activity.
func (t *Tracker) retain(tr *traceState, r *session.SpanRecord, now time.Time) {
	parentArrived, parentGenAI, dup := tr.recs.add(r, &t.vocab)
	t.stats.RetainedSpans++
	if st := r.StartUnixNano; st != 0 && (tr.start == 0 || st < tr.start) {
		tr.start = st
	}
	if tr.service == "" {
		tr.service = r.Service
	}
	if r.EndSignal {
		tr.endSignal = true
	}
	if r.Outcome != nil {
		v := *r.Outcome
		tr.outcome = &v
	}
	if r.Class.GenAI() {
		tr.genAI = true
	}
	if !dup {
		if r.ParentRemote {
			tr.remoteTop = true
		}
		switch {
		case r.Class == session.ClassTurn:
			tr.root = true
		case r.ParentSpanID == "" || r.ParentSpanID == r.SpanID:
			// The trace's own root (of any class, e.g. the HTTP server span around
			// the agents) ends last: the trace is complete.
			tr.root = true
		case r.Class == session.ClassAgent || r.Class == session.ClassLLM || r.Class == session.ClassTool:
			// A GenAI span under a span that already arrived and is not GenAI (an
			// HTTP or framework span that ended first). A GenAI span whose parent has
			// not arrived is NOT a root: the parent may be an agent still running
			// (agents-as-tools, a coordinator between two LLM calls).
			if parentArrived && !parentGenAI {
				tr.root = true
			}
		}
	}
	t.timers(tr).set(&tr.seen, now) // from unrooted to rooted when the root arrived
	if s := tr.sess; s != nil {
		s.spans++
		t.activate(s, now)
		if r.EndSignal {
			t.signal(s)
		}
		t.lru.MoveToFront(s.elem)
	} else {
		t.lru.MoveToFront(tr.elem)
	}
}

// attach makes the pending trace join the session id (creating it); keySource names the
// key the id came from and service the record's service.
func (t *Tracker) attach(tr *traceState, id, keySource, service string, now time.Time) {
	s := t.sessions[id]
	if s == nil {
		s = &sessionState{id: id, keySource: keySource, open: map[string]*traceState{}}
		s.created.v, s.active.v = s, s
		t.byCreated.set(&s.created, now)
		t.activate(s, now)
		t.sessions[s.id] = s
		s.elem = t.lru.PushFront(s)
	}
	t.lru.Remove(tr.elem)
	tr.elem = nil
	t.pending--
	tr.sess = s
	tr.key = keySource
	s.open[tr.id] = tr
	s.spans += tr.recs.n
	if tr.endSignal {
		t.signal(s)
	}
	if s.service == "" {
		s.service = cmp.Or(tr.service, service)
	}
}

// subAgentSuffix is the "-<uuid>" some frameworks append to the conversation id for a
// sub-agent's run (Mastra: <thread>-<uuid> for the sub-agent's memory thread).
var subAgentSuffix = regexp.MustCompile(`-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ParentSessionID returns the conversation id that a sub-agent's id of the form
// <parent>-<uuid> belongs to, or "" when id has no such suffix.
func ParentSessionID(id string) string {
	loc := subAgentSuffix.FindStringIndex(id)
	if loc == nil || loc[0] == 0 {
		return ""
	}
	return id[:loc[0]]
}

// foldSubAgent returns the open session a sub-agent's id (<parent>-<uuid>) folds into,
// else id: a sub-agent run under its own conversation id stays in its parent's session
// (docs/decisions/sessions.md §2.1).
func (t *Tracker) foldSubAgent(id string) string {
	if p := ParentSessionID(id); p != "" {
		if _, open := t.sessions[p]; open {
			return p
		}
	}
	return id
}

// keyRank is the priority of a session key name (conventions.Extractor.SessionKeyRank),
// -1 without an extractor.
func (t *Tracker) keyRank(key string) int {
	if t.cfg.Extractor == nil {
		return -1
	}
	return t.cfg.Extractor.SessionKeyRank(key)
}

// betterKey moves the open trace tr to the session that r's key names when that key comes
// before the one tr joined by (DESIGN §4: the session key is the first present of the
// configured list on any span of the trace). Spans arrive as they end, so a trace often
// joins by a later key first: Bedrock AgentCore puts its runtime's session.id on every
// span, while the agent span, which ends last, holds gen_ai.conversation.id. The same id
// under a better key only records that key. A session that ended for good (a dead id)
// takes no trace.
func (t *Tracker) betterKey(tr *traceState, r *session.SpanRecord, now time.Time) {
	rank := t.keyRank(r.SessionKey)
	if cur := t.keyRank(tr.key); rank < 0 || (cur >= 0 && rank >= cur) {
		return
	}
	id := t.foldSubAgent(r.SessionID)
	if id == tr.sess.id {
		tr.key = r.SessionKey
		if cur := t.keyRank(tr.sess.keySource); cur < 0 || rank < cur {
			tr.sess.keySource = r.SessionKey
		}
		return
	}
	if _, dead := t.deadSessions[id]; dead {
		return
	}
	t.rekey(tr, id, r.SessionKey, r.Service, now)
}

// rekey moves the open trace tr from the session it joined to session id: the parent's
// of a sub-agent's id, or the session of a better key (betterKey). The session it leaves
// is dropped when nothing else is in it.
func (t *Tracker) rekey(tr *traceState, id, keySource, service string, now time.Time) {
	old := tr.sess
	delete(old.open, tr.id)
	old.spans -= tr.recs.n
	tr.sess = nil
	tr.elem = t.lru.PushFront(tr)
	t.pending++
	if len(old.open) == 0 && len(old.turns) == 0 && old.closedTurns == 0 && len(old.closedTraces) == 0 {
		t.dropSession(old)
		if old.elem != nil {
			t.lru.Remove(old.elem)
			old.elem = nil
		}
	}
	t.attach(tr, id, keySource, service, now)
}

// late counts a record of an already closed turn and notes it on the turn. The root of a
// trace that may hold a conversation (closedTurn.continues) ends it: a session keyed by
// that trace then ends once its open turns close.
func (t *Tracker) late(c *closedTurn, r *session.SpanRecord, now time.Time) {
	t.stats.LateSpans++
	if c.continues && isTraceRoot(r) {
		// Its spans stay known while the turn open after them closes.
		c.continues = false
		if s := c.sess; s != nil && !s.ended && s.traceOnly() && s.id == r.TraceID {
			s.traceDone = true
			t.signal(s)
		}
	}
	s := c.sess
	if s == nil {
		return
	}
	t.activate(s, now)
	if s.elem != nil {
		t.lru.MoveToFront(s.elem)
	}
	// The record's turn: of the trace's turns (several when it holds a conversation),
	// the last that started before it, else the first.
	var tu *session.Turn
	for i := range s.turns {
		c := &s.turns[i].turn
		if c.TraceID == r.TraceID && (tu == nil || c.StartedAt.UnixNano() <= r.StartUnixNano) {
			tu = c
		}
	}
	if tu == nil || slices.Contains(tu.Anomalies, session.AnomalyLateSpan) {
		return
	}
	// Copy on write: earlier snapshots share the old slice.
	an := append(slices.Clone(tu.Anomalies), session.AnomalyLateSpan)
	slices.Sort(an)
	tu.Anomalies = an
}

// opens reports whether r, a record of a trace whose turn closed, is its next turn's: the
// trace may hold a conversation and r starts after its closed turns' records.
func (c *closedTurn) opens(r *session.SpanRecord) bool {
	return c.continues && r.StartUnixNano > c.end && !c.holds(r)
}

// holds reports whether r is a record of the trace's closed turns, whatever its times
// say: a span with one of their root ids (a duplicate), or a child of one of their spans
// (a call an agent made after it answered).
func (c *closedTurn) holds(r *session.SpanRecord) bool {
	_, dup := c.spans[r.SpanID]
	_, child := c.spans[r.ParentSpanID]
	return dup || child
}

// dropTrace forgets an open trace whose records are not to be retained.
func (t *Tracker) dropTrace(tr *traceState) {
	n := tr.recs.n
	t.stats.RetainedSpans -= n
	t.stats.SpansDropped += uint64(n)
	t.forget(tr)
}

// forget removes an open trace from the tracker's indexes.
func (t *Tracker) forget(tr *traceState) {
	delete(t.traces, tr.id)
	tr.seen.in.remove(&tr.seen)
	if tr.elem != nil {
		t.lru.Remove(tr.elem)
		tr.elem = nil
		t.pending--
	}
	if tr.sess != nil {
		delete(tr.sess.open, tr.id)
		tr.sess.spans -= tr.recs.n
	}
	tr.recs = traceRecords{}
	// The memo knows a trace by its records' address, which the emptied records keep:
	// none of its references may outlive them, even if this state took records again.
	t.vocab.forgetMemo()
}

// killSession closes a session that exceeded max_spans_per_session and refuses its
// further records until session_timeout of silence.
func (t *Tracker) killSession(s *sessionState, now time.Time, ev []Closed) []Closed {
	t.deadSessions[s.id] = now
	for id := range s.open {
		t.markDead(id, now)
	}
	for _, id := range s.closedTraces {
		t.markDead(id, now)
	}
	return t.endSession(s, session.EndReasonMaxSpans, true, now, ev)
}

// evict closes the least recently active sessions (or pending traces) while more than
// max_sessions are open.
func (t *Tracker) evict(now time.Time, ev []Closed) []Closed {
	for t.lru.Len() > t.cfg.MaxSessions {
		t.stats.SessionsEvicted++
		switch v := t.lru.Back().Value.(type) {
		case *sessionState:
			if v.traceOnly() && len(v.open) == 0 {
				// A trace's session kept open for its next requests (traceSession),
				// none open: no turn is cut. It ends as single_trace when its root
				// arrived; otherwise as max_sessions, so that its trace's next request
				// continues it (docs/decisions/sessions.md §2.4.1).
				reason := session.EndReasonMaxSessions
				if v.traceDone {
					reason = session.EndReasonSingleTrace
				}
				ev = t.endSession(v, reason, false, now, ev)
				continue
			}
			ev = t.endSession(v, session.EndReasonMaxSessions, true, now, ev)
		case *traceState:
			ev = t.closeTrace(v, session.EndReasonMaxSessions, now, ev)
		}
	}
	return ev
}

// partialClose reports whether tr's turn, closed for force ("" for settle or
// turn_timeout), is cut short: closed by a limit, a shutdown or a restart, or closed
// without its root record. A trace whose top span has a remote parent (called with a
// W3C traceparent from a process that does not export here) never gets a root record,
// but its spans are whole once they are quiet: closed by turn_timeout or with its idle or
// ended session, it is not partial. It is no root on arrival: the caller's process may
// export here too, its spans arriving later (a remote agent over A2A, a tool server), and
// a turn closed turn_settle after the callee's spans would be judged from them alone.
func (tr *traceState) partialClose(force session.EndReason, hasRoot bool) bool {
	switch {
	case force == "" && hasRoot:
		return false
	case tr.remoteTop && (force == "" || force == session.EndReasonSessionTimeout || force == session.EndReasonEndSignal):
		return false
	}
	return true
}

// closeTrace closes an open trace's turn, or its turns when the application runs a
// conversation inside the trace (splitTrace; docs/decisions/sessions.md §2.4.1). force is
// "" for a natural close (settle or timeout; Partial when the root never arrived), else
// the reason of an early close (the turn is Partial, and a trace without session key
// ends its own session with that reason). On a natural close, the records of a request
// still running (splitTrace's rest) stay open as the trace's next turn.
func (t *Tracker) closeTrace(tr *traceState, force session.EndReason, now time.Time, ev []Closed) []Closed {
	n := tr.recs.n
	hasRoot, genAI := tr.hasRoot(), tr.genAI
	t.stats.RetainedSpans -= n
	s := tr.sess
	var recs []session.SpanRecord
	if genAI {
		recs = tr.recs.records(tr.id, &t.vocab)
	}
	t.forget(tr)
	if !genAI {
		t.stats.SpansDiscarded += uint64(n)
		if s != nil && tr.outcome != nil {
			s.outcome = tr.outcome
		}
		return ev
	}
	sp := splitTrace(recs)
	var restTurn bool
	switch {
	case len(sp.rest) > 0 && force != "":
		// Closed early: the unfinished turn closes with the others.
		sp.closeRest(true)
		restTurn = true
	case len(sp.turns) == 1 && len(sp.rest) > 0 && !hasRoot:
		// No request of the trace is known to be whole: it closes as one turn.
		sp.closeRest(false)
	}
	// A trace whose root has not arrived may hold a conversation: its later records
	// (after sp.end) are its next turns. Not the part of a trace that a caller in another
	// process started (its process's whole part: later records are late, as before).
	continues := !sp.complete && !tr.remoteTop
	split := len(sp.turns) > 1 || len(sp.rest) > 0
	t.stats.SpansDiscarded += uint64(len(sp.around))
	if s == nil {
		if continues && force == "" {
			s = t.traceSession(tr, now)
			if tr.endSignal {
				t.signal(s)
			}
		} else {
			// Ended with this turn: in none of the timer lists.
			s = &sessionState{id: tr.id, keySource: session.KeySourceTraceID, service: tr.service, byTrace: true,
				open: map[string]*traceState{}}
		}
	}
	if k := len(s.closedTraces); k == 0 || s.closedTraces[k-1] != tr.id {
		s.closedTraces = append(s.closedTraces, tr.id)
	}
	c := t.closed[tr.id]
	if c == nil {
		c = &closedTurn{continues: true}
		t.closed[tr.id] = c
	}
	// Once its root arrived (late) or its top was found remote, a trace never goes on.
	c.sess, c.end, c.continues = s, max(c.end, sp.end), continues && c.continues
	if c.continues {
		// A later record whose parent is one of these is theirs (a call the agent made
		// after it answered), not a new request.
		if c.spans == nil {
			c.spans = map[string]struct{}{}
		}
		for _, turn := range sp.turns {
			for i := range turn {
				c.spans[strings.Clone(turn[i].SpanID)] = struct{}{}
			}
		}
	} else {
		c.spans = nil
	}
	for i, turn := range sp.turns {
		// A request that another one followed is whole; the last has its root when the
		// trace's did arrive (not the rest of a request cut short).
		root := hasRoot
		if split && i < len(sp.turns)-1 {
			root = true
		} else if restTurn {
			root = false
		}
		t.stats.SpansAssembled += uint64(len(turn))
		t.stats.TurnsClosed++
		cl := Closed{kind: EventTurnClosed, sess: s, Records: turn, partial: tr.partialClose(force, root), ex: t.cfg.Extractor}
		if session.CollectorCut(force) && !root {
			cl.cut = force // a turn whose root arrived has its answer: it is judged
		}
		ev = append(ev, cl)
	}
	if len(sp.rest) > 0 {
		t.reopen(tr.id, sp.end, s, tr.key, sp.rest, now)
	}
	if s.byTrace {
		if force != "" {
			return t.endSession(s, force, true, now, ev)
		}
		return t.endSession(s, session.EndReasonSingleTrace, false, now, ev)
	}
	return ev
}

// openTrace starts tracking trace id (a string of the Tracker's own): a pending trace
// until a record names its session.
func (t *Tracker) openTrace(id string, now time.Time) *traceState {
	tr := &traceState{id: id, firstSeen: now}
	tr.seen.v = tr
	t.traces[id] = tr
	tr.elem = t.lru.PushFront(tr)
	t.pending++
	return tr
}

// reopen opens the next turn of trace id, whose earlier turns closed with records up to
// after (ns since the Unix epoch), in session s when it is still open (key is the
// session key the trace joined by), and retains recs in it.
func (t *Tracker) reopen(id string, after int64, s *sessionState, key string, recs []session.SpanRecord, now time.Time) *traceState {
	tr := t.openTrace(id, now)
	tr.after, tr.next = after, true
	if s != nil && !s.ended && !s.byTrace {
		t.attach(tr, s.id, key, s.service, now)
	}
	for i := range recs {
		t.retain(tr, &recs[i], now)
	}
	return tr
}

// traceOnly reports whether s is a session keyed by the id of a trace that may hold a
// conversation (traceSession).
func (s *sessionState) traceOnly() bool {
	return !s.byTrace && s.keySource == session.KeySourceTraceID
}

// traceSession opens a session keyed by trace tr's id for a trace without session key
// that may hold a conversation (its root has not arrived): the trace's next turns join
// it until session_timeout of silence, or until the trace's root arrives (late).
func (t *Tracker) traceSession(tr *traceState, now time.Time) *sessionState {
	if s := t.sessions[tr.id]; s != nil {
		return s
	}
	s := &sessionState{id: tr.id, keySource: session.KeySourceTraceID, service: tr.service, open: map[string]*traceState{}}
	s.created.v, s.active.v = s, s
	t.byCreated.set(&s.created, now)
	t.activate(s, now)
	t.sessions[s.id] = s
	s.elem = t.lru.PushFront(s)
	return s
}

// turnEvent is the EventTurnClosed of s's last closed turn: a window snapshot holding
// the previous turn (when there is one) and that turn, with the session's agents so
// far. Its cost does not depend on the number of turns.
func (t *Tracker) turnEvent(s *sessionState) Event {
	n := len(s.turns)
	window := s.turns[max(0, n-2):]
	as := &session.AgentSession{
		ID:        s.id,
		KeySource: s.keySource,
		Service:   s.service,
		Turns:     make([]session.Turn, len(window)),
		Agents:    t.agentsOf(s),
	}
	for i, tu := range window {
		as.Turns[i] = tu.turn
		as.TotalLatencyMs += tu.turn.LatencyMs
		as.Usage.Add(tu.turn.Usage)
	}
	last := window[len(window)-1]
	as.StartedAt, as.EndedAt = last.turn.StartedAt, last.turn.EndedAt
	var outcome *bool
	if last.outcome != nil {
		v := *last.outcome
		outcome = &v
	}
	return Event{Kind: EventTurnClosed, Session: as, TurnIndex: len(window) - 1, TurnOutcome: outcome,
		EarlierOpen: s.openBefore(last.turn.StartedAt)}
}

// openBefore reports whether one of s's open turns started before at (a zero at: none):
// an open trace with a GenAI span (a trace without one, such as a websocket or HTTP
// span that names the session, is no turn). Its cost is that of the session's open
// traces, not of its closed turns.
func (s *sessionState) openBefore(at time.Time) bool {
	if at.IsZero() {
		return false
	}
	ns := at.UnixNano()
	for _, tr := range s.open {
		if tr.genAI && tr.start != 0 && tr.start < ns {
			return true
		}
	}
	return false
}

// Closed is something the Tracker decided that Finish completes: a turn closed (its
// trace's records are handed out, to be assembled outside the caller's lock) or a
// session ended. Complete them with Finish, in the order they were returned.
type Closed struct {
	kind EventKind
	sess *sessionState
	// Records are the closed trace's records (a closed turn), in arrival order.
	Records []session.SpanRecord
	partial bool // the turn closed early or without its root
	// cut is the limit or shutdown that closed the turn early (session.Turn.CutBy).
	cut session.EndReason
	// ex completes the records' deferred message lists (Config.Extractor).
	ex  *conventions.Extractor
	asm *assembly.TurnAssembly
	// session end
	reason         session.EndReason
	sessionPartial bool
}

// Assemble completes a closed turn's records (the message lists the ingest left raw,
// Config.Extractor) and assembles them (assembly.Assemble). It reads and writes no
// Tracker state, so the caller may run it outside its lock and concurrently for
// different values. Finish assembles what was not.
func (c *Closed) Assemble() {
	if c.kind == EventTurnClosed && c.asm == nil {
		cmp.Or(c.ex, defaultExtractor).CompleteAll(c.Records)
		a := assembly.Assemble(c.Records)
		c.asm = &a
		// The assembly holds nothing of the record slice (it copies what it keeps):
		// the slice goes back to the pool for a later closed trace.
		putRecords(c.Records)
		c.Records = nil
	}
}

// defaultExtractor completes deferred records when Config.Extractor is nil.
var defaultExtractor = conventions.NewExtractor(conventions.Config{})

// maxPooledRecords bounds the record slices kept for reuse (784 bytes a record): a rare
// huge trace does not keep its slice alive.
const maxPooledRecords = 1024

// recordsPool holds the []SpanRecord of assembled turns for traceRecords.records: a closed
// trace's records are decoded into a slice of tens of kilobytes, of pointer-bearing
// structs, which is dropped as soon as the turn is assembled.
var recordsPool sync.Pool // of *[]SpanRecord, cleared, length 0

// getRecords returns a zeroed slice of n records, reused when the pool has one large
// enough.
func getRecords(n int) []session.SpanRecord {
	if v, ok := recordsPool.Get().(*[]session.SpanRecord); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]session.SpanRecord, n)
}

// putRecords clears recs (so that it pins no strings) and pools it.
func putRecords(recs []session.SpanRecord) {
	if cap(recs) == 0 || cap(recs) > maxPooledRecords {
		return
	}
	clear(recs)
	recs = recs[:0]
	recordsPool.Put(&recs)
}

// Finish completes closed turns and ended sessions, in order, into events: a turn gets
// its stable index and joins its session's turns (agents merged), a session's end
// event snapshots all its turns. The cost of a turn does not depend on how many turns
// its session has.
func (t *Tracker) Finish(cs []Closed) []Event {
	var ev []Event
	// A turn closed later in cs may have started before an earlier one of its session
	// (closed by turn_timeout and by settle in one step): it is open for that one
	// (Event.EarlierOpen). laterStart[i] is the earliest start of the turns after cs[i]
	// in its session (ns since the Unix epoch, 0: none).
	var laterStart []int64
	if len(cs) > 1 {
		laterStart = make([]int64, len(cs))
		earliest := map[*sessionState]int64{}
		for i := len(cs) - 1; i >= 0; i-- {
			c := &cs[i]
			if c.kind != EventTurnClosed {
				continue
			}
			c.Assemble()
			laterStart[i] = earliest[c.sess]
			if st := c.asm.Turn.StartedAt; !st.IsZero() {
				if e := earliest[c.sess]; e == 0 || st.UnixNano() < e {
					earliest[c.sess] = st.UnixNano()
				}
			}
		}
	}
	for i := range cs {
		c := &cs[i]
		s := c.sess
		switch c.kind {
		case EventTurnClosed:
			c.Assemble()
			turn := c.asm.Turn
			turn.Partial = turn.Partial || c.partial
			if c.partial {
				turn.CutBy = c.cut
			}
			turn.Index = s.closedTurns
			s.closedTurns++
			tu := turnState{turn: turn, agents: c.asm.Agents, outcome: c.asm.Outcome, cost: c.asm.Cost}
			s.addTotals(&tu)
			if k := t.cfg.RetainTurns; k > 0 && len(s.turns) >= max(k, 2) {
				// Drop the oldest in place: the window of later events stays valid,
				// earlier snapshots hold copies.
				s.turns = append(s.turns[:0], s.turns[len(s.turns)-max(k, 2)+1:]...)
			}
			s.turns = append(s.turns, tu)
			t.mergeAgents(s, c.asm.Agents)
			e := t.turnEvent(s)
			if laterStart != nil && laterStart[i] != 0 && !turn.StartedAt.IsZero() && laterStart[i] < turn.StartedAt.UnixNano() {
				e.EarlierOpen = true
			}
			ev = append(ev, e)
		case EventSessionEnded:
			ev = append(ev, Event{Kind: EventSessionEnded, Session: t.snapshot(s, c.sessionPartial, c.reason)})
		}
	}
	return ev
}

// endSession closes the session's open turns (as partial) and ends it. A session that
// has no turn is not reported, unless it got an explicit outcome: a trace without GenAI
// spans that names an ended session with agent_eval.task.completed (the channel's submit
// after session_timeout or a restart) ends it again, and the processor makes a new
// revision of its stored turns with that outcome.
func (t *Tracker) endSession(s *sessionState, reason session.EndReason, partial bool, now time.Time, ev []Closed) []Closed {
	open := slices.SortedFunc(maps.Values(s.open), turnOrder)
	for _, tr := range open {
		ev = t.closeTrace(tr, reason, now, ev)
	}
	if !s.byTrace {
		t.dropSession(s)
	}
	if s.elem != nil {
		t.lru.Remove(s.elem)
		s.elem = nil
	}
	for _, id := range s.closedTraces {
		if c, ok := t.closed[id]; ok && c.sess == s {
			c.sess = nil
			t.closedFIFO = append(t.closedFIFO, expiry{trace: id, at: now.Add(t.cfg.TurnTimeout)})
		}
	}
	if len(s.closedTraces) == 0 && s.outcome == nil {
		t.stats.EmptySessions++
		return ev
	}
	return append(ev, Closed{kind: EventSessionEnded, sess: s, reason: reason, sessionPartial: partial})
}

// Advance applies the timers at time now: turns whose settle or timeout passed close,
// then sessions end (max_session_duration, end signal, session_timeout). Events are
// ordered: turns by first arrival then trace id, sessions by id. It is
// Finish(AdvanceClosing(now)).
func (t *Tracker) Advance(now time.Time) []Event {
	return t.Finish(t.AdvanceClosing(now))
}

// AdvanceClosing is Advance without the assembly of the turns it closes (see
// ObserveClosing).
func (t *Tracker) AdvanceClosing(now time.Time) []Closed {
	t.tick(now)
	t.expire(now)
	var ev []Closed
	for _, tr := range t.dueTraces(now) {
		ev = t.closeTrace(tr, "", now, ev)
	}
	for _, s := range t.endingSessions(now) {
		switch {
		case now.Sub(s.created.at) >= t.cfg.MaxSessionDuration:
			ev = t.endSession(s, session.EndReasonMaxDuration, true, now, ev)
		case s.traceDone && len(s.open) == 0:
			ev = t.endSession(s, session.EndReasonSingleTrace, false, now, ev)
		case s.endSignal && len(s.open) == 0:
			ev = t.endSession(s, session.EndReasonEndSignal, false, now, ev)
		default:
			ev = t.endSession(s, session.EndReasonSessionTimeout, false, now, ev)
		}
	}
	// A trace's next turn or session opened here (reopen, traceSession) counts too.
	return t.evict(now, ev)
}

// dueTraces returns the open traces whose turn closes at now, in turnOrder: silent for
// turn_timeout, or for turn_settle once their root arrived. Only the traces silent for
// at least the wait of their kind can be due: the front of rooted and unrooted.
func (t *Tracker) dueTraces(now time.Time) []*traceState {
	due := t.rooted.until(now, min(t.cfg.TurnSettle, t.cfg.TurnTimeout), nil)
	due = t.unrooted.until(now, t.cfg.TurnTimeout, due)
	slices.SortFunc(due, turnOrder)
	return due
}

// timers returns the list that orders the open trace tr: rooted once its root arrived
// (hasRoot), else unrooted.
func (t *Tracker) timers(tr *traceState) *timeList[*traceState] {
	if tr.hasRoot() {
		return &t.rooted
	}
	return &t.unrooted
}

// endingSessions returns the open sessions that end at now, by id: those that reached
// max_session_duration (the front of byCreated), those that received an end signal and
// have no open turn left, and those idle for session_timeout (the front of byActive;
// the open turns of a silent session, a run that crashed before its root span ended,
// close as partial with it, not at turn_timeout).
func (t *Tracker) endingSessions(now time.Time) []*sessionState {
	ending := t.byCreated.until(now, t.cfg.MaxSessionDuration, nil)
	ending = t.byActive.until(now, t.cfg.SessionTimeout, ending)
	t.signalled = slices.DeleteFunc(t.signalled, func(s *sessionState) bool {
		if s.ended {
			return true
		}
		if len(s.open) == 0 {
			ending = append(ending, s)
		}
		return false
	})
	slices.SortFunc(ending, func(x, y *sessionState) int { return cmp.Compare(x.id, y.id) })
	// Open sessions have distinct ids: a session found by two rules is listed twice in
	// a row.
	return slices.Compact(ending)
}

// activate records that the open session s was active at now. A session that is not
// among the open ones (keyed by its trace, or ended) never enters the timers.
func (t *Tracker) activate(s *sessionState, now time.Time) {
	if !s.byTrace && !s.ended {
		t.byActive.set(&s.active, now)
	}
}

// signal records that the open session s received an end signal: it ends once it has no
// open turn (AdvanceClosing).
func (t *Tracker) signal(s *sessionState) {
	if !s.endSignal {
		s.endSignal = true
		t.signalled = append(t.signalled, s)
	}
}

// dropSession removes the open session s from the Tracker's sessions and timers.
func (t *Tracker) dropSession(s *sessionState) {
	delete(t.sessions, s.id)
	t.byCreated.remove(&s.created)
	t.byActive.remove(&s.active)
	s.ended = true
}

// markDead records that the trace id (a string of the Tracker's own) was closed by
// max_spans_per_session, or received a record since, at now.
func (t *Tracker) markDead(id string, now time.Time) {
	if at := t.deadTraces[id]; at != nil {
		*at = now
		return
	}
	t.deadTraces[id] = &now
}

// expire forgets closed traces and max_spans tombstones whose time has passed.
func (t *Tracker) expire(now time.Time) {
	n := 0
	for _, e := range t.closedFIFO {
		if e.at.After(now) {
			break
		}
		if c, ok := t.closed[e.trace]; ok && c.sess == nil {
			delete(t.closed, e.trace)
		}
		n++
	}
	t.closedFIFO = slices.Delete(t.closedFIFO, 0, n)
	for k, at := range t.deadSessions {
		if now.Sub(at) >= t.cfg.SessionTimeout {
			delete(t.deadSessions, k)
		}
	}
	for k, at := range t.deadTraces {
		if now.Sub(*at) >= t.cfg.SessionTimeout {
			delete(t.deadTraces, k)
		}
	}
}

// CloseAll closes every open turn and session as partial with the given end reason
// (EndReasonShutdown at shutdown): sessions by id, then traces without a session key by
// trace id.
func (t *Tracker) CloseAll(reason session.EndReason) []Event {
	return t.Finish(t.CloseAllClosing(reason))
}

// CloseAllClosing is CloseAll without the assembly of the turns it closes (see
// ObserveClosing).
func (t *Tracker) CloseAllClosing(reason session.EndReason) []Closed {
	var ev []Closed
	for _, id := range slices.Sorted(maps.Keys(t.sessions)) {
		ev = t.endSession(t.sessions[id], reason, true, t.now, ev)
	}
	for _, id := range slices.Sorted(maps.Keys(t.traces)) {
		ev = t.closeTrace(t.traces[id], reason, t.now, ev)
	}
	return ev
}

// IsOpen reports whether a session with this id is open (it received a record and has not
// ended).
func (t *Tracker) IsOpen(id string) bool {
	_, ok := t.sessions[id]
	return ok
}

// Stats returns the current state and counters.
func (t *Tracker) Stats() Stats {
	s := t.stats
	s.OpenSessions = len(t.sessions)
	s.OpenTurns = len(t.traces)
	s.PendingTraces = t.pending
	return s
}

// snapshot builds the AgentSession view of s.
func (t *Tracker) snapshot(s *sessionState, partial bool, reason session.EndReason) *session.AgentSession {
	as := &session.AgentSession{
		ID:             s.id,
		KeySource:      s.keySource,
		Service:        s.service,
		Turns:          make([]session.Turn, len(s.turns)),
		Partial:        partial,
		EndReason:      reason,
		TotalLatencyMs: s.latencyMs,
		Usage:          s.usage,
		StartedAt:      s.startedAt,
		EndedAt:        s.endedAt,
	}
	for i, tu := range s.turns {
		as.Turns[i] = tu.turn
	}
	if s.costSeen {
		cost := s.cost
		as.TotalCost = &cost
	}
	if s.outcome != nil {
		v := *s.outcome
		as.Outcome = &v
	}
	as.Agents = t.agentsOf(s)
	return as
}

// addTotals adds a closed turn to the session's totals: latency and usage sums, cost,
// the last explicit outcome, the earliest start and the latest end.
func (s *sessionState) addTotals(tu *turnState) {
	s.latencyMs += tu.turn.LatencyMs
	s.usage.Add(tu.turn.Usage)
	if tu.cost != nil {
		s.cost += *tu.cost
		s.costSeen = true
	}
	if tu.outcome != nil {
		s.outcome = tu.outcome
	}
	if st := tu.turn.StartedAt; !st.IsZero() && (s.startedAt.IsZero() || st.Before(s.startedAt)) {
		s.startedAt = st
	}
	if en := tu.turn.EndedAt; en.After(s.endedAt) {
		s.endedAt = en
	}
}

// agentsOf returns a copy of the session's merged agents.
func (t *Tracker) agentsOf(s *sessionState) []session.AgentDefinition {
	out := make([]session.AgentDefinition, len(s.agents))
	for i, d := range s.agents {
		out[i] = cloneAgent(d)
	}
	return out
}

// mergeAgents merges the agents a closed turn learned into the session's, which lists
// them in order of first appearance: the registry definition for a configured agent
// (its tools win; its handoff targets when it declares any), else the union of what
// the turns learned. Its cost depends on the turn's agents only.
func (t *Tracker) mergeAgents(s *sessionState, agents []session.AgentDefinition) {
	if s.agentPos == nil {
		s.agentPos, s.fromRegistry = map[string]int{}, map[string]bool{}
	}
	for _, d := range agents {
		i, ok := s.agentPos[d.ID]
		if !ok {
			s.agentPos[d.ID] = len(s.agents)
			if reg := t.registry[d.ID]; reg != nil {
				c := cloneAgent(*reg)
				c.ID = d.ID
				c.Name = cmp.Or(c.Name, d.Name)
				c.Description = cmp.Or(c.Description, d.Description)
				if len(c.HandoffTargets) == 0 {
					c.HandoffTargets = slices.Clone(d.HandoffTargets)
				}
				s.fromRegistry[d.ID] = true
				s.agents = append(s.agents, c)
			} else {
				s.agents = append(s.agents, cloneAgent(d))
			}
			continue
		}
		if s.fromRegistry[d.ID] {
			continue
		}
		m := &s.agents[i]
		m.Description = cmp.Or(m.Description, d.Description)
		m.AddTools(d.Tools)
		if d.ToolsSource != "" {
			m.ToolsSource = d.ToolsSource
		}
		m.HandoffTargets = append(m.HandoffTargets, d.HandoffTargets...)
		slices.Sort(m.HandoffTargets)
		m.HandoffTargets = slices.Compact(m.HandoffTargets)
	}
}

// cloneAgent copies d so that merging never writes into a shared slice.
func cloneAgent(d session.AgentDefinition) session.AgentDefinition {
	d.Tools = append([]session.ToolDefinition{}, d.Tools...)
	d.HandoffTargets = slices.Clone(d.HandoffTargets)
	return d
}
