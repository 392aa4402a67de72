// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Id prefixes (SafeMolt's).
const (
	PrefixRegistration = "eval_reg_"
	PrefixSession      = "eval_sess_"
	PrefixParticipant  = "eval_part_"
	PrefixMessage      = "eval_msg_"
	PrefixResult       = "eval_res_"
)

// Defaults of Options.
const (
	// DefaultMaxContentBytes bounds one message's content: 64 KiB.
	DefaultMaxContentBytes = 64 << 10
	// DefaultMaxSessionMessages bounds the messages of one session.
	DefaultMaxSessionMessages = 10000
	// DefaultPageSize and MaxPageSize bound the count of a page of GET messages, of a
	// transcript and of the pending list.
	DefaultPageSize = 500
	MaxPageSize     = 5000
	// DefaultMaxPageBytes bounds the content bytes of a page of GET messages and of a
	// transcript: 4 MiB (64 messages of DefaultMaxContentBytes).
	DefaultMaxPageBytes = 4 << 20
	// TurnWindow is how many earlier messages Post reads to find where the current
	// turn started: a turn's user side holds at most this many messages and the posted
	// one (the end of a session reads the same window for its last message).
	TurnWindow = 64
	// maxAgentIDBytes bounds agent ids and names.
	maxAgentIDBytes = 128
)

// Options configure New.
type Options struct {
	Store       Store
	Definitions []Definition
	// MaxContentBytes bounds a message's content (DefaultMaxContentBytes when 0).
	MaxContentBytes int
	// MaxSessionMessages bounds the messages of one session (DefaultMaxSessionMessages
	// when 0).
	MaxSessionMessages int
	// MaxPageBytes bounds the content bytes of a page of messages or of a transcript
	// (DefaultMaxPageBytes when 0); a message larger than it is a page alone.
	MaxPageBytes int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service is the channel: every operation checks the caller and the state, then calls
// the Store. Safe for concurrent use.
type Service struct {
	store      Store
	defs       map[string]Definition
	order      []Definition
	maxContent int
	maxMsgs    int64
	maxPage    int
	now        func() time.Time
}

// New returns a Service over opts.Store serving opts.Definitions (validated; ids unique).
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("channel: nil store")
	}
	s := &Service{store: opts.Store, defs: map[string]Definition{}, maxContent: opts.MaxContentBytes, now: opts.Now}
	if s.maxContent <= 0 {
		s.maxContent = DefaultMaxContentBytes
	}
	if s.maxMsgs = int64(opts.MaxSessionMessages); s.maxMsgs <= 0 {
		s.maxMsgs = DefaultMaxSessionMessages
	}
	if s.maxPage = opts.MaxPageBytes; s.maxPage <= 0 {
		s.maxPage = DefaultMaxPageBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, d := range opts.Definitions {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("channel: evaluation %q: %w", d.ID, err)
		}
		if _, dup := s.defs[d.ID]; dup {
			return nil, fmt.Errorf("channel: duplicate evaluation id %q", d.ID)
		}
		s.defs[d.ID] = d
		s.order = append(s.order, d)
	}
	return s, nil
}

func (s *Service) clock() time.Time { return s.now().UTC() }

// The store removes NUL bytes (a PostgreSQL text column cannot hold them), so the
// service decides what a NUL means before anything is stored or answered: an id with a
// NUL is refused (checkID; stored without it, it would be another id: "proctor-\x007"
// would be proctor-7), and text (content, feedback, an agent's name) is answered and sent
// on as stored (withoutNUL).

// checkID refuses an id (field names it) that is not UTF-8 or holds a NUL byte: the
// store would look up or store another id.
func checkID(field, id string) error {
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return errorf(ErrInvalid, "%s: must not contain NUL bytes and must be UTF-8", field)
	}
	return nil
}

