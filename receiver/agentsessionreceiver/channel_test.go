// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadatatest"
)

// postgresDSNEnv names the PostgreSQL test database (as in internal/store). Unset: the
// PostgreSQL half of the channel tests is skipped, except under CI=true where it fails.
const postgresDSNEnv = "AGENTEVAL_TEST_POSTGRES_DSN"

// Evaluation ids of the test configuration.
const (
	evalProctored = "non-spamminess"
	evalLive      = "pair-programming"
)

// storeBackend makes a fresh, empty database for one test.
type storeBackend struct {
	name  string
	newDB func(t *testing.T) StoreConfig
}

var schemaSeq atomic.Int64

func storeBackends() []storeBackend {
	return []storeBackend{
		{store.DriverSQLite, func(t *testing.T) StoreConfig {
			return StoreConfig{Driver: store.DriverSQLite, DSN: configDSN(filepath.Join(t.TempDir(), "agenteval.db"))}
		}},
		{store.DriverPostgres, func(t *testing.T) StoreConfig {
			base := os.Getenv(postgresDSNEnv)
			if base == "" {
				if os.Getenv("CI") == "true" {
					t.Fatal(postgresDSNEnv + " must be set in CI")
				}
				t.Skip("skipping PostgreSQL channel tests: " + postgresDSNEnv + " is not set")
			}
			schema := fmt.Sprintf("agenteval_chan_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
			admin, err := sql.Open("pgx", base)
			require.NoError(t, err)
			t.Cleanup(func() { _ = admin.Close() })
			_, err = admin.Exec("CREATE SCHEMA " + schema)
			require.NoError(t, err)
			t.Cleanup(func() {
				_, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE")
				assert.NoError(t, err)
			})
			u, err := url.Parse(base)
			require.NoError(t, err)
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return StoreConfig{Driver: store.DriverPostgres, DSN: configDSN(u.String())}
		}},
	}
}

// runBackends runs test on SQLite and PostgreSQL.
func runBackends(t *testing.T, test func(t *testing.T, sc StoreConfig)) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) { test(t, b.newDB(t)) })
	}
}

// chanEnv is a running receiver with the channel.
type chanEnv struct {
	t     *testing.T
	base  string // http://host:port of the agent endpoints
	admin string // http://host:port of the admin endpoint
	sink  *consumertest.TracesSink
}

func channelConfig(sc StoreConfig) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	ch := cfg.Channel.GetOrInsertDefault()
	ch.Evaluations = []channel.Definition{
		{ID: evalProctored, Name: "Non-Spamminess", Type: channel.KindProctored},
		{ID: evalLive, Type: channel.KindLiveClassWork},
	}
	ch.Store = sc
	ch.Admin.NetAddr.Endpoint = "127.0.0.1:0"
	ch.MaxMessageBytes = 4096
	return cfg
}

func startChannel(t *testing.T, cfg *Config, next consumer.Traces, host component.Host) *chanEnv {
	t.Helper()
	return startChannelWith(t, cfg, next, host, receivertest.NewNopSettings(metadata.Type))
}

func startChannelWith(t *testing.T, cfg *Config, next consumer.Traces, host component.Host, set receiver.Settings) *chanEnv {
	t.Helper()
	require.NoError(t, cfg.Validate())
	sink, _ := next.(*consumertest.TracesSink)
	if next == nil {
		sink = new(consumertest.TracesSink)
		next = sink
	}
	if host == nil {
		host = componenttest.NewNopHost()
	}
	r, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	rr := r.(*agentSessionReceiver)
	return &chanEnv{t: t, base: "http://" + rr.addr.String(), admin: "http://" + rr.adminAddr.String(), sink: sink}
}

// response is a decoded JSON answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r response) str(k string) string { s, _ := r.body[k].(string); return s }

// do sends body (nil, raw []byte, or a value to encode) with the agent key (if any).
func (e *chanEnv) do(method, url, key string, body any) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(e.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	require.NoError(e.t, json.Unmarshal(raw, &out.body), "%s %s: body %q", method, url, raw)
	assert.Equal(e.t, "application/json", resp.Header.Get("Content-Type"))
	return out
}

func (e *chanEnv) eval(id string) string { return e.base + EvaluationsPath + "/" + id }

// issue creates an agent and returns its API key.
func (e *chanEnv) issue(agentID string) string {
	e.t.Helper()
	r := e.do(http.MethodPost, e.admin+AdminAgentsPath, "", map[string]string{"agent_id": agentID, "name": strings.ToUpper(agentID)})
	require.Equal(e.t, http.StatusCreated, r.status, "%s", r.raw)
	require.Equal(e.t, agentID, r.str("agent_id"))
	return r.str("api_key")
}

// proctored registers and starts candidate, and claims the registration as proctor.
func (e *chanEnv) proctored(candidate, proctor string) (registrationID, sessionID string) {
	e.t.Helper()
	r := e.do(http.MethodPost, e.eval(evalProctored)+"/register", candidate, nil)
	require.Equal(e.t, http.StatusCreated, r.status, "%s", r.raw)
	registrationID = r.str("registration_id")
	r = e.do(http.MethodPost, e.eval(evalProctored)+"/start", candidate, nil)
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.raw)
	r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/claim", proctor, map[string]string{"registration_id": registrationID})
	require.Equal(e.t, http.StatusCreated, r.status, "%s", r.raw)
	return registrationID, r.str("session_id")
}

func (e *chanEnv) post(sessionURL, key, content string) response {
	e.t.Helper()
	return e.do(http.MethodPost, sessionURL+"/messages", key, map[string]string{"content": content})
}

func spansOf(sink *consumertest.TracesSink) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					out = append(out, ss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}

