// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"fmt"
	"testing"
)

// benchTurnRecords builds a realistic multi-agent turn of about n spans: a turn root, a
// coordinator that calls tools and transfers to specialists one after the other, each
// specialist with LLM calls (requesting tools), tool executions and a nested agent-as-tool.
func benchTurnRecords(n int) []SpanRecord {
	recs := []SpanRecord{
		asSpan("root", "http", ClassTurn, 0, 100000, asUserMsg("please handle order 42"), asSession("s1")),
		asSpan("http", "", ClassOther, -1, 100001),
		asSpan("coord", "root", ClassAgent, 1, 99999, asAgent("coordinator"), asWith(func(r *SpanRecord) {
			r.AllowedTools = []string{"lookup", "transfer_to_spec0", "transfer_to_spec1"}
		})),
	}
	t := int64(10)
	id := 0
	next := func() string { id++; return fmt.Sprintf("s%03d", id) }
	parent := "coord"
	agentNo := 0
	for len(recs) < n {
		llm := next()
		callID := next()
		recs = append(recs,
			asSpan(llm, parent, ClassLLM, t, t+50, asUsage(100, 20), asToolDefs("lookup", "transfer_to_spec0"),
				asRequests(asReq(callID, "lookup", `{"order":"42","verbose":true}`), asReq("", "transfer_to_spec"+fmt.Sprint(agentNo), `{}`)),
				asWith(func(r *SpanRecord) { r.Reasoning = "look up the order, then transfer" })),
			asSpan(next(), parent, ClassTool, t+51, t+60, asTool("lookup", callID, ""), asResult(`{"status":"shipped"}`)),
		)
		t += 70
		if len(recs) >= n {
			break
		}
		spec := next()
		recs = append(recs,
			asSpan(spec, "root", ClassAgent, t, t+300, asAgent(fmt.Sprintf("spec%d", agentNo)), asInput("order 42 shipped?")),
			asSpan(next(), spec, ClassLLM, t+1, t+40, asUsage(50, 10), asOutput("it shipped")),
		)
		tool := next()
		recs = append(recs,
			asSpan(tool, spec, ClassTool, t+41, t+200, asTool("ask_helper", "", `{"input":"confirm"}`)),
			asSpan(next(), tool, ClassAgent, t+42, t+199, asAgent("helper")),
		)
		t += 310
		agentNo++
		parent = spec
	}
	return recs
}

func BenchmarkAssembleTurn(b *testing.B) {
	for _, n := range []int{20, 40, 60} {
		recs := benchTurnRecords(n)
		b.Run(fmt.Sprintf("spans=%d", len(recs)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AssembleTurn(recs)
			}
		})
	}
}
