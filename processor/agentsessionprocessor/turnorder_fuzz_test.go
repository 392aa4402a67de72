// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// Follow-up messages of the fuzzed conversations: each user message is a neutral
// follow-up, a correction of the answer before it, or a re-ask of the message before it
// ("Again: " and that message, fuzzReask), so that the verdict of the turn before it
// tells which it was given: RDM after a correction (or a re-ask of one: it repeats the
// correction's cue), CCM after a re-ask, else hallucination (the answers state figures
// no source grounds). A neutral follow-up and none give the same verdict, so the test
// tells follow-ups apart where a correction or a re-ask is one of the candidates.
var (
	fuzzNeutral = []string{
		"Thanks, and on Sunday?", "Great, what about Monday?", "And the wind tomorrow?",
		"OK, and in the evening?", "Thanks! And Saturday?", "Fine, and next week?",
	}
	fuzzCorrection = []string{
		"No, that's wrong, I meant Paris in Texas.", "No, I meant Lyon, not Paris.",
		"That's not what I asked, I wanted the weekend.", "Wrong city, I said Berlin.",
		"No, I asked about Sunday, not tomorrow.", "That is incorrect, I meant Nice.",
	}
)

// fuzzTurn is one turn of a fuzzed conversation: its place in the conversation (its
// spans' start), its user message and answer, whether its run crashed (no root span: it
// closes at turn_timeout), whether the user paused longer than session_timeout before
// it, when its spans arrive, in ticks of the processors' clocks, and the collector they
// arrive at.
type fuzzTurn struct {
	user, answer string
	// start is when its spans start, after t0: 2 s after the turn before it, 75 s when
	// the user paused.
	start      time.Duration
	correction bool
	// reask: its user message asks the one before it again (fuzzReask).
	reask   bool
	crashed bool
	paused  bool
	arrive  int
	on      int
}

// Ticks of 250 ms: a turn every 3 s; a pause of 75 s (session_timeout is a minute); a
// turn up to 15 s late, or, when very late, 100 s: after the session went idle unless a
// turn after it came meanwhile.
const (
	fuzzTurnTicks  = 12
	fuzzPauseTicks = 300
	fuzzVeryLate   = 400
	// fuzzSessionTimeoutTicks is fuzzConfig's session_timeout.
	fuzzSessionTimeoutTicks = 240
)

// fuzzConversation reads a conversation of 2 to 6 turns from data, sent to collectors
// collectors.
func fuzzConversation(data []byte, collectors int) []fuzzTurn {
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	n := 2 + int(at(0))%5
	turns := make([]fuzzTurn, n)
	inOrder := at(1+n)&1 != 0 // the reference's order, other timing; bit i: turn i re-asks
	nominal, start := 0, time.Duration(0)
	for i := range turns {
		b, c := at(1+i), at(2+n+i)
		msgs := fuzzNeutral
		if b&1 != 0 {
			msgs = fuzzCorrection
		}
		turns[i] = fuzzTurn{
			user:       msgs[i%len(msgs)],
			correction: b&1 != 0,
			reask:      i > 0 && at(1+n)>>i&1 != 0,
			answer:     fmt.Sprintf("Forecast %d: sunny, %d degrees.", i, 18+i),
			crashed:    i > 0 && b&2 != 0,
			paused:     i > 0 && c&2 != 0,
			on:         int(c>>2) % collectors,
		}
		if turns[i].reask {
			turns[i].user, turns[i].correction = fuzzReask(turns[i-1].user), false
		}
		if turns[i].paused {
			nominal += fuzzPauseTicks
			start += 75 * time.Second
		}
		turns[i].arrive, turns[i].start = nominal, start
		start += 2 * time.Second
		if !inOrder {
			turns[i].arrive += int(b>>2) % 61
			if c&1 != 0 {
				turns[i].arrive += fuzzVeryLate
			}
		}
		nominal += fuzzTurnTicks
	}
	return turns
}

// fuzzReask is the user message that asks user again: CCM on the turn that answered
// user, or RDM when user corrects (its cue repeated).
func fuzzReask(user string) string { return "Again: " + user }