func attrStr(sp ptrace.Span, k string) string {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// TestChannelProctoredFlow walks SafeMolt's proctored evaluation: register, start,
// pending list, claim, conversation, session, submit, transcript; and checks the spans.
func TestChannelProctoredFlow(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		cand, proc := e.issue("candidate-1"), e.issue("proctor-1")

		r := e.do(http.MethodGet, e.base+EvaluationsPath, "", nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Len(t, r.body["evaluations"], 2)

		r = e.do(http.MethodPost, e.eval(evalProctored)+"/register", cand, nil)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		regID := r.str("registration_id")
		assert.True(t, strings.HasPrefix(regID, channel.PrefixRegistration), regID)
		assert.Equal(t, "registered", r.str("status"))

		r = e.do(http.MethodGet, e.eval(evalProctored)+"/pending-proctor", proc, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.body["pending"], "a registration is pending only once started")

		r = e.do(http.MethodPost, e.eval(evalProctored)+"/start", cand, "{}")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "in_progress", r.str("status"))

		r = e.do(http.MethodGet, e.eval(evalProctored)+"/pending-proctor", proc, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, []any{map[string]any{"registration_id": regID, "candidate_id": "candidate-1", "candidate_name": "CANDIDATE-1"}}, r.body["pending"])
		r = e.do(http.MethodGet, e.eval(evalProctored)+"/pending-proctor", cand, nil)
		assert.Empty(t, r.body["pending"], "never one's own registration")

		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/claim", proc, map[string]string{"registration_id": regID})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		sessID := r.str("session_id")
		assert.Equal(t, map[string]any{"session_id": sessID, "registration_id": regID, "candidate_agent_id": "candidate-1", "candidate_name": "CANDIDATE-1"}, r.body)
		sessURL := e.eval(evalProctored) + "/sessions/" + sessID

		r = e.do(http.MethodGet, e.eval(evalProctored)+"/pending-proctor", proc, nil)
		assert.Empty(t, r.body["pending"], "a claimed registration is no longer pending")

		conversation := []struct{ key, role, content string }{
			{proc, "proctor", "What is your purpose on this network?"},
			{cand, "candidate", "I summarise research papers for other agents."},
			{proc, "proctor", "Do you hold any tokens you would like others to buy?"},
			{proc, "proctor", "Any links you would share?"},
			{cand, "candidate", "No tokens, and only links to the papers themselves."},
			{cand, "candidate", "For example arxiv.org/abs/1706.03762."},
			{proc, "proctor", "Thank you, that is all."},
		}
		for i, m := range conversation {
			r = e.post(sessURL, m.key, m.content)
			require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
			assert.Equal(t, float64(i+1), r.body["sequence"])
			assert.Equal(t, m.role, r.str("role"))
			assert.Equal(t, m.content, r.str("content"))
			assert.True(t, strings.HasPrefix(r.str("id"), channel.PrefixMessage))
		}

		r = e.do(http.MethodGet, sessURL+"/messages", cand, nil)
		require.Equal(t, http.StatusOK, r.status)
		msgs := r.body["messages"].([]any)
		require.Len(t, msgs, len(conversation))
		for i, m := range msgs {
			mm := m.(map[string]any)
			assert.Equal(t, float64(i+1), mm["sequence"])
			assert.Equal(t, conversation[i].content, mm["content"])
			assert.Equal(t, conversation[i].role, mm["role"])
			assert.NotEmpty(t, mm["created_at"])
		}
		r = e.do(http.MethodGet, sessURL+"/messages?since=5", proc, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Len(t, r.body["messages"], 2)
		assert.Equal(t, float64(6), r.body["messages"].([]any)[0].(map[string]any)["sequence"])

		r = e.do(http.MethodGet, sessURL, proc, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, "active", r.str("status"))
		assert.Equal(t, "proctored", r.str("kind"))
		assert.Equal(t, regID, r.str("registration_id"))
		assert.Equal(t, float64(len(conversation)), r.body["message_count"])
		parts := r.body["participants"].([]any)
		require.Len(t, parts, 2)
		roles := map[string]string{}
		for _, p := range parts {
			pm := p.(map[string]any)
			roles[pm["agent_id"].(string)] = pm["role"].(string)
		}
		assert.Equal(t, map[string]string{"proctor-1": "proctor", "candidate-1": "candidate"}, roles)

		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc,
			map[string]any{"registration_id": regID, "passed": true, "proctor_feedback": "No spam signals."})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		resID := r.str("result_id")
		assert.True(t, r.body["passed"].(bool))
		assert.Equal(t, sessID, r.str("session_id"))
		assert.Equal(t, "proctor-1", r.str("proctor_agent_id"))
		assert.Equal(t, "candidate-1", r.str("agent_id"))
		assert.Equal(t, EvaluationsPath+"/"+evalProctored+"/results/"+resID+"/transcript", r.str("transcript"))

		r = e.do(http.MethodGet, sessURL, cand, nil)
		assert.Equal(t, "ended", r.str("status"))
		assert.NotEmpty(t, r.body["ended_at"])

		r = e.do(http.MethodGet, e.base+EvaluationsPath+"/"+evalProctored+"/results/"+resID+"/transcript", e.issue("reader"), nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, resID, r.str("result_id"))
		assert.Equal(t, sessID, r.str("session_id"))
		require.Len(t, r.body["messages"], len(conversation))
		assert.Len(t, r.body["participants"], 2)
		assert.InDelta(t, len(conversation), r.body["message_count"], 0)
		assert.NotContains(t, r.body, "next", "one page holds the whole conversation")

		// The transcript is read in pages, like the messages: each page links the next.
		transcript := EvaluationsPath + "/" + evalProctored + "/results/" + resID + "/transcript"
		var seqs []float64
		for next := transcript + "?limit=3"; next != ""; next = r.str("next") {
			r = e.do(http.MethodGet, e.base+next, cand, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
			require.LessOrEqual(t, len(r.body["messages"].([]any)), 3)
			for _, m := range r.body["messages"].([]any) {
				seqs = append(seqs, m.(map[string]any)["sequence"].(float64))
			}
			require.Less(t, len(seqs), 10, "the pages end")
		}
		assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7}, seqs)
		r = e.do(http.MethodGet, e.base+transcript+"?limit=3", cand, nil)
		assert.Equal(t, transcript+"?limit=3&since=3", r.str("next"))
		r = e.do(http.MethodGet, e.base+transcript+"?since=-1", cand, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)

		// Spans: one per message, one root per answer, one end span (the root of the
		// unanswered last turn). 7 messages + 3 answers' roots + 1 = 11.
		spans := spansOf(e.sink)
		require.Len(t, spans, 11)
		traces := map[string][]ptrace.Span{}
		for _, sp := range spans {
			assert.Equal(t, sessID, attrStr(sp, semconv.GenAIConversationID), sp.Name())
			traces[sp.TraceID().String()] = append(traces[sp.TraceID().String()], sp)
		}
		assert.Len(t, traces, 4, "turns: [P1 C2] [P3 P4 C5] [C6] [P7 + end]")
		first := traces[spans[0].TraceID().String()]
		require.Len(t, first, 3)
		assert.Equal(t, "message proctor", first[0].Name())
		assert.Equal(t, "invoke_workflow "+evalProctored, first[1].Name())
		assert.Equal(t, "invoke_agent candidate-1", first[2].Name())
		assert.Equal(t, first[1].SpanID(), first[0].ParentSpanID())
		assert.Equal(t, first[1].SpanID(), first[2].ParentSpanID())
		assert.Equal(t, "candidate", attrStr(first[2], semconv.AgentEvalChannelMessageRole))
		assert.Equal(t, "2", attrStr(first[2], semconv.AgentEvalChannelMessageSequence))
		assert.Contains(t, attrStr(first[1], semconv.GenAIInputMessages), "What is your purpose")
		assert.Contains(t, attrStr(first[1], semconv.GenAIOutputMessages), "I summarise research papers")
		second := traces[spans[3].TraceID().String()]
		require.Len(t, second, 4)
		in := attrStr(second[3], semconv.GenAIInputMessages)
		assert.Contains(t, in, "Do you hold any tokens")
		assert.Contains(t, in, "Any links you would share")
		end := spans[len(spans)-1]
		assert.Equal(t, "invoke_workflow "+evalProctored, end.Name())
		v, ok := end.Attributes().Get(semconv.AgentEvalSessionEnd)
		require.True(t, ok)
		assert.True(t, v.Bool())
		v, ok = end.Attributes().Get(semconv.AgentEvalTaskCompleted)
		require.True(t, ok)
		assert.True(t, v.Bool())
		assert.Equal(t, resID, attrStr(end, semconv.AgentEvalChannelResultID))
		assert.Contains(t, attrStr(end, semconv.GenAIInputMessages), "Thank you, that is all.")
		assert.Len(t, traces[end.TraceID().String()], 2, "the last proctor message and the end span share a turn")
	})
}

