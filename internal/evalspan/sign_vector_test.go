// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestSignatureIsStable pins the canonical encoding: signatures computed with a fixed
// key over every golden analysis (session span) and its turn results (turn spans) and
// over the nested-map fixture, written in the plain form (no wire defaults, as earlier
// collectors wrote them) and with the wire defaults (defaults.go). A change of the
// canonical encoding, deliberate or not, changes the plain ones; a deliberate one needs
// a new signatureVersion (collectors of two versions sharing a key would otherwise
// reject each other's spans). A change of the wire defaults changes only the others,
// and needs a new wireDefaultsVersion. A new field of the golden analyses (turn results'
// started_at, 2026-11-28; with_follow_up, 2026-11-29, on langgraph_multi_turn's first
// turns) changes the golden ones, not the fixture's: the signatures of the goldens with
// that field zeroed were the earlier pins.
func TestSignatureIsStable(t *testing.T) {
	s := NewSigner("0123456789abcdef-test-key")
	want := map[string]string{
		"fixture":                    "v1:c3c44fd8d691b94b1c69a422dcf516612d055667755f6edb500709bc7607ca27",
		"langgraph_multi_turn":       "v1:79ce4bde2c7e402f1db294a11c85a8ad786da12b1e7cb1db7ebde0eb8de30127",
		"langgraph_multi_turn/turn":  "v1:e9fa39b87f36bc3849895d391fca1c033f3ddf305981ca4557a56ed2d569f857",
		"openai_agents_handoff":      "v1:f8b062c29cfd4bd79773c3c47b2f868711b0b0467f213a64453f3da3c909d02c",
		"openai_agents_handoff/turn": "v1:36662a92c60024293022e3fdf13231f59f4b3b5a7089c3916208e2f1c7dc77e9",

		"defaults/fixture":                    "v1:c860d1f03f5ea299c3bc7f251ebd5bf13add0226f5ed489cdd1b2cce0f8b0dd1",
		"defaults/langgraph_multi_turn":       "v1:ad69e8fa1af3c0f8b1a1e2ce06c3289d7e80aef484edb3ba5c1246faf9ac916f",
		"defaults/langgraph_multi_turn/turn":  "v1:5340b65889eff872f581426281d327af51b983b516f108d620d3ec51c55bf6cd",
		"defaults/openai_agents_handoff":      "v1:124b423309f6ebf0582fd8baf8e6117f650366c2632fd01e72fb2d9c77243a33",
		"defaults/openai_agents_handoff/turn": "v1:1b7ecc74aeca2a992da5ed7051be9c045b517ff9cf6ff69a94bd4fa27048ec74",
	}
	got := map[string]string{}
	for _, form := range []struct {
		name        string
		turn, sessn *wireDefaults
	}{{"", nil, nil}, {"defaults/", turnDefaults, sessionDefaults}} {
		got[form.name+"fixture"] = sigOf(attrsOf(signedSessionSpanWith(s, func(m pcommon.Map, a *evaluation.Analysis) {
			encodeTop(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(a).Elem(), nil, form.sessn)
		})))
		for _, name := range []string{"langgraph_multi_turn", "openai_agents_handoff"} {
			as := goldenAnalyses(t, name)
			m := pcommon.NewMap()
			m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
			m.PutStr(semconv.AgentEvalSessionID, as[0].SessionID)
			m.PutStr("gen_ai.conversation.id", as[0].SessionID) // not signed
			encodeTop(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(&as[0]).Elem(), nil, form.sessn)
			s.Sign(m)
			got[form.name+name] = sigOf(m)
			tm := pcommon.NewMap()
			tm.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
			tm.PutStr(semconv.AgentEvalSessionID, as[0].SessionID)
			encodeTop(tm, semconv.AgentEvalTurnPrefix, reflect.ValueOf(&as[0].TurnResults[len(as[0].TurnResults)-1]).Elem(), nil, form.turn)
			s.Sign(tm)
			got[form.name+name+"/turn"] = sigOf(tm)
		}
	}
	assert.Equal(t, want, got)
}

func sigOf(m pcommon.Map) string {
	v, _ := m.Get(semconv.AgentEvalSignature)
	return v.Str()
}
