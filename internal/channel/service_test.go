// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// newService runs the channel over a real SQLite store (the receiver's tests run the
// same flows over HTTP on SQLite and PostgreSQL).
func newService(t *testing.T) *channel.Service {
	t.Helper()
	st, err := store.OpenChannel(context.Background(), store.DriverSQLite, filepath.Join(t.TempDir(), "channel.db"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	svc, err := channel.New(channel.Options{Store: st, Definitions: []channel.Definition{{ID: "sip-5", Type: channel.KindProctored}},
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); at = at.Add(time.Second); return at }})
	require.NoError(t, err)
	return svc
}

func agent(t *testing.T, svc *channel.Service, id string) channel.Agent {
	t.Helper()
	_, key, err := svc.IssueKey(context.Background(), id, "")
	require.NoError(t, err)
	a, err := svc.Authenticate(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, id, a.ID)
	return a
}

// claimed registers and starts candidate "cand" for sip-5 and claims it as proctor "proc".
func claimed(t *testing.T, svc *channel.Service) (cand, proc channel.Agent, reg channel.Registration, c channel.Claimed) {
	t.Helper()
	ctx := context.Background()
	cand, proc = agent(t, svc, "cand"), agent(t, svc, "proc")
	reg, err := svc.Register(ctx, cand, "sip-5")
	require.NoError(t, err)
	_, err = svc.Start(ctx, cand, "sip-5")
	require.NoError(t, err)
	c, err = svc.Claim(ctx, proc, "sip-5", reg.ID)
	require.NoError(t, err)
	return cand, proc, reg, c
}

// TestConcurrentSubmits: two submits of one registration at once, exactly one stored.
func TestConcurrentSubmits(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	_, proc, reg, _ := claimed(t, svc)

	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: reg.ID, Passed: i%2 == 0})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		assert.ErrorIs(t, err, channel.ErrConflict)
	}
	assert.Equal(t, 1, ok)
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	_, key, err := svc.IssueKey(ctx, "a1", "First")
	require.NoError(t, err)
	a, err := svc.Authenticate(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "First", a.Name)

	// A new key without a name keeps the name; both keys stay valid.
	renamed, key2, err := svc.IssueKey(ctx, "a1", "")
	require.NoError(t, err)
	assert.Equal(t, "First", renamed.Name)
	for _, k := range []string{key, key2} {
		_, err = svc.Authenticate(ctx, k)
		assert.NoError(t, err)
	}
	for _, k := range []string{"", "nope", key[:len(key)-1] + "x"} {
		_, err = svc.Authenticate(ctx, k)
		assert.True(t, errors.Is(err, channel.ErrUnauthorized), "%q: %v", k, err)
	}
	_, _, err = svc.IssueKey(ctx, " ", "")
	assert.ErrorIs(t, err, channel.ErrInvalid)
}

func TestNewRejectsBadDefinitions(t *testing.T) {
	st, err := store.OpenChannel(context.Background(), store.DriverSQLite, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	defer st.Close()
	_, err = channel.New(channel.Options{Store: st, Definitions: []channel.Definition{{ID: "a", Type: channel.KindProctored}, {ID: "a", Type: channel.KindProctored}}})
	assert.ErrorContains(t, err, `duplicate evaluation id "a"`)
	_, err = channel.New(channel.Options{})
	assert.ErrorContains(t, err, "nil store")
}

// TestNULBytes: the store removes NUL bytes (PostgreSQL text cannot hold them), so the
// service decides before storing. An id with a NUL is refused naming the field (it
// would silently be another id: "proctor-\x007" is proctor-7); text (content, feedback,
// name) is cleaned, checked, and answered as stored.
func TestNULBytes(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	cand, proc := agent(t, svc, "cand"), agent(t, svc, "proc")

	_, _, err := svc.IssueKey(ctx, "pro\x00c", "")
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "agent_id")
	named, key, err := svc.IssueKey(ctx, "named", "Na\x00med")
	require.NoError(t, err)
	assert.Equal(t, "Named", named.Name)
	a, err := svc.Authenticate(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "Named", a.Name)

	reg, err := svc.Register(ctx, cand, "sip-5")
	require.NoError(t, err)
	_, err = svc.Start(ctx, cand, "sip-5")
	require.NoError(t, err)
	_, err = svc.Claim(ctx, proc, "sip-5", reg.ID+"\x00")
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "registration_id")
	claimed, err := svc.Claim(ctx, proc, "sip-5", reg.ID)
	require.NoError(t, err)

	_, err = svc.Post(ctx, proc, "sip-5", claimed.SessionID+"\x00", "hi")
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "session_id")
	for _, content := range []string{"\x00", " \x00\x00 "} {
		_, err = svc.Post(ctx, proc, "sip-5", claimed.SessionID, content)
		assert.ErrorIs(t, err, channel.ErrInvalid, "%q", content)
		assert.ErrorContains(t, err, "content: must be non-empty")
	}
	p, err := svc.Post(ctx, proc, "sip-5", claimed.SessionID, "he\x00llo")
	require.NoError(t, err)
	assert.Equal(t, "hello", p.Message.Content, "answered as stored")
	assert.Equal(t, "hello", p.Turn.UserMessages[0].Content)
	page, err := svc.Messages(ctx, proc, "sip-5", claimed.SessionID, 0, 0)
	require.NoError(t, err)
	require.Len(t, page.Messages, 1)
	assert.Equal(t, "hello", page.Messages[0].Content)

	_, err = svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: reg.ID + "\x00", Passed: true})
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "registration_id")
	sub, err := svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: reg.ID, Passed: true, ProctorFeedback: "go\x00od"})
	require.NoError(t, err)
	assert.Equal(t, "good", sub.Result.ProctorFeedback)
	_, err = svc.Transcript(ctx, proc, "sip-5", sub.Result.ID+"\x00", 0, 0)
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "result_id")
}