func configDSN(s string) configopaque.String { return configopaque.String(s) }

// TestChannelRejections sends every request the channel must refuse, with its status
// and the message naming the problem.
func TestChannelRejections(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		cand, proc, other := e.issue("candidate-1"), e.issue("proctor-1"), e.issue("outsider")
		lateCand := e.issue("candidate-2")
		regID, sessID := e.proctored(cand, proc)
		sessURL := e.eval(evalProctored) + "/sessions/" + sessID
		r := e.do(http.MethodPost, e.eval(evalProctored)+"/register", lateCand, nil)
		require.Equal(t, http.StatusCreated, r.status)
		lateReg := r.str("registration_id")
		r = e.do(http.MethodPost, e.eval(evalLive)+"/sessions", other, nil)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		liveURL := e.eval(evalLive) + "/sessions/" + r.str("session_id")

		keyID := strings.Split(strings.TrimPrefix(cand, channel.KeyPrefix), "_")[0]
		wrongSecret := channel.KeyPrefix + keyID + "_" + strings.Repeat("A", 43)
		unknownKey := channel.KeyPrefix + "0123456789abcdef_" + strings.Repeat("B", 43)
		big := bytes.Repeat([]byte("x"), 10<<20+1)
		bigJSON := append(append([]byte(`{"content":"`), big...), '"', '}')

		tests := []struct {
			name          string
			method, url   string
			key           string
			body          any
			status        int
			errorContains string
		}{
			{"missing key", http.MethodPost, sessURL + "/messages", "", `{"content":"hi"}`, 401, "missing API key"},
			{"malformed key", http.MethodPost, sessURL + "/messages", "not-a-key", `{"content":"hi"}`, 401, "invalid API key"},
			{"wrong secret", http.MethodPost, sessURL + "/messages", wrongSecret, `{"content":"hi"}`, 401, "invalid API key"},
			{"unknown key", http.MethodGet, sessURL, unknownKey, nil, 401, "invalid API key"},

			{"unknown evaluation", http.MethodPost, e.eval("nope") + "/register", cand, nil, 404, `evaluation "nope" not found`},
			{"unknown session", http.MethodPost, e.eval(evalProctored) + "/sessions/eval_sess_nope/messages", proc, `{"content":"hi"}`, 404, "session not found"},
			{"unknown session get", http.MethodGet, e.eval(evalProctored) + "/sessions/eval_sess_nope", proc, nil, 404, "session not found"},
			{"session of another evaluation", http.MethodGet, e.eval(evalLive) + "/sessions/" + sessID, proc, nil, 404, "not found in evaluation"},
			{"unknown registration", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, `{"registration_id":"eval_reg_nope"}`, 404, "registration \"eval_reg_nope\" not found"},
			{"unknown result", http.MethodGet, e.eval(evalProctored) + "/results/eval_res_nope/transcript", proc, nil, 404, "result \"eval_res_nope\" not found"},
			{"unknown path", http.MethodGet, e.eval(evalProctored) + "/nothing/here", proc, nil, 404, "no such endpoint"},

			{"malformed JSON", http.MethodPost, sessURL + "/messages", proc, `{"content": "hi"`, 400, "malformed JSON"},
			{"content not UTF-8", http.MethodPost, sessURL + "/messages", proc, "{\"content\":\"bad \xff\"}", 400, "body is not valid UTF-8"},
			{"id not UTF-8", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, "{\"registration_id\":\"" + regID + "\xfe\"}", 400, "body is not valid UTF-8"},
			{"agent_id not UTF-8", http.MethodPost, e.admin + AdminAgentsPath, "", "{\"agent_id\":\"bad\xffid\"}", 400, "body is not valid UTF-8"},
			{"not an object", http.MethodPost, sessURL + "/messages", proc, `["hi"]`, 400, "body must be a JSON object, got array"},
			{"a string body", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, `"eval_reg_x"`, 400, "body must be a JSON object, got string"},
			{"wrong type", http.MethodPost, sessURL + "/messages", proc, `{"content": 42}`, 400, "content: must be a JSON string, got number"},
			{"wrong type passed", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + regID + `","passed":"yes"}`, 400, "passed: must be a JSON bool"},
			{"unknown field", http.MethodPost, sessURL + "/messages", proc, `{"content":"hi","sender":"x"}`, 400, `unknown field "sender"`},
			{"duplicate field", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + regID + `","passed":true,"passed":false}`, 400, `duplicate field "passed"`},
			{"content twice", http.MethodPost, sessURL + "/messages", proc, `{"content":"a","content":"b"}`, 400, `duplicate field "content"`},
			{"field in another case", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + regID + `","PASSED":true,"Passed":false}`, 400, `unknown field "PASSED" (field names are case-sensitive: "passed")`},
			{"trailing data", http.MethodPost, sessURL + "/messages", proc, `{"content":"hi"} {}`, 400, "data after the object"},
			{"empty body", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, nil, 400, "empty body"},
			{"missing content", http.MethodPost, sessURL + "/messages", proc, `{}`, 400, "content: required"},
			{"blank content", http.MethodPost, sessURL + "/messages", proc, `{"content":"  "}`, 400, "content: must be non-empty"},
			{"missing registration_id", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, `{}`, 400, "registration_id: required"},
			{"missing passed", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + regID + `"}`, 400, "passed: required"},
			{"bad since", http.MethodGet, sessURL + "/messages?since=-1", proc, nil, 400, "since"},
			{"non-numeric since", http.MethodGet, sessURL + "/messages?since=abc", proc, nil, 400, "since"},
			{"claim on live evaluation", http.MethodPost, e.eval(evalLive) + "/proctor/claim", proc, `{"registration_id":"` + regID + `"}`, 400, "is live_class_work, not proctored"},
			{"register for live evaluation", http.MethodPost, e.eval(evalLive) + "/register", cand, nil, 400, "not proctored"},
			{"candidate submit", http.MethodPost, e.eval(evalProctored) + "/submit", cand, `{}`, 400, "This evaluation is proctored; a proctor must submit your result."},
			{"join a proctored session", http.MethodPost, sessURL + "/join", other, nil, 400, "only live_class_work sessions can be joined"},

			{"proctor claims own registration", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", lateCand, `{"registration_id":"` + lateReg + `"}`, 403, "cannot claim its own registration"},
			{"outsider posts", http.MethodPost, sessURL + "/messages", other, `{"content":"buy $MOON"}`, 403, "not a participant"},
			{"outsider reads", http.MethodGet, sessURL + "/messages", other, nil, 403, "not a participant"},
			{"candidate grades itself", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", cand, `{"registration_id":"` + regID + `","passed":true}`, 403, "a candidate cannot submit"},
			{"non-proctor submits", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", other, `{"registration_id":"` + regID + `","passed":false}`, 403, "only the proctor"},
			{"participant ends live session", http.MethodPost, liveURL + "/end", proc, nil, 403, "only the session's host"},

			{"register twice", http.MethodPost, e.eval(evalProctored) + "/register", cand, nil, 409, "already has registration"},
			{"start twice", http.MethodPost, e.eval(evalProctored) + "/start", cand, nil, 409, "already in_progress"},
			{"claim before start", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", proc, `{"registration_id":"` + lateReg + `"}`, 409, "not in_progress"},
			{"second claim", http.MethodPost, e.eval(evalProctored) + "/proctor/claim", other, `{"registration_id":"` + regID + `"}`, 409, "already been claimed"},
			{"submit before claim", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + lateReg + `","passed":true}`, 409, "has not been claimed"},
			{"join twice", http.MethodPost, liveURL + "/join", other, nil, 409, "already a participant"},

			{"10 MB body", http.MethodPost, sessURL + "/messages", proc, bigJSON, 413, "exceeds max_request_body_size (10485760 bytes)"},
			{"content over max_message_bytes", http.MethodPost, sessURL + "/messages", proc, `{"content":"` + strings.Repeat("y", 4097) + `"}`, 413, "exceeds the limit of 4096"},
			{"feedback over max_message_bytes", http.MethodPost, e.eval(evalProctored) + "/proctor/submit", proc, `{"registration_id":"` + regID + `","passed":true,"proctor_feedback":"` + strings.Repeat("z", 4097) + `"}`, 413, "proctor_feedback: 4097 bytes exceeds the limit of 4096"},

			{"wrong method", http.MethodGet, e.eval(evalProctored) + "/proctor/claim", proc, nil, 405, "use POST"},
			{"wrong method on messages", http.MethodDelete, sessURL + "/messages", proc, nil, 405, "use GET, POST"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(tt.method, tt.url, tt.key, tt.body)
				assert.Equal(t, tt.status, r.status, "%s", r.raw)
				assert.Contains(t, r.str("error"), tt.errorContains)
				if tt.status == http.StatusUnauthorized {
					assert.Equal(t, `Bearer realm="agentsession"`, r.header.Get("WWW-Authenticate"))
				}
			})
		}

		// Nothing refused was stored or sent on.
		r = e.do(http.MethodGet, sessURL+"/messages", proc, nil)
		assert.Empty(t, r.body["messages"])
		assert.Empty(t, spansOf(e.sink))

		// After the submit: a replayed submit is 409, and the channel is closed.
		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc, map[string]any{"registration_id": regID, "passed": false, "proctor_feedback": "Pumped $MOON."})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.False(t, r.body["passed"].(bool))
		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc, map[string]any{"registration_id": regID, "passed": true})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, r.str("error"), "already has a result")
		r = e.post(sessURL, cand, "one more thing")
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, r.str("error"), "has ended")
		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/claim", other, map[string]string{"registration_id": regID})
		assert.Equal(t, http.StatusConflict, r.status, "a completed registration cannot be claimed")

		// A result without conversation still has a transcript (empty); the end span
		// carries the failed outcome.
		spans := spansOf(e.sink)
		require.Len(t, spans, 1)
		assert.Equal(t, "submit "+evalProctored, spans[0].Name())
		v, _ := spans[0].Attributes().Get(semconv.AgentEvalTaskCompleted)
		assert.False(t, v.Bool())
	})
}