// fuzzFollowUpVerdict is the detection type that turn i's user message gives the turn
// before it: RDM after a correction or a re-ask of one (fuzzCorrects), CCM after
// another re-ask, "" (neither) otherwise.
func fuzzFollowUpVerdict(turns []fuzzTurn, i int) string {
	switch {
	case fuzzCorrects(turns, i):
		return evaluation.DetectionRDM
	case turns[i].reask:
		return evaluation.DetectionCCM
	}
	return ""
}

// fuzzCorrects reports whether turn i's user message is a correction, or asks one again.
func fuzzCorrects(turns []fuzzTurn, i int) bool {
	return turns[i].correction || turns[i].reask && fuzzCorrects(turns, i-1)
}

// fuzzConfig is the processors' configuration: a turn settles 500 ms after its root
// span, a crashed one closes after 10 s, a session ends after a minute of silence (so
// that a pause, 75 s, or a very late turn, 100 s, comes after the session went idle).
// With a store, the continuation store is that database (driver and DSN), shared by
// the collectors (docs/decisions/sessions.md §4.5).
func fuzzConfig(st fuzzStore) *Config {
	cfg := testConfig()
	if st.dsn != "" {
		cfg = recoveryConfig(st.driver, st.dsn)
	}
	cfg.TurnSettle = 500 * time.Millisecond
	cfg.TurnTimeout = 10 * time.Second
	cfg.SessionTimeout = time.Minute
	return cfg
}

// runFuzzConversation sends turns as one session to their collectors (a fake clock each,
// 250 ms a step, all stepped together) at their arrival ticks and steps them until the
// session ended, and returns their evaluation output and how many of the spans sent they
// passed on. With a store, the collectors share that continuation store.
func runFuzzConversation(t *testing.T, turns []fuzzTurn, collectors int, st fuzzStore) ([]*consumertest.TracesSink, int) {
	ctx := context.Background()
	cfg := fuzzConfig(st)
	ps := make([]*agentSessionProcessor, collectors)
	sinks := make([]*consumertest.TracesSink, collectors)
	clks := make([]*testClock, collectors)
	for c := range ps {
		ps[c], sinks[c], clks[c] = newTestProcessor(t, cfg, nil)
		// With a store, a session of 4 or more turns releases its older records
		// (docs/decisions/sessions.md §4.2.2): the checks hold with them released.
		ps[c].heldRecords = 2
		if st.dsn != "" {
			startWithoutWorker(t, ps[c])
			p := ps[c]
			t.Cleanup(func() { require.NoError(t, p.shutdown(ctx)) })
		}
	}
	t0 := clks[0].now()
	order := make([]int, len(turns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return turns[a].arrive - turns[b].arrive })
	next, passed := 0, 0
	for tick := 0; next < len(order) || tick < turns[order[len(order)-1]].arrive+4*60*4; tick++ {
		for next < len(order) && turns[order[next]].arrive == tick {
			i := order[next]
			// Conversation order is the spans' start (fuzzTurn.start).
			td := chatTurn("fuzz-order", i+1, t0.Add(turns[i].start), turns[i].user, turns[i].answer, !turns[i].crashed)
			out, err := ps[turns[i].on].processTraces(ctx, td)
			require.NoError(t, err)
			passed += countSpans(out, false)
			next++
		}
		for c := range ps {
			clks[c].advance(250 * time.Millisecond)
			ps[c].step(ctx)
		}
	}
	return sinks, passed
}

// fuzzOutput is what the collectors emitted for the conversation, per turn (by its user
// message): its index, the final verdicts given and how many of them count (not
// Revised), the last one emitted (one collector: the one that stands); and the session
// analysis of the highest revision.
type fuzzOutput struct {
	index           map[string]int
	finals, counted map[string]int
	last            map[string]evaluation.TurnResult
	// finalVerdicts are each turn's final verdicts, as emitted (standingVerdict).
	finalVerdicts map[string][]evaluation.TurnResult
	analysis      evaluation.Analysis
}

