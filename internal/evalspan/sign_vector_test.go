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
// and needs a new wireDefaultsVersion.
func TestSignatureIsStable(t *testing.T) {
	s := NewSigner("0123456789abcdef-test-key")
	want := map[string]string{
		"fixture":                    "v1:c3c44fd8d691b94b1c69a422dcf516612d055667755f6edb500709bc7607ca27",
		"langgraph_multi_turn":       "v1:e3682e114830415cb3a91a4c961a4e6b7d36952d7a65996157386d20c9dae410",
		"langgraph_multi_turn/turn":  "v1:28c1d90adcdcfed5856d415dba9e8e1a301249ad0fd2d51fdd43a01f8d0ff3f6",
		"openai_agents_handoff":      "v1:72a22d3f325d7be63ee975b3df48ceca855c3a8fa91edff8c7bd845c325b8688",
		"openai_agents_handoff/turn": "v1:51995f6d9521e4de98329f4605318b5b54e4fba8f8ac0d3273f2f480dbd42ff0",

		"defaults/fixture":                    "v1:c860d1f03f5ea299c3bc7f251ebd5bf13add0226f5ed489cdd1b2cce0f8b0dd1",
		"defaults/langgraph_multi_turn":       "v1:eb85ff4073b233813f31cdca0282d084fe1a14177f66d26f4ab0240c7f18df2c",
		"defaults/langgraph_multi_turn/turn":  "v1:455a6865a1d514f86a4973497a1cb05f7d55a25443cd8231a1cc4747003ae3a3",
		"defaults/openai_agents_handoff":      "v1:2dba732584ad9a714294083e54dc61aa4252c7ae2f4b6076d26a44ea69126f9d",
		"defaults/openai_agents_handoff/turn": "v1:d5dcdfaae906bb9a6fac35e4eb4ca87a4390c77aef60ab86d4adeeeb9d61d3b0",
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