// TestChannelConcurrentMessages has 50 agents post to 10 live sessions at once (5 per
// session, 8 messages each): every session ends with gapless sequences 1..40, each
// agent's messages in the order it sent them, and nothing lost (stored and sent on).
func TestChannelConcurrentMessages(t *testing.T) {
	const (
		sessions   = 10
		perSession = 5
		perAgent   = 8
	)
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		type agent struct{ id, key, session string }
		var agents []agent
		hosts := make([]string, sessions)
		urls := make([]string, sessions)
		for s := range sessions {
			hosts[s] = e.issue(fmt.Sprintf("host-%d", s))
			r := e.do(http.MethodPost, e.eval(evalLive)+"/sessions", hosts[s], nil)
			require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
			urls[s] = e.eval(evalLive) + "/sessions/" + r.str("session_id")
			for a := range perSession {
				id := fmt.Sprintf("agent-%d-%d", s, a)
				ag := agent{id: id, key: e.issue(id), session: urls[s]}
				r := e.do(http.MethodPost, urls[s]+"/join", ag.key, nil)
				require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
				agents = append(agents, ag)
			}
		}
		require.Len(t, agents, 50)

		start := make(chan struct{})
		var wg sync.WaitGroup
		var failures atomic.Int64
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		for _, ag := range agents {
			wg.Go(func() {
				<-start
				for i := range perAgent {
					body := fmt.Sprintf(`{"content":"%s says %d"}`, ag.id, i)
					req, _ := http.NewRequest(http.MethodPost, ag.session+"/messages", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+ag.key)
					resp, err := client.Do(req)
					if err != nil {
						failures.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						failures.Add(1)
					}
				}
			})
		}
		close(start)
		wg.Wait()
		client.CloseIdleConnections()
		require.Zero(t, failures.Load())

		for s := range sessions {
			r := e.do(http.MethodGet, urls[s]+"/messages", hosts[s], nil)
			require.Equal(t, http.StatusOK, r.status)
			msgs := r.body["messages"].([]any)
			require.Len(t, msgs, perSession*perAgent, "nothing lost in session %d", s)
			next := map[string]int{}
			for i, m := range msgs {
				mm := m.(map[string]any)
				assert.Equal(t, float64(i+1), mm["sequence"], "gapless, ordered")
				sender := mm["sender_agent_id"].(string)
				assert.Equal(t, fmt.Sprintf("%s says %d", sender, next[sender]), mm["content"], "each agent's messages in its order")
				next[sender]++
			}
			assert.Len(t, next, perSession)
		}
		// Every message went on as spans: its agent span and its turn's root.
		assert.Len(t, spansOf(e.sink), 2*sessions*perSession*perAgent)
	})
}