func readFuzzOutput(t *testing.T, sinks []*consumertest.TracesSink) fuzzOutput {
	o := fuzzOutput{index: map[string]int{}, finals: map[string]int{}, counted: map[string]int{}, last: map[string]evaluation.TurnResult{},
		finalVerdicts: map[string][]evaluation.TurnResult{}}
	var as []evaluation.Analysis
	for _, sink := range sinks {
		spans := evalSpans(sink)
		as = append(as, analyses(t, spans[semconv.EvalKindAgentSession])...)
		for _, sp := range spans[semconv.EvalKindTurn] {
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err)
			if i, ok := o.index[tr.UserMessage]; ok {
				require.Equal(t, i, tr.TurnIndex, "%q: a turn's index never changes", tr.UserMessage)
			}
			o.index[tr.UserMessage] = tr.TurnIndex
			if !tr.Final {
				continue
			}
			o.last[tr.UserMessage] = tr
			o.finalVerdicts[tr.UserMessage] = append(o.finalVerdicts[tr.UserMessage], tr)
			o.finals[tr.UserMessage]++
			if !tr.Revised {
				o.counted[tr.UserMessage]++
			}
		}
	}
	o.analysis = highestRevision(t, as)
	return o
}

// FuzzTurnCloseOrder: the turns of one conversation arrive in any order, some runs crash
// (no root span: closed at turn_timeout, after turns that started later), the user
// pauses longer than session_timeout, on one collector or on two sharing a SQLite
// continuation store. Whatever the order: every span passes through; each turn gets one
// index that never changes and exactly one final verdict that counts; the session
// analysis of the highest revision holds every turn once, with the verdict the turn gets
// when the turns arrive and close in conversation order on one collector (RDM exactly
// where a correction follows: a turn is never given the correction of a later turn, nor
// loses its own; docs/decisions/sessions.md §4.5). On one collector that verdict is also
// the last one emitted, and a turn is judged again only when a turn after its next one
// arrived before that next one, or the session went idle after it.
func FuzzTurnCloseOrder(f *testing.F) {
	for _, data := range fuzzSeeds() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var st fuzzStore
		if forTwoCollectors(data) {
			// Not t.TempDir: a seed's directory name holds '#', which the store refuses.
			dir, err := os.MkdirTemp("", "fuzz-order")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			st = fuzzStore{driver: "sqlite", dsn: filepath.Join(dir, "agenteval.db")}
		}
		checkTurnCloseOrder(t, data, st)
	})
}

// TestTurnCloseOrderOnPostgres runs FuzzTurnCloseOrder's seeds for two collectors on
// a PostgreSQL continuation store.
func TestTurnCloseOrderOnPostgres(t *testing.T) {
	seeds := 0
	for i, data := range fuzzSeeds() {
		if !forTwoCollectors(data) {
			continue
		}
		seeds++
		t.Run(fmt.Sprintf("seed#%d", i), func(t *testing.T) {
			checkTurnCloseOrder(t, data, fuzzStore{driver: "postgres", dsn: storetest.PostgresDSN(t)})
		})
	}
	require.Positive(t, seeds)
}

// fuzzStore is the continuation store two collectors share: a driver and a DSN; none
// (in memory) for one collector.
type fuzzStore struct{ driver, dsn string }

// forTwoCollectors reports whether FuzzTurnCloseOrder's input data is for two collectors
// (a shared continuation store): its last byte's high bit is clear and it is longer than
// 8 bytes.
func forTwoCollectors(data []byte) bool { return len(data) > 8 && data[len(data)-1]&0x80 == 0 }