// withoutNUL is valid text as the store keeps it (internal/store's cleanText also
// repairs invalid UTF-8, which the callers refuse instead).
func withoutNUL(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// IssueKey creates the agent (or renames it when name is set) and returns a new API key
// for it; the key is shown once and stored only as a hash. Earlier keys stay valid.
func (s *Service) IssueKey(ctx context.Context, agentID, name string) (Agent, string, error) {
	agentID = strings.TrimSpace(agentID)
	if err := checkID("agent_id", agentID); err != nil {
		return Agent{}, "", err
	}
	if agentID == "" || len(agentID) > maxAgentIDBytes {
		return Agent{}, "", errorf(ErrInvalid, "agent_id: must be 1-%d bytes of UTF-8", maxAgentIDBytes)
	}
	name = withoutNUL(name)
	if len(name) > maxAgentIDBytes || !utf8.ValidString(name) {
		return Agent{}, "", errorf(ErrInvalid, "name: must be at most %d bytes of UTF-8", maxAgentIDBytes)
	}
	now := s.clock()
	a := Agent{ID: agentID, Name: cmp.Or(name, agentID), CreatedAt: now}
	if prev, err := s.store.Agent(ctx, agentID); err == nil && name == "" {
		a.Name = prev.Name
	}
	key, keyID, hash := newKey()
	if err := s.store.PutAgent(ctx, a, APIKey{KeyID: keyID, AgentID: agentID, Hash: hash, CreatedAt: now}); err != nil {
		return Agent{}, "", err
	}
	return a, key, nil
}

// Authenticate returns the agent owning key; ErrUnauthorized for a missing, malformed,
// unknown or wrong key (the secret's hash is compared in constant time).
func (s *Service) Authenticate(ctx context.Context, key string) (Agent, error) {
	if key == "" {
		return Agent{}, errorf(ErrUnauthorized, "missing API key: send Authorization: Bearer <api_key>")
	}
	keyID, hash, ok := parseKey(key)
	if !ok {
		return Agent{}, errorf(ErrUnauthorized, "invalid API key")
	}
	stored, agent, err := s.store.AgentKey(ctx, keyID)
	if errors.Is(err, ErrNotFound) {
		keyMatches(dummyHash[:], hash) // the same work as for a known key id
		return Agent{}, errorf(ErrUnauthorized, "invalid API key")
	}
	if err == nil && !keyMatches(stored.Hash, hash) {
		return Agent{}, errorf(ErrUnauthorized, "invalid API key")
	}
	if err != nil {
		return Agent{}, err
	}
	return agent, nil
}

// Definitions returns the served evaluations in configuration order.
func (s *Service) Definitions() []Definition { return s.order }

// Definition returns one evaluation; ErrNotFound if it is not served.
func (s *Service) Definition(id string) (Definition, error) {
	d, ok := s.defs[id]
	if !ok {
		return Definition{}, errorf(ErrNotFound, "evaluation %q not found", id)
	}
	return d, nil
}

func (s *Service) definitionOfKind(id string, k Kind) (Definition, error) {
	d, err := s.Definition(id)
	if err != nil {
		return d, err
	}
	if d.Type != k {
		return d, errorf(ErrInvalid, "evaluation %q is %s, not %s", id, d.Type, k)
	}
	return d, nil
}

// Register registers the caller as a candidate of a proctored evaluation. ErrConflict
// (with the existing registration) when it already has an active one.
func (s *Service) Register(ctx context.Context, caller Agent, evaluationID string) (Registration, error) {
	if _, err := s.definitionOfKind(evaluationID, KindProctored); err != nil {
		return Registration{}, err
	}
	r := Registration{ID: newID(PrefixRegistration), EvaluationID: evaluationID, AgentID: caller.ID,
		Status: RegistrationRegistered, RegisteredAt: s.clock()}
	return s.store.Register(ctx, r)
}

// Start moves the caller's registration to in_progress, where proctors see it.
func (s *Service) Start(ctx context.Context, caller Agent, evaluationID string) (Registration, error) {
	if _, err := s.definitionOfKind(evaluationID, KindProctored); err != nil {
		return Registration{}, err
	}
	return s.store.StartRegistration(ctx, evaluationID, caller.ID, s.clock())
}

// Pending lists the registrations a proctor can claim (never the caller's own).
func (s *Service) Pending(ctx context.Context, caller Agent, evaluationID string, limit int) ([]Pending, error) {
	if _, err := s.definitionOfKind(evaluationID, KindProctored); err != nil {
		return nil, err
	}
	return s.store.PendingRegistrations(ctx, evaluationID, caller.ID, pageSize(limit))
}

// Claimed is the answer to a claim.
type Claimed struct {
	SessionID        string  `json:"session_id"`
	RegistrationID   string  `json:"registration_id"`
	CandidateAgentID string  `json:"candidate_agent_id"`
	CandidateName    string  `json:"candidate_name"`
	Session          Session `json:"-"`
}

// Claim creates the proctored session of a registration with the caller as proctor.
// Checks: the evaluation is proctored (ErrInvalid); the registration exists and belongs
// to it (ErrNotFound); the caller is not the candidate (ErrForbidden); the registration is
// in_progress, has no result and no session (ErrConflict: of two proctors claiming at
// once exactly one wins).
func (s *Service) Claim(ctx context.Context, caller Agent, evaluationID, registrationID string) (Claimed, error) {
	if _, err := s.definitionOfKind(evaluationID, KindProctored); err != nil {
		return Claimed{}, err
	}
	if registrationID == "" {
		return Claimed{}, errorf(ErrInvalid, "registration_id: required")
	}
	if err := checkID("registration_id", registrationID); err != nil {
		return Claimed{}, err
	}
	reg, err := s.registration(ctx, evaluationID, registrationID)
	if err != nil {
		return Claimed{}, err
	}
	if reg.AgentID == caller.ID {
		return Claimed{}, errorf(ErrForbidden, "a proctor cannot claim its own registration")
	}
	if reg.Status != RegistrationInProgress {
		return Claimed{}, errorf(ErrConflict, "registration %q is %s, not in_progress", reg.ID, reg.Status)
	}
	now := s.clock()
	sess := Session{ID: newID(PrefixSession), EvaluationID: evaluationID, Kind: KindProctored,
		RegistrationID: reg.ID, Status: SessionActive, StartedAt: now,
		Participants: []Participant{
			{ID: newID(PrefixParticipant), AgentID: caller.ID, Role: RoleProctor, JoinedAt: now},
			{ID: newID(PrefixParticipant), AgentID: reg.AgentID, Role: RoleCandidate, JoinedAt: now},
		}}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return Claimed{}, err
	}
	name := reg.AgentID
	if a, err := s.store.Agent(ctx, reg.AgentID); err == nil {
		name = a.Name
	}
	return Claimed{SessionID: sess.ID, RegistrationID: reg.ID, CandidateAgentID: reg.AgentID, CandidateName: name, Session: sess}, nil
}