// TestSubmitFeedbackSize: feedback over MaxContentBytes is ErrTooLarge (413), as for a
// message's content; invalid UTF-8 is ErrInvalid.
func TestSubmitFeedbackSize(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	proc := agent(t, svc, "proc")
	_, err := svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: "eval_reg_x",
		ProctorFeedback: strings.Repeat("x", channel.DefaultMaxContentBytes+1)})
	assert.ErrorIs(t, err, channel.ErrTooLarge)
	assert.ErrorContains(t, err, "proctor_feedback")
	_, err = svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: "eval_reg_x", ProctorFeedback: "\xff"})
	assert.ErrorIs(t, err, channel.ErrInvalid)
	assert.ErrorContains(t, err, "proctor_feedback")
}

// TestSubmitEndsTheLastMessagesTurn: the turn the submit ends (Submitted.Open) is the turn
// the last unanswered message was sent in, however many proctor messages are unanswered.
// With more than channel.TurnWindow of them the two used to differ by one message, so the
// end went to a trace holding none of the messages and the session was not ended at once.
func TestSubmitEndsTheLastMessagesTurn(t *testing.T) {
	ctx := context.Background()
	for _, unanswered := range []int{1, channel.TurnWindow, channel.TurnWindow + 1, channel.TurnWindow + 5} {
		svc := newService(t)
		cand, proc, reg, c := claimed(t, svc)
		_, err := svc.Post(ctx, proc, "sip-5", c.SessionID, "Hello?")
		require.NoError(t, err)
		_, err = svc.Post(ctx, cand, "sip-5", c.SessionID, "Hi.")
		require.NoError(t, err)
		var last channel.Posted
		for range unanswered {
			last, err = svc.Post(ctx, proc, "sip-5", c.SessionID, "Are you there?")
			require.NoError(t, err)
		}
		sub, err := svc.Submit(ctx, proc, "sip-5", channel.SubmitRequest{RegistrationID: reg.ID, Passed: false})
		require.NoError(t, err)
		assert.Equal(t, last.Turn.Start, sub.Open.Start, "%d unanswered messages", unanswered)
		assert.Equal(t, len(last.Turn.UserMessages), len(sub.Open.UserMessages), "%d unanswered messages", unanswered)
	}
}