// checkTurnCloseOrder is FuzzTurnCloseOrder's check of one input, the collectors
// sharing st when the input is for two.
func checkTurnCloseOrder(t *testing.T, data []byte, st fuzzStore) {
	collectors := 1
	if forTwoCollectors(data) {
		collectors = 2
	}
	turns := fuzzConversation(data, collectors)
	sinks, out := runFuzzConversation(t, turns, collectors, st)
	inOrder := slices.Clone(turns)
	nominal := 0
	for i := range inOrder {
		if inOrder[i].paused {
			nominal += fuzzPauseTicks
		}
		// Each closes (turn_timeout 10 s) before the next comes.
		inOrder[i].arrive, inOrder[i].on = nominal, 0
		nominal += 60
	}
	wantSinks, _ := runFuzzConversation(t, inOrder, 1, fuzzStore{})

	var in int
	for i := range turns {
		in += chatTurn("fuzz-order", i+1, time.Time{}, "", "", !turns[i].crashed).SpanCount()
	}
	require.Equal(t, in, out, "every span passes through, once")

	got, want := readFuzzOutput(t, sinks), readFuzzOutput(t, wantSinks)
	require.Len(t, got.index, len(turns), "every turn is evaluated: %v", got.index)
	require.Len(t, got.analysis.TurnResults, len(turns), "the highest revision holds every turn")
	inAnalysis := map[string]evaluation.TurnResult{}
	for _, tr := range got.analysis.TurnResults {
		inAnalysis[tr.UserMessage] = tr
	}
	wantIn := map[string]evaluation.TurnResult{}
	for _, tr := range want.analysis.TurnResults {
		wantIn[tr.UserMessage] = tr
	}
	for i, tu := range turns {
		// The reference itself: RDM exactly where the next message corrects, CCM exactly
		// where it re-asks.
		want, got := "", wantIn[tu.user].DetectionType
		if i+1 < len(turns) {
			want = fuzzFollowUpVerdict(turns, i+1)
		}
		if got != evaluation.DetectionRDM && got != evaluation.DetectionCCM {
			got = ""
		}
		require.Equal(t, want, got, "reference turn %d (%q): the next message's verdict", i, tu.user)
	}
	seen := map[int]bool{}
	for p, tu := range turns {
		i, ok := got.index[tu.user]
		require.True(t, ok, "%q evaluated", tu.user)
		require.False(t, seen[i], "index %d given twice", i)
		seen[i] = true
		require.Equal(t, 1, got.counted[tu.user], "%q: one final verdict counts (of %d)", tu.user, got.finals[tu.user])
		g, w := inAnalysis[tu.user], wantIn[tu.user]
		require.Equal(t, i, g.TurnIndex, "%q: the analysis has the turn's index", tu.user)
		require.True(t, g.Final, "%q: final in the analysis", tu.user)
		require.Equal(t, verdictOf(w), verdictOf(g),
			"%q: the verdict that stands is the one in conversation order (got %s %q, want %s %q)",
			tu.user, g.DetectionType, g.Reason, w.DetectionType, w.Reason)
		require.Equal(t, w.DetectionType, standingVerdict(t, got.finalVerdicts[tu.user]),
			"%q: the counters, corrected by the revisions, give the verdict that stands", tu.user)
		if collectors > 1 {
			continue
		}
		require.Equal(t, verdictOf(g), verdictOf(got.last[tu.user]), "%q: the last verdict emitted is the analysis'", tu.user)
		if got.finals[tu.user] > 1 {
			// Judged again: only when a turn that started after its next one came
			// first (closed before that next turn's spans arrived; a next turn
			// open or closing with it holds the verdict, tracker.Event.EarlierOpen),
			// or when the session went idle after it (finished without follow-up)
			// and continued.
			require.True(t, overtaken(turns, p) || idleAfter(turns, p), "%q judged again (%d final verdicts) though no turn after it came before the next one and the session did not go idle after it", tu.user, got.finals[tu.user])
		}
	}
	require.Equal(t, want.analysis.Conversation.RDMDetections, got.analysis.Conversation.RDMDetections, "RDM detections")
	if st.dsn != "" {
		c := storedContinuation(t, st.driver, st.dsn, "fuzz-order")
		require.Len(t, c.Turns, len(turns), "every turn stored once")
		for _, r := range c.Turns {
			require.Equal(t, verdictOf(wantIn[r.Result.UserMessage]), verdictOf(r.Result), "stored %q", r.Result.UserMessage)
		}
	}
}

