// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestSignatureIsStable pins the canonical encoding: signatures computed with a fixed
// key over every golden analysis (session span) and its turn results (turn spans) and
// over the nested-map fixture. A change of encoding, deliberate or not, changes them;
// a deliberate one needs a new signatureVersion (collectors of two versions sharing a
// key would otherwise reject each other's spans).
func TestSignatureIsStable(t *testing.T) {
	s := NewSigner("0123456789abcdef-test-key")
	want := map[string]string{
		"fixture":                    "v1:c3c44fd8d691b94b1c69a422dcf516612d055667755f6edb500709bc7607ca27",
		"langgraph_multi_turn":       "v1:9f1eed3e1bc94aa532dd936c9bb8d97845e7c3493780cbd5a5fc5661987f9434",
		"langgraph_multi_turn/turn":  "v1:28c1d90adcdcfed5856d415dba9e8e1a301249ad0fd2d51fdd43a01f8d0ff3f6",
		"openai_agents_handoff":      "v1:cd3ba24b6da56a565a1dff4e8faa8b5c46a27bd18c3dc72ed1960a0f0c9b88f1",
		"openai_agents_handoff/turn": "v1:51995f6d9521e4de98329f4605318b5b54e4fba8f8ac0d3273f2f480dbd42ff0",
	}
	got := map[string]string{}
	got["fixture"] = sigOf(attrsOf(signedSessionSpan(t, s)))
	for _, name := range []string{"langgraph_multi_turn", "openai_agents_handoff"} {
		as := goldenAnalyses(t, name)
		m := pcommon.NewMap()
		m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
		m.PutStr(semconv.AgentEvalSessionID, as[0].SessionID)
		m.PutStr("gen_ai.conversation.id", as[0].SessionID) // not signed
		EncodeAnalysis(m, &as[0])
		s.Sign(m)
		got[name] = sigOf(m)
		tm := pcommon.NewMap()
		tm.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
		tm.PutStr(semconv.AgentEvalSessionID, as[0].SessionID)
		EncodeTurn(tm, &as[0].TurnResults[len(as[0].TurnResults)-1])
		s.Sign(tm)
		got[name+"/turn"] = sigOf(tm)
	}
	assert.Equal(t, want, got)
}

func sigOf(m pcommon.Map) string {
	v, _ := m.Get(semconv.AgentEvalSignature)
	return v.Str()
}