func (s *Service) registration(ctx context.Context, evaluationID, id string) (Registration, error) {
	reg, err := s.store.Registration(ctx, id)
	if err == nil && reg.EvaluationID != evaluationID {
		err = errorf(ErrNotFound, "registration %q not found in evaluation %q", id, evaluationID)
	}
	return reg, err
}

// CreateLiveSession opens a live class work session with the caller as its host.
func (s *Service) CreateLiveSession(ctx context.Context, caller Agent, evaluationID string) (Session, error) {
	if _, err := s.definitionOfKind(evaluationID, KindLiveClassWork); err != nil {
		return Session{}, err
	}
	now := s.clock()
	sess := Session{ID: newID(PrefixSession), EvaluationID: evaluationID, Kind: KindLiveClassWork,
		Status: SessionActive, StartedAt: now,
		Participants: []Participant{{ID: newID(PrefixParticipant), AgentID: caller.ID, Role: RoleHost, JoinedAt: now}}}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return Session{}, err
	}
	return sess, nil
}

// Join adds the caller to an active live class work session as a participant
// (ErrConflict if it is already in it or the session ended).
func (s *Service) Join(ctx context.Context, caller Agent, evaluationID, sessionID string) (Session, error) {
	sess, err := s.session(ctx, evaluationID, sessionID)
	if err != nil {
		return Session{}, err
	}
	if sess.Kind != KindLiveClassWork {
		return Session{}, errorf(ErrInvalid, "only live_class_work sessions can be joined; proctored sessions are created by a claim")
	}
	p := Participant{ID: newID(PrefixParticipant), AgentID: caller.ID, Role: RoleParticipant, JoinedAt: s.clock()}
	if err := s.store.AddParticipant(ctx, sess.ID, p); err != nil {
		return Session{}, err
	}
	sess.Participants = append(sess.Participants, p)
	return sess, nil
}