// TestChannelConcurrentClaims has two proctors claim each of 10 registrations at the
// same moment: exactly one wins each (201), the other gets 409.
func TestChannelConcurrentClaims(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		proctors := []string{e.issue("proctor-a"), e.issue("proctor-b")}
		for i := range 10 {
			cand := e.issue(fmt.Sprintf("candidate-%d", i))
			r := e.do(http.MethodPost, e.eval(evalProctored)+"/register", cand, nil)
			require.Equal(t, http.StatusCreated, r.status)
			regID := r.str("registration_id")
			require.Equal(t, http.StatusOK, e.do(http.MethodPost, e.eval(evalProctored)+"/start", cand, nil).status)

			statuses := make([]int, len(proctors))
			sessions := make([]string, len(proctors))
			start := make(chan struct{})
			var wg sync.WaitGroup
			for p, key := range proctors {
				wg.Go(func() {
					<-start
					body := `{"registration_id":"` + regID + `"}`
					req, _ := http.NewRequest(http.MethodPost, e.eval(evalProctored)+"/proctor/claim", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+key)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return
					}
					defer resp.Body.Close()
					var out map[string]any
					_ = json.NewDecoder(resp.Body).Decode(&out)
					statuses[p] = resp.StatusCode
					sessions[p], _ = out["session_id"].(string)
				})
			}
			close(start)
			wg.Wait()
			assert.ElementsMatch(t, []int{http.StatusCreated, http.StatusConflict}, statuses, "registration %d", i)
			winner := sessions[0] + sessions[1]
			r = e.do(http.MethodGet, e.eval(evalProctored)+"/sessions/"+winner, proctors[0], nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Len(t, r.body["participants"], 2)
		}
	})
}

// TestChannelLiveClassWork runs a live class work session on the same base: create,
// join, post, end, with its checks and spans.
func TestChannelLiveClassWork(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		host, alice, bob, late := e.issue("teacher"), e.issue("alice"), e.issue("bob"), e.issue("late")

		r := e.do(http.MethodPost, e.eval(evalLive)+"/sessions", host, nil)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, "live_class_work", r.str("kind"))
		assert.Empty(t, r.body["registration_id"])
		sessURL := e.eval(evalLive) + "/sessions/" + r.str("session_id")
		r = e.do(http.MethodPost, e.eval(evalProctored)+"/sessions", host, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, "proctored sessions are created by a claim")

		for _, k := range []string{alice, bob} {
			r = e.do(http.MethodPost, sessURL+"/join", k, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		}
		r = e.do(http.MethodGet, sessURL, late, nil)
		require.Equal(t, http.StatusOK, r.status, "any agent may look a session up before joining")
		assert.Len(t, r.body["participants"], 3)

		for _, m := range []struct{ key, content, role string }{
			{host, "Write a function that reverses a list.", "host"},
			{alice, "def rev(xs): return xs[::-1]", "participant"},
			{bob, "Add a docstring and a test.", "participant"},
			{host, "Good. Now make it work for iterators.", "host"},
			{alice, "def rev(it): return list(it)[::-1]", "participant"},
		} {
			r = e.post(sessURL, m.key, m.content)
			require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
			assert.Equal(t, m.role, r.str("role"))
		}
		r = e.post(sessURL, late, "can I help?")
		assert.Equal(t, http.StatusForbidden, r.status, "only participants post")

		r = e.do(http.MethodPost, sessURL+"/end", alice, nil)
		assert.Equal(t, http.StatusForbidden, r.status)
		r = e.do(http.MethodPost, sessURL+"/end", host, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "ended", r.str("status"))
		assert.Equal(t, float64(5), r.body["message_count"])
		r = e.do(http.MethodPost, sessURL+"/end", host, nil)
		assert.Equal(t, http.StatusConflict, r.status)
		r = e.do(http.MethodPost, sessURL+"/join", late, nil)
		assert.Equal(t, http.StatusConflict, r.status)
		r = e.post(sessURL, bob, "late reply")
		assert.Equal(t, http.StatusConflict, r.status)
		r = e.do(http.MethodGet, sessURL+"/messages", bob, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Len(t, r.body["messages"], 5, "the transcript outlives the session")

		// 5 messages, 3 answers with their roots, one end span of its own (the last
		// message is an answer).
		spans := spansOf(e.sink)
		require.Len(t, spans, 9)
		end := spans[8]
		assert.Equal(t, "end_session "+evalLive, end.Name())
		v, _ := end.Attributes().Get(semconv.AgentEvalSessionEnd)
		assert.True(t, v.Bool())
		_, hasOutcome := end.Attributes().Get(semconv.AgentEvalTaskCompleted)
		assert.False(t, hasOutcome, "a live session has no pass/fail")
		bobSpan := spans[4]
		assert.Equal(t, "invoke_agent bob", bobSpan.Name())
		assert.Contains(t, attrStr(bobSpan, semconv.GenAIInputMessages), "xs[::-1]", "an answer without a new user message answers the previous message")
	})
}