// TestMaxSessionMessages: a session holds at most MaxSessionMessages messages; the next
// post is ErrConflict naming the limit, and nothing more is stored.
func TestMaxSessionMessages(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenChannel(ctx, store.DriverSQLite, filepath.Join(t.TempDir(), "channel.db"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	svc, err := channel.New(channel.Options{Store: st, MaxSessionMessages: 3,
		Definitions: []channel.Definition{{ID: "class", Type: channel.KindLiveClassWork}}})
	require.NoError(t, err)
	host := agent(t, svc, "host")
	sess, err := svc.CreateLiveSession(ctx, host, "class")
	require.NoError(t, err)
	for range 3 {
		_, err = svc.Post(ctx, host, "class", sess.ID, "hello")
		require.NoError(t, err)
	}
	_, err = svc.Post(ctx, host, "class", sess.ID, "one too many")
	require.ErrorIs(t, err, channel.ErrConflict)
	assert.ErrorContains(t, err, "limit of 3 messages")
	page, err := svc.Messages(ctx, host, "class", sess.ID, 0, 0)
	require.NoError(t, err)
	assert.Len(t, page.Messages, 3)
	assert.False(t, page.More)
}

// runStores runs test on a fresh channel store on SQLite and on PostgreSQL
// (storetest.PostgresDSN: skipped without AGENTEVAL_TEST_POSTGRES_DSN, failing under
// CI=true), as the receiver's channel tests do.
func runStores(t *testing.T, test func(t *testing.T, st *store.ChannelStore)) {
	for _, b := range []struct {
		driver string
		dsn    func(t *testing.T) string
	}{
		{store.DriverSQLite, func(t *testing.T) string { return filepath.Join(t.TempDir(), "channel.db") }},
		{store.DriverPostgres, func(t *testing.T) string { return storetest.PostgresDSN(t) }},
	} {
		t.Run(b.driver, func(t *testing.T) {
			st, err := store.OpenChannel(context.Background(), b.driver, b.dsn(t))
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, st.Close()) })
			test(t, st)
		})
	}
}

// postingStore runs post once, right after the next read of a session: messages posted
// by another participant between the service's read of the session and its read of a
// page.
type postingStore struct {
	channel.Store
	post func()
}

func (s *postingStore) Session(ctx context.Context, id string) (channel.Session, error) {
	sess, err := s.Store.Session(ctx, id)
	if post := s.post; post != nil {
		s.post = nil
		post()
	}
	return sess, err
}

// TestMessagesMoreWhilePosting: a page says messages follow it (Page.More, the API's
// next) whenever messages followed it when it was read, also when they were posted while
// it was read, and following it reads every message once, in order. More used to compare
// the page's last sequence with the session's message count read before the page: with
// messages posted in between in the page, it said the page was the last while messages
// followed it, and a client following next stopped early (a page bounded by bytes may
// hold fewer than limit messages and not be the last, so the count cannot tell either).
func TestMessagesMoreWhilePosting(t *testing.T) {
	const size = 100 // bytes of each message's content
	for _, tc := range []struct {
		name          string
		limit, budget int
	}{
		// The review's case: 2 messages, 3 posted while a page of at most 4 is read.
		{name: "limit", limit: 4},
		// A page cut by its bytes (3 messages) with fewer than limit.
		{name: "bytes", budget: 3 * size},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runStores(t, func(t *testing.T, st *store.ChannelStore) {
				ctx := context.Background()
				ps := &postingStore{Store: st}
				svc, err := channel.New(channel.Options{Store: ps, MaxPageBytes: tc.budget,
					Definitions: []channel.Definition{{ID: "class", Type: channel.KindLiveClassWork}}})
				require.NoError(t, err)
				host := agent(t, svc, "host")
				sess, err := svc.CreateLiveSession(ctx, host, "class")
				require.NoError(t, err)
				var want []string
				post := func() {
					content := fmt.Sprintf("%03d", len(want)+1) + strings.Repeat("x", size-3)
					_, err := svc.Post(ctx, host, "class", sess.ID, content)
					require.NoError(t, err)
					want = append(want, content)
				}
				post()
				post()
				ps.post = func() { post(); post(); post() }

				page, err := svc.Messages(ctx, host, "class", sess.ID, 0, tc.limit)
				require.NoError(t, err)
				require.NotEmpty(t, page.Messages)
				require.Nil(t, ps.post, "the messages were posted between the reads")
				last := page.Messages[len(page.Messages)-1].Sequence
				after, err := svc.Messages(ctx, host, "class", sess.ID, last, 0)
				require.NoError(t, err)
				require.Equal(t, len(after.Messages) > 0, page.More,
					"page: %d messages (last sequence %d), More=%v; messages after it at that time: %d",
					len(page.Messages), last, page.More, len(after.Messages))

				var got []string
				for since := int64(0); ; {
					p, err := svc.Messages(ctx, host, "class", sess.ID, since, tc.limit)
					require.NoError(t, err)
					for _, m := range p.Messages {
						got = append(got, m.Content)
					}
					if !p.More {
						break
					}
					since = p.Messages[len(p.Messages)-1].Sequence
				}
				assert.Equal(t, want, got, "following More from the start reads every message once, in order")
			})
		})
	}
}