// EndLiveSession ends a live class work session; only its host may (ErrForbidden), once
// (ErrConflict).
func (s *Service) EndLiveSession(ctx context.Context, caller Agent, evaluationID, sessionID string) (Ended, error) {
	sess, err := s.session(ctx, evaluationID, sessionID)
	if err != nil {
		return Ended{}, err
	}
	if sess.Kind != KindLiveClassWork {
		return Ended{}, errorf(ErrInvalid, "a proctored session ends with the proctor's submit")
	}
	if p, ok := sess.Participant(caller.ID); !ok || p.Role != RoleHost {
		return Ended{}, errorf(ErrForbidden, "only the session's host can end it")
	}
	if err := s.store.EndSession(ctx, sess.ID, s.clock()); err != nil {
		return Ended{}, err
	}
	ended, open, err := s.endedSession(ctx, sess.ID)
	if err != nil {
		return Ended{}, err
	}
	return Ended{Session: ended, Open: open}, nil
}

func (s *Service) session(ctx context.Context, evaluationID, sessionID string) (Session, error) {
	if _, err := s.Definition(evaluationID); err != nil {
		return Session{}, err
	}
	if err := checkID("session_id", sessionID); err != nil {
		return Session{}, err
	}
	sess, err := s.store.Session(ctx, sessionID)
	if err == nil && sess.EvaluationID != evaluationID {
		err = errorf(ErrNotFound, "session %q not found in evaluation %q", sessionID, evaluationID)
	}
	return sess, err
}