// fuzzSeeds are FuzzTurnCloseOrder's seeds, each a schedule (fuzzSeed).
func fuzzSeeds() (out [][]byte) {
	type c = fuzzSeedTurn
	n, corr, again := c{}, c{correction: true}, c{reask: true}
	with := func(t c, f func(*c)) c { f(&t); return t }
	for _, seed := range []struct {
		collectors int
		turns      []c
	}{
		{1, []c{n, corr, n}}, // in order
		{1, []c{n, with(corr, func(t *c) { t.crashed = true }), n}},                                                                                     // the correction crashed: it closes at turn_timeout, after the next turn
		{1, []c{n, with(corr, func(t *c) { t.late = 60 }), n, n}},                                                                                       // the correction arrives 15 s late, after the next two
		{1, []c{corr, with(n, func(t *c) { t.late = 40 }), corr, n}},                                                                                    // a turn arrives after the one after it
		{1, []c{n, with(corr, func(t *c) { t.crashed, t.late = true, 30 }), with(n, func(t *c) { t.crashed = true }), corr, n}},                         // two crashes, one late
		{1, []c{corr, n, with(n, func(t *c) { t.paused = true }), n}},                                                                                   // a pause: the session continues
		{1, []c{n, with(corr, func(t *c) { t.veryLate = true }), n, n}},                                                                                 // the correction arrives after the session went idle
		{1, []c{with(n, func(t *c) { t.veryLate = true }), corr, n}},                                                                                    // the first turn arrives after the session went idle
		{2, []c{n, with(corr, func(t *c) { t.on = 1 }), n, with(corr, func(t *c) { t.on = 1 })}},                                                        // two collectors, turns alternating
		{2, []c{n, with(corr, func(t *c) { t.on, t.late = 1, 40 }), n, n}},                                                                              // two collectors: the correction late on the other
		{2, []c{with(corr, func(t *c) { t.on = 1 }), with(n, func(t *c) { t.crashed = true }), with(n, func(t *c) { t.on, t.paused = 1, true }), corr}}, // a crash and a pause
		{2, []c{n, with(corr, func(t *c) { t.on, t.veryLate = 1, true }), n}},                                                                           // the correction very late on the other
		{1, []c{n, again, corr, again, n}},                                                                                                              // re-asks in order: CCM, then RDM (a re-asked correction)
		{1, []c{n, with(again, func(t *c) { t.late = 60 }), n, corr}},                                                                                   // the re-ask arrives 15 s late
		{1, []c{corr, with(again, func(t *c) { t.paused = true }), n}},                                                                                  // a re-ask after a pause: CCM revises the verdict given at idle
		{2, []c{n, with(again, func(t *c) { t.on, t.late = 1, 40 }), corr, n}},                                                                          // two collectors: the re-ask late on the other
		{2, []c{with(n, func(t *c) { t.on = 1 }), with(again, func(t *c) { t.paused = true }), with(corr, func(t *c) { t.on, t.paused = 1, true })}},    // two collectors, pauses: CCM, then RDM, each a revision
	} {
		out = append(out, fuzzSeed(seed.turns, seed.collectors))
	}
	return out
}

// fuzzSeedTurn is a turn of a seed of FuzzTurnCloseOrder (fuzzSeed encodes it as
// fuzzConversation reads it): late is in ticks of 250 ms, at most 60.
type fuzzSeedTurn struct {
	correction, reask, crashed, paused, veryLate bool
	late, on                                     int
}

// fuzzSeed returns the input of FuzzTurnCloseOrder that reads as turns on collectors
// collectors.
func fuzzSeed(turns []fuzzSeedTurn, collectors int) []byte {
	n := len(turns)
	data := make([]byte, 2+2*n, 3+2*n+8)
	data[0] = byte(n - 2)
	for i, t := range turns {
		b := byte(t.late) << 2
		if t.correction {
			b |= 1
		}
		if t.crashed {
			b |= 2
		}
		c := byte(t.on) << 2
		if t.veryLate {
			c |= 1
		}
		if t.paused {
			c |= 2
		}
		data[1+i], data[2+n+i] = b, c
		if t.reask {
			data[1+n] |= 1 << i
		}
	}
	if collectors == 1 {
		return append(data, 0x80)
	}
	for len(data) < 9 {
		data = append(data, 0)
	}
	return append(data, 0)
}

// overtaken reports whether a turn after turn p's next one arrived before that next one.
func overtaken(turns []fuzzTurn, p int) bool {
	if p+1 >= len(turns) {
		return false
	}
	for k := p + 2; k < len(turns); k++ {
		if turns[k].arrive < turns[p+1].arrive {
			return true
		}
	}
	return false
}

// idleAfter reports whether the session may have gone idle after turn p closed and
// before the turn after it arrived: a pause before that turn, or that turn very late.
func idleAfter(turns []fuzzTurn, p int) bool {
	if p+1 >= len(turns) {
		return false
	}
	n := turns[p+1]
	return n.paused || n.arrive-turns[p].arrive > fuzzSessionTimeoutTicks
}

// verdictOf is a final verdict's detection and whether it is bad: RDM, or hallucination
// (the answers' figures ground nowhere; a late turn's successor lacks the late turn's
// facts, sessions.md §4.5, which this shape therefore cannot show).
func verdictOf(tr evaluation.TurnResult) string {
	return fmt.Sprintf("%s bad=%v", tr.DetectionType, tr.IsBad)
}