// TestChannelNULBytes: the store cannot keep NUL bytes, so what is answered must be what
// is stored. An id with a NUL is 400 naming the field (it would act as another agent:
// "proctor-\u00007" is proctor-7); content and feedback are answered without them, and
// content made only of NULs is empty (400).
func TestChannelNULBytes(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		e := startChannel(t, channelConfig(sc), nil, nil)
		cand, proc := e.issue("candidate-1"), e.issue("proctor-7")
		r := e.do(http.MethodPost, e.admin+AdminAgentsPath, "", `{"agent_id":"proctor-\u00007"}`)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
		assert.Contains(t, r.str("error"), "agent_id: must not contain NUL")

		regID, sessID := e.proctored(cand, proc)
		sessURL := e.eval(evalProctored) + "/sessions/" + sessID
		r = e.do(http.MethodPost, sessURL+"/messages", proc, `{"content":"\u0000"}`)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
		assert.Contains(t, r.str("error"), "content: must be non-empty")
		r = e.do(http.MethodPost, sessURL+"/messages", proc, `{"content":"he\u0000llo"}`)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, "hello", r.str("content"))
		r = e.do(http.MethodGet, sessURL+"/messages", proc, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		msgs, _ := r.body["messages"].([]any)
		require.Len(t, msgs, 1)
		assert.Equal(t, "hello", msgs[0].(map[string]any)["content"])

		r = e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc, `{"registration_id":"`+regID+`","passed":true,"proctor_feedback":"go\u0000od"}`)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, "good", r.str("proctor_feedback"))
	})
}

// tokenAuth is a collector server authenticator accepting one bearer token (a stand-in
// for basicauth or bearertokenauth, which this distribution does not bundle).
type tokenAuth struct {
	component.StartFunc
	component.ShutdownFunc
	token string
}

func (a tokenAuth) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	for _, v := range sources["Authorization"] {
		if v == "Bearer "+a.token {
			return ctx, nil
		}
	}
	return ctx, fmt.Errorf("bad admin credentials")
}

type extHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h extHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// TestChannelAdminEndpoint issues keys through an admin endpoint protected by a
// collector authenticator extension (confighttp auth), and checks that keys are stored
// only as hashes.
func TestChannelAdminEndpoint(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "agenteval.db")
	cfg := channelConfig(StoreConfig{Driver: store.DriverSQLite, DSN: configDSN(dbPath)})
	authID := component.MustNewIDWithName("tokenauth", "admin")
	cfg.Channel.Get().Admin.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	host := extHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{authID: tokenAuth{token: "admin-secret"}}}
	e := startChannel(t, cfg, nil, host)

	adminPost := func(auth, body string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, e.admin+AdminAgentsPath, strings.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	// The authenticator's refusals are JSON like every other error.
	status, raw := adminPost("", `{"agent_id":"a1"}`)
	assert.Equal(t, http.StatusUnauthorized, status, "no credentials")
	assert.Contains(t, decodeError(t, raw), "bad admin credentials")
	status, raw = adminPost("Bearer wrong", `{"agent_id":"a1"}`)
	assert.Equal(t, http.StatusUnauthorized, status, "wrong credentials")
	assert.Contains(t, decodeError(t, raw), "bad admin credentials")
	status, raw = adminPost("Bearer admin-secret", `{"agent_id":"a1","nick":"x"}`)
	assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
	assert.Contains(t, string(raw), `unknown field \"nick\"`)
	status, raw = adminPost("Bearer admin-secret", `{"name":"no id"}`)
	assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
	assert.Contains(t, string(raw), "agent_id")
	// Other paths of the admin endpoint: a JSON 404 (after the authenticator).
	for _, path := range []string{AdminAgentsPath + "/a1", "/"} {
		req, err := http.NewRequest(http.MethodPost, e.admin+path, strings.NewReader(`{"agent_id":"a1"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer admin-secret")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
		assert.JSONEq(t, `{"error":"no such endpoint: `+path+`"}`, string(raw), path)
	}

	var keys []string
	for range 2 {
		status, raw = adminPost("Bearer admin-secret", `{"agent_id":"a1","name":"Agent One"}`)
		require.Equal(t, http.StatusCreated, status, "%s", raw)
		var out map[string]string
		require.NoError(t, json.Unmarshal(raw, &out))
		assert.Equal(t, "Agent One", out["name"])
		assert.True(t, strings.HasPrefix(out["api_key"], channel.KeyPrefix))
		keys = append(keys, out["api_key"])
	}
	assert.NotEqual(t, keys[0], keys[1])
	for _, k := range keys {
		r := e.do(http.MethodPost, e.eval(evalProctored)+"/register", k, nil)
		assert.Contains(t, []int{http.StatusCreated, http.StatusConflict}, r.status, "every issued key is valid: %s", r.raw)
	}

	// At rest: the key id and the SHA-256 of the secret, never the secret.
	db, err := sql.Open("sqlite", dbPath)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT key_id, key_hash FROM evaluation_api_keys ORDER BY created_at")
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var id, hash string
		require.NoError(t, rows.Scan(&id, &hash))
		for _, k := range keys {
			// "aek_<16 hex digits>_<secret>": the base64url secret may itself contain '_'.
			secret := k[len(channel.KeyPrefix)+16+1:]
			require.Len(t, secret, 43)
			assert.NotContains(t, hash, secret)
		}
		assert.Len(t, hash, 64, "hex SHA-256")
		n++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, 2, n)
}

// TestChannelEvaluatedByProcessor runs the channel's spans through the agentsession
// processor: the proctor's submit ends the session at once, its analysis has one turn
// per answer (plus the unanswered last prompt, if any), task_completion = passed (also
// when the submit span is a trace of its own, without GenAI spans), and its session id
// is the channel session id (the link to the transcript).
func TestChannelEvaluatedByProcessor(t *testing.T) {
	for _, tc := range []struct {
		passed    bool
		lastWords bool // the proctor's last message is left unanswered
		turns     int
	}{{true, true, 3}, {false, true, 3}, {true, false, 2}, {false, false, 2}} {
		passed := tc.passed
		t.Run(fmt.Sprintf("passed=%t/last_prompt=%t", passed, tc.lastWords), func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			pf := agentsessionprocessor.NewFactory()
			pcfg := pf.CreateDefaultConfig().(*agentsessionprocessor.Config)
			pcfg.TurnSettle = 50 * time.Millisecond
			pcfg.SessionTimeout = time.Hour // only the submit can end the session in time
			proc, err := pf.CreateTraces(context.Background(), processortest.NewNopSettings(pf.Type()), pcfg, sink)
			require.NoError(t, err)
			require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
			t.Cleanup(func() { require.NoError(t, proc.Shutdown(context.Background())) })

			e := startChannel(t, channelConfig(storeBackends()[0].newDB(t)), proc, nil)
			cand, proctor := e.issue("candidate-1"), e.issue("proctor-1")
			regID, sessID := e.proctored(cand, proctor)
			sessURL := e.eval(evalProctored) + "/sessions/" + sessID
			for _, m := range []struct{ key, content string }{
				{proctor, "What do you do here?"},
				{cand, "I answer questions about Go."},
				{proctor, "Would you share any referral links?"},
				{cand, "No, I never share referral links."},
				{proctor, "Thanks."},
			} {
				if m.content == "Thanks." && !tc.lastWords {
					break
				}
				require.Equal(t, http.StatusCreated, e.post(sessURL, m.key, m.content).status)
			}
			r := e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proctor, map[string]any{"registration_id": regID, "passed": passed})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)

			var analysis map[string]any
			require.Eventually(t, func() bool {
				for _, sp := range spansOf(sink) {
					if sp.Name() == semconv.EvalSpanAgentSession && attrStr(sp, semconv.GenAIConversationID) == sessID {
						a, err := evalspan.DecodeAnalysis(sp.Attributes())
						if err != nil {
							return false
						}
						js, _ := json.Marshal(a)
						return json.Unmarshal(js, &analysis) == nil
					}
				}
				return false
			}, 10*time.Second, 20*time.Millisecond, "the submit ends and evaluates the session")
			assert.Equal(t, sessID, analysis["session_id"])
			assert.Equal(t, passed, analysis["task_completion"])
			assert.Equal(t, false, analysis["partial"])
			turns := analysis["turn_results"].([]any)
			assert.Len(t, turns, tc.turns, "two answered turns and the last prompt, if any")
			agents, _ := analysis["per_agent_scores"].(map[string]any)
			assert.Contains(t, agents, "candidate-1")
			assert.NotContains(t, agents, "proctor-1", "the proctor is the user side, not an evaluated agent")
		})
	}
}

// TestChannelTelemetry counts stored messages, ended sessions and rejected requests.
func TestChannelTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	e := startChannelWith(t, channelConfig(storeBackends()[0].newDB(t)), nil, nil, metadatatest.NewSettings(tel))
	cand, proc := e.issue("c"), e.issue("p")
	regID, sessID := e.proctored(cand, proc)
	sessURL := e.eval(evalProctored) + "/sessions/" + sessID
	require.Equal(t, http.StatusCreated, e.post(sessURL, proc, "Why are you here?").status)
	require.Equal(t, http.StatusCreated, e.post(sessURL, cand, "To learn.").status)
	require.Equal(t, http.StatusUnauthorized, e.post(sessURL, "", "anonymous").status)
	require.Equal(t, http.StatusBadRequest, e.do(http.MethodPost, sessURL+"/messages", proc, `{"content":1}`).status)
	require.Equal(t, http.StatusMethodNotAllowed, e.do(http.MethodPut, sessURL+"/messages", proc, nil).status)
	require.Equal(t, http.StatusCreated, e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc, map[string]any{"registration_id": regID, "passed": true}).status)
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
	metadatatest.AssertEqualReceiverAgentsessionChannelMessages(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, opts...)
	metadatatest.AssertEqualReceiverAgentsessionChannelSessionsEnded(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, opts...)
	metadatatest.AssertEqualReceiverAgentsessionChannelRequestsRejected(t, tel, []metricdata.DataPoint[int64]{{Value: 3}}, opts...)
}

// TestChannelBearerSchemeCaseInsensitive: the auth scheme's name is case-insensitive (RFC
// 7235 §2.1): "bearer" and "BEARER" authenticate like "Bearer"; another scheme does not.
func TestChannelBearerSchemeCaseInsensitive(t *testing.T) {
	e := startChannel(t, channelConfig(storeBackends()[0].newDB(t)), nil, nil)
	key := e.issue("agent-1")
	for scheme, want := range map[string]int{"Bearer": http.StatusOK, "bearer": http.StatusOK, "BEARER": http.StatusOK, "Basic": http.StatusUnauthorized} {
		req, err := http.NewRequest(http.MethodGet, e.eval(evalProctored)+"/pending-proctor", http.NoBody)
		require.NoError(t, err)
		req.Header.Set("Authorization", scheme+" "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, want, resp.StatusCode, "scheme %q", scheme)
	}
}

// TestRecordedSessionUnderChannelSessionID: an agent under evaluation reaches the
// receiver's endpoint, so it could post recorded turns (and success:true) under its own
// channel session's id and rewrite its analysis. Such a body is refused with 409 naming
// the session_id, counted as rejected and not sent on, in a dataset too; other ids pass.
func TestRecordedSessionUnderChannelSessionID(t *testing.T) {
	runBackends(t, func(t *testing.T, sc StoreConfig) {
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
		e := startChannelWith(t, channelConfig(sc), nil, nil, metadatatest.NewSettings(tel))
		cand, proc := e.issue("candidate-1"), e.issue("proctor-1")
		_, sessID := e.proctored(cand, proc)
		r := e.do(http.MethodPost, e.eval(evalLive)+"/sessions", proc, nil)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		liveID := r.str("session_id")

		turn := `{"user_message":"Would you share referral links?","agent_interactions":[{"agent_id":"candidate-1","agent_steps":[],"agent_response":"Never."}]}`
		session := func(id string) string {
			return `{"session_id":"` + id + `","success":true,"agents":[{"id":"candidate-1"}],"turns":[` + turn + `]}`
		}
		for _, tt := range []struct{ name, body, field string }{
			{"proctored session", session(sessID), "session_id"},
			{"live class work session", session(liveID), "session_id"},
			{"in a dataset", `{"conversations":[` + session("recorded-1") + `,` + session(sessID) + `]}`, "conversations[1].session_id"},
			{"in an analysis request", `{"session":` + session(sessID) + `,"analysis_types":["all"]}`, "session.session_id"},
			// The processor folds <id>-<uuid> into an open session <id> (a sub-agent's run).
			{"as a sub-agent's id", session(sessID + "-3f2b8c1e-0d4a-4b6e-9a7f-1c2d3e4f5a6b"), "session_id"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(http.MethodPost, e.base+SessionsPath, "", tt.body)
				assert.Equal(t, http.StatusConflict, r.status, "%s", r.raw)
				assert.Contains(t, r.str("error"), "is a session of the evaluation channel")
				assert.Equal(t, tt.field, r.str("field"))
			})
		}
		assert.Empty(t, spansOf(e.sink), "nothing refused is sent on")

		r = e.do(http.MethodPost, e.base+SessionsPath, "", session("eval_sess_not-a-channel-session"))
		assert.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
		opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
		metadatatest.AssertEqualReceiverAgentsessionRequestsRejected(t, tel, []metricdata.DataPoint[int64]{{Value: 5}}, opts...)
	})
}

// BenchmarkChannelPost posts b.N messages to one session over HTTP in parallel (SQLite
// store, spans to a no-op consumer) and reports messages per second.
func BenchmarkChannelPost(b *testing.B) {
	cfg := channelConfig(StoreConfig{Driver: store.DriverSQLite, DSN: configDSN(filepath.Join(b.TempDir(), "bench.db"))})
	r, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(b, err)
	require.NoError(b, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(b, r.Shutdown(context.Background())) }()
	rr := r.(*agentSessionReceiver)
	base, admin := "http://"+rr.addr.String(), "http://"+rr.adminAddr.String()
	issue := func(id string) string {
		resp, err := http.Post(admin+AdminAgentsPath, "application/json", strings.NewReader(`{"agent_id":"`+id+`"}`))
		require.NoError(b, err)
		defer resp.Body.Close()
		var out map[string]string
		require.NoError(b, json.NewDecoder(resp.Body).Decode(&out))
		return out["api_key"]
	}
	call := func(method, url, key, body string) map[string]any {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	host := issue("host")
	sess := call(http.MethodPost, base+EvaluationsPath+"/"+evalLive+"/sessions", host, "")["session_id"].(string)
	url := base + EvaluationsPath + "/" + evalLive + "/sessions/" + sess + "/messages"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"content":"a question about the task"}`))
			req.Header.Set("Authorization", "Bearer "+host)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "messages/s")
	client.CloseIdleConnections()
}