// IsSession reports whether id is the id of a channel session, of any evaluation and in
// any state. An id no session can have (without PrefixSession, not UTF-8, with a NUL byte)
// is none and costs no store read; an error is a storage failure.
func (s *Service) IsSession(ctx context.Context, id string) (bool, error) {
	if !strings.HasPrefix(id, PrefixSession) || checkID("session_id", id) != nil {
		return false, nil // every session id is PrefixSession and random hex
	}
	_, err := s.store.Session(ctx, id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// Session returns a session's metadata and participants to any authenticated agent.
func (s *Service) Session(ctx context.Context, _ Agent, evaluationID, sessionID string) (Session, error) {
	return s.session(ctx, evaluationID, sessionID)
}

// Turn is where a posted message sits in the conversation's turns: a turn opens with the
// first user-side message (proctor, host) after an agent-side message (candidate,
// participant), and every agent-side message answers the turn (the first answer carries
// the turn's user messages; a later one answers with none).
type Turn struct {
	// Start is the sequence of the turn's first message: with the session id it names
	// the turn (the adapter derives the turn's trace id from both).
	Start int64
	// UserMessages are the turn's user-side messages up to this one, in order.
	UserMessages []Message
	// Previous is the message just before this one (nil for the first).
	Previous *Message
}

// Posted is a stored message with its session and turn.
type Posted struct {
	Message Message
	Session Session
	Turn    Turn
}

// Post appends a message from the caller. Checks: content is UTF-8, non-empty once its
// NUL bytes are removed (ErrInvalid; the message is stored and answered without them),
// of at most MaxContentBytes (ErrTooLarge); the session id holds no NUL (ErrInvalid);
// the session exists in the evaluation (ErrNotFound); the caller is a participant
// (ErrForbidden); the session is active and holds fewer than MaxSessionMessages messages
// (ErrConflict; checked before the insert, so posts racing for the last place may pass it
// by at most their number). The role is the caller's role in the session.
func (s *Service) Post(ctx context.Context, caller Agent, evaluationID, sessionID, content string) (Posted, error) {
	content = withoutNUL(content)
	if strings.TrimSpace(content) == "" || !utf8.ValidString(content) {
		return Posted{}, errorf(ErrInvalid, "content: must be non-empty UTF-8 text")
	}
	if len(content) > s.maxContent {
		return Posted{}, errorf(ErrTooLarge, "content: %d bytes exceeds the limit of %d", len(content), s.maxContent)
	}
	sess, err := s.session(ctx, evaluationID, sessionID)
	if err != nil {
		return Posted{}, err
	}
	p, ok := sess.Participant(caller.ID)
	if !ok {
		return Posted{}, errorf(ErrForbidden, "agent %q is not a participant of session %q", caller.ID, sess.ID)
	}
	if sess.Status != SessionActive {
		return Posted{}, errorf(ErrConflict, "session %q has ended", sess.ID)
	}
	if sess.MessageCount >= s.maxMsgs {
		return Posted{}, errorf(ErrConflict, "session %q has reached the limit of %d messages", sess.ID, s.maxMsgs)
	}
	m, err := s.store.AddMessage(ctx, Message{ID: newID(PrefixMessage), SessionID: sess.ID,
		SenderAgentID: caller.ID, Role: p.Role, Content: content, CreatedAt: s.clock()})
	if err != nil {
		return Posted{}, err
	}
	turn, err := s.turnOf(ctx, m)
	if err != nil {
		return Posted{}, err
	}
	return Posted{Message: m, Session: sess, Turn: turn}, nil
}

// turnOf reads up to TurnWindow messages before m to find its turn.
func (s *Service) turnOf(ctx context.Context, m Message) (Turn, error) {
	before, _, err := s.store.Messages(ctx, m.SessionID, max(0, m.Sequence-1-TurnWindow), TurnWindow, 0)
	if err != nil {
		return Turn{}, err
	}
	before = trimFrom(before, m.Sequence)
	return TurnOf(before, m), nil
}

func trimFrom(ms []Message, seq int64) []Message {
	for i, x := range ms {
		if x.Sequence >= seq {
			return ms[:i]
		}
	}
	return ms
}

// TurnOf computes m's turn from the messages just before it (ascending, contiguous up to
// m.Sequence-1). Exported for the transcript conversions and tests.
func TurnOf(before []Message, m Message) Turn {
	t := Turn{Start: m.Sequence}
	if n := len(before); n > 0 {
		prev := before[n-1]
		t.Previous = &prev
	}
	// The user-side run right before m (and m itself when user-side).
	i := len(before)
	for i > 0 && before[i-1].Role.UserSide() {
		i--
	}
	run := before[i:]
	if len(run) > 0 {
		t.Start = run[0].Sequence
	}
	t.UserMessages = append(t.UserMessages, run...)
	if m.Role.UserSide() {
		t.UserMessages = append(t.UserMessages, m)
	}
	return t
}

// Page is one page of a session's messages (GET .../messages, a transcript).
type Page struct {
	// Messages are the session's messages after the page's since, in sequence order: at
	// most limit of them, and at most MaxPageBytes bytes of content together unless the
	// page is a single larger message (so that a page holds a message whenever one
	// follows since, and paging always progresses).
	Messages []Message `json:"messages"`
	// More reports that messages followed the page when it was read: read them with since
	// = the last message's sequence.
	More bool `json:"-"`
}

// page reads the page of the session's messages after since (>= 0). More comes from the
// store's read of the page itself: a message count read before it (Session.MessageCount)
// misses the messages posted in between, which the page may hold.
func (s *Service) page(ctx context.Context, sessionID string, since int64, limit int) (Page, error) {
	msgs, more, err := s.store.Messages(ctx, sessionID, since, pageSize(limit), s.maxPage)
	if err != nil {
		return Page{}, err
	}
	return Page{Messages: msgs, More: more}, nil
}

// Messages returns a page of the session's messages after sequence since (0 = from the
// start) to a participant (ErrForbidden otherwise): at most limit (DefaultPageSize when
// <= 0, at most MaxPageSize) and at most MaxPageBytes of content (see Page). ErrInvalid
// for since < 0.
func (s *Service) Messages(ctx context.Context, caller Agent, evaluationID, sessionID string, since int64, limit int) (Page, error) {
	if since < 0 {
		return Page{}, errorf(ErrInvalid, "since: must be a sequence >= 0")
	}
	sess, err := s.session(ctx, evaluationID, sessionID)
	if err != nil {
		return Page{}, err
	}
	if _, ok := sess.Participant(caller.ID); !ok {
		return Page{}, errorf(ErrForbidden, "agent %q is not a participant of session %q", caller.ID, sess.ID)
	}
	return s.page(ctx, sess.ID, since, limit)
}

// SubmitRequest is the proctor's verdict.
type SubmitRequest struct {
	RegistrationID  string
	Passed          bool
	ProctorFeedback string
}

// Submitted is a stored result with the session it ended.
type Submitted struct {
	Result  Result
	Session Session // ended now
	// Open is the turn left unanswered at the end: the user-side messages after the
	// last agent-side one (none when the conversation ended with an answer).
	Open Turn
}

// Ended is a live class work session ended by its host.
type Ended struct {
	Session Session
	Open    Turn
}

// Submit stores the proctor's verdict and ends the session. Checks: the evaluation is
// proctored (ErrInvalid); the registration exists in it (ErrNotFound); the caller is not
// its candidate (ErrForbidden); it was claimed (ErrConflict otherwise) and the caller is
// the session's proctor (ErrForbidden); it has no result yet (ErrConflict, also when two
// submits race). Before the store is read: the registration id holds no NUL
// (ErrInvalid); the feedback is UTF-8 (ErrInvalid) of at most MaxContentBytes
// (ErrTooLarge, as for a message's content), stored and answered without NUL bytes.
func (s *Service) Submit(ctx context.Context, caller Agent, evaluationID string, req SubmitRequest) (Submitted, error) {
	if _, err := s.definitionOfKind(evaluationID, KindProctored); err != nil {
		return Submitted{}, err
	}
	if req.RegistrationID == "" {
		return Submitted{}, errorf(ErrInvalid, "registration_id: required")
	}
	if err := checkID("registration_id", req.RegistrationID); err != nil {
		return Submitted{}, err
	}
	req.ProctorFeedback = withoutNUL(req.ProctorFeedback)
	if !utf8.ValidString(req.ProctorFeedback) {
		return Submitted{}, errorf(ErrInvalid, "proctor_feedback: must be UTF-8 text")
	}
	if len(req.ProctorFeedback) > s.maxContent {
		return Submitted{}, errorf(ErrTooLarge, "proctor_feedback: %d bytes exceeds the limit of %d", len(req.ProctorFeedback), s.maxContent)
	}
	reg, err := s.registration(ctx, evaluationID, req.RegistrationID)
	if err != nil {
		return Submitted{}, err
	}
	if reg.AgentID == caller.ID {
		return Submitted{}, errorf(ErrForbidden, "a candidate cannot submit its own result")
	}
	if reg.Status == RegistrationCompleted {
		return Submitted{}, errorf(ErrConflict, "registration %q already has a result", reg.ID)
	}
	sess, err := s.store.SessionByRegistration(ctx, reg.ID)
	if errors.Is(err, ErrNotFound) {
		return Submitted{}, errorf(ErrConflict, "registration %q has not been claimed by a proctor", reg.ID)
	}
	if err != nil {
		return Submitted{}, err
	}
	if p, ok := sess.Participant(caller.ID); !ok || p.Role != RoleProctor {
		return Submitted{}, errorf(ErrForbidden, "only the proctor of session %q can submit", sess.ID)
	}
	now := s.clock()
	res := Result{ID: newID(PrefixResult), EvaluationID: evaluationID, RegistrationID: reg.ID, AgentID: reg.AgentID,
		Passed: req.Passed, ProctorAgentID: caller.ID, ProctorFeedback: req.ProctorFeedback, SessionID: sess.ID, CompletedAt: now}
	if err := s.store.SubmitResult(ctx, res); err != nil {
		return Submitted{}, err
	}
	ended, open, err := s.endedSession(ctx, sess.ID)
	if err != nil {
		return Submitted{}, err
	}
	return Submitted{Result: res, Session: ended, Open: open}, nil
}

// endedSession reads an ended session (no message can be added any more) and its open
// turn: the turn of its last message, read from the same window turnOf read when that
// message was posted (TurnWindow messages before it, and itself), so that the end lands in
// the trace that holds the turn's messages.
func (s *Service) endedSession(ctx context.Context, id string) (Session, Turn, error) {
	sess, err := s.store.Session(ctx, id)
	if err != nil {
		return Session{}, Turn{}, err
	}
	last, _, err := s.store.Messages(ctx, sess.ID, max(0, sess.MessageCount-TurnWindow-1), TurnWindow+1, 0)
	if err != nil {
		return Session{}, Turn{}, err
	}
	var open Turn
	if n := len(last); n > 0 && last[n-1].Role.UserSide() {
		next := Message{Sequence: last[n-1].Sequence + 1, Role: RoleCandidate}
		open = TurnOf(last, next)
	}
	return sess, open, nil
}

// CandidateSubmit is a candidate's own submit: the channel's evaluations are graded by a
// proctor (or not at all), so it is always ErrInvalid, with SafeMolt's message.
func (s *Service) CandidateSubmit(_ context.Context, _ Agent, evaluationID string) error {
	d, err := s.Definition(evaluationID)
	if err != nil {
		return err
	}
	if d.Type == KindProctored {
		return errorf(ErrInvalid, "This evaluation is proctored; a proctor must submit your result.")
	}
	return errorf(ErrInvalid, "a live_class_work session ends when its host ends it; there is nothing to submit")
}

// Transcript is a result's session and one page of its messages (GET
// .../results/{id}/transcript).
type Transcript struct {
	ResultID     string        `json:"result_id"`
	SessionID    string        `json:"session_id"`
	Passed       bool          `json:"passed"`
	Participants []Participant `json:"participants"`
	// MessageCount is the number of messages of the whole session.
	MessageCount int64 `json:"message_count"`
	// Page is the page of messages after since.
	Page
}

// Transcript returns the transcript of a result (visible to any authenticated agent, as
// results are), one page at a time like Messages: the messages after sequence since (0 =
// from the start), at most limit (DefaultPageSize when <= 0, at most MaxPageSize) and at
// most MaxPageBytes of content (see Page), so that no request holds a whole long session
// in memory. ErrInvalid for since < 0;
// ErrNotFound for an unknown result or one without a session.
func (s *Service) Transcript(ctx context.Context, _ Agent, evaluationID, resultID string, since int64, limit int) (Transcript, error) {
	if since < 0 {
		return Transcript{}, errorf(ErrInvalid, "since: must be a sequence >= 0")
	}
	if _, err := s.Definition(evaluationID); err != nil {
		return Transcript{}, err
	}
	if err := checkID("result_id", resultID); err != nil {
		return Transcript{}, err
	}
	res, err := s.store.Result(ctx, resultID)
	if err == nil && res.EvaluationID != evaluationID {
		err = errorf(ErrNotFound, "result %q not found in evaluation %q", resultID, evaluationID)
	}
	if err != nil {
		return Transcript{}, err
	}
	if res.SessionID == "" {
		return Transcript{}, errorf(ErrNotFound, "result %q has no session", resultID)
	}
	sess, err := s.store.Session(ctx, res.SessionID)
	if err != nil {
		return Transcript{}, err
	}
	p, err := s.page(ctx, sess.ID, since, limit)
	if err != nil {
		return Transcript{}, err
	}
	return Transcript{ResultID: res.ID, SessionID: sess.ID, Passed: res.Passed, Participants: sess.Participants,
		MessageCount: sess.MessageCount, Page: p}, nil
}

func pageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}