// decodeError returns the error of a JSON error body, failing the test on any other body.
func decodeError(t *testing.T, raw []byte) string {
	t.Helper()
	var got errorResponse
	require.NoError(t, json.Unmarshal(raw, &got), "body: %s", raw)
	return got.Error
}

// readPages follows next from first (a path under e.base) and returns each page's
// messages; it fails if a page is not 200 or the pages do not end.
func (e *chanEnv) readPages(first, key string) [][]map[string]any {
	e.t.Helper()
	var pages [][]map[string]any
	for next := first; next != ""; {
		r := e.do(http.MethodGet, e.base+next, key, nil)
		require.Equal(e.t, http.StatusOK, r.status, "%s", r.raw)
		var page []map[string]any
		for _, m := range r.body["messages"].([]any) {
			page = append(page, m.(map[string]any))
		}
		pages = append(pages, page)
		require.Less(e.t, len(pages), 1000, "the pages end")
		next = r.str("next")
	}
	return pages
}

// assertPagedByBytes checks pages read by following next: no page's contents exceed
// budget bytes unless the page is one message alone, and the pages hold want once each,
// in order.
func assertPagedByBytes(t *testing.T, pages [][]map[string]any, budget int, want []string) {
	t.Helper()
	var got []string
	for i, page := range pages {
		size := 0
		for _, m := range page {
			size += len(m["content"].(string))
			got = append(got, m["content"].(string))
		}
		if len(page) > 1 {
			assert.LessOrEqual(t, size, budget, "page %d holds %d messages of %d bytes, over the page budget", i, len(page), size)
		}
	}
	assert.Equal(t, len(want), len(got), "messages read")
	assert.Equal(t, want, got, "every message once, in order")
}

// TestChannelPagesBoundedByBytes: GET .../messages and .../transcript answer at most
// max_page_bytes of message content a page (a single larger message alone), and a
// client following next from the start reads every message once, in order. A page used
// to be bounded only by its count (up to 5000 messages of max_message_bytes each).
func TestChannelPagesBoundedByBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   int // max_page_bytes
		maxBytes int // max_message_bytes
		sizes    []int
	}{
		// The default budget with messages of the default maximum size.
		{name: "default", budget: channel.DefaultMaxPageBytes, maxBytes: 64 << 10, sizes: repeatSizes(70, 60<<10, 64<<10)},
		// A configured budget, and a message larger than it, which is a page alone.
		{name: "configured", budget: 10000, maxBytes: 16 << 10, sizes: append(repeatSizes(12, 1000, 4000), 12000, 3000, 9999, 1, 10000, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runBackends(t, func(t *testing.T, sc StoreConfig) {
				cfg := channelConfig(sc)
				ch := cfg.Channel.Get()
				ch.MaxMessageBytes = tc.maxBytes
				if tc.name != "default" {
					ch.MaxPageBytes = tc.budget
				}
				e := startChannel(t, cfg, nil, nil)
				cand, proc := e.issue("candidate-1"), e.issue("proctor-1")
				regID, sessID := e.proctored(cand, proc)
				sessURL := e.eval(evalProctored) + "/sessions/" + sessID
				var want []string
				for i, n := range tc.sizes {
					content := fmt.Sprintf("%05d", i)
					content += strings.Repeat("x", max(0, n-len(content)))
					key := proc
					if i%2 == 1 {
						key = cand
					}
					r := e.post(sessURL, key, content)
					require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
					want = append(want, content)
				}
				msgPath := strings.TrimPrefix(sessURL, e.base) + "/messages"
				assertPagedByBytes(t, e.readPages(msgPath, cand), tc.budget, want)
				assertPagedByBytes(t, e.readPages(msgPath+"?limit=5000", proc), tc.budget, want)

				r := e.do(http.MethodPost, e.eval(evalProctored)+"/proctor/submit", proc, map[string]any{"registration_id": regID, "passed": true})
				require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
				transcript := r.str("transcript")
				assertPagedByBytes(t, e.readPages(transcript, cand), tc.budget, want)
				assertPagedByBytes(t, e.readPages(transcript+"?limit=5000", e.issue("reader")), tc.budget, want)
			})
		})
	}
}

// repeatSizes is n message sizes cycling from lo to hi.
func repeatSizes(n, lo, hi int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = lo + (hi-lo)*i/max(1, n-1)
	}
	return out
}
