// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchSpans builds realistic spans of a multi-agent turn: an OTel GenAI chat span
// with a four-turn history, tool definitions and a tool call; a tool span; an agent span;
// an OpenInference LLM span with flattened messages; and a plain HTTP client span.
func benchSpans(b *testing.B) map[string]ptrace.Span {
	sys := `{"role":"system","parts":[{"type":"text","content":"You are the billing agent of an online shop. Use the tools to look up orders and issue refunds. Never refund more than the order total. Be concise and polite."}]}`
	var hist []string
	hist = append(hist, sys)
	for i := 0; i < 4; i++ {
		n := strconv.Itoa(i)
		hist = append(hist,
			`{"role":"user","parts":[{"type":"text","content":"Hi, I was charged twice for order 10`+n+`, can you check and refund the duplicate payment please?"}]}`,
			`{"role":"assistant","parts":[{"type":"tool_call","id":"call_`+n+`","name":"lookup_order","arguments":{"order_id":"10`+n+`"}}]}`,
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_`+n+`","response":{"order_id":"10`+n+`","total":42.5,"payments":[{"id":"p1","amount":42.5},{"id":"p2","amount":42.5}]}}]}`,
			`{"role":"assistant","parts":[{"type":"text","content":"I found two payments of 42.50 for order 10`+n+`. I have refunded payment p2."}]}`)
	}
	input := "[" + strings.Join(hist, ",") + "]"
	output := `[{"role":"assistant","parts":[{"type":"reasoning","content":"The user was charged twice; refund the second payment."},{"type":"tool_call","id":"call_9","name":"refund_payment","arguments":{"order_id":"103","payment_id":"p2","amount":42.5,"reason":"duplicate"}}],"finish_reason":"tool_call"}]`
	defs := `[{"type":"function","name":"lookup_order","description":"Look up an order by id.","parameters":{"type":"object","properties":{"order_id":{"type":"string","description":"The order id."}},"required":["order_id"],"additionalProperties":false}},` +
		`{"type":"function","name":"refund_payment","description":"Refund one payment of an order.","parameters":{"type":"object","properties":{"order_id":{"type":"string"},"payment_id":{"type":"string"},"amount":{"type":"number","minimum":0}},"required":["order_id","payment_id","amount"],"additionalProperties":false}},` +
		`{"type":"function","name":"transfer_to_support","description":"Hand the conversation to the support agent.","parameters":{"type":"object","properties":{}}}]`
	common := map[string]any{
		"gen_ai.provider.name": "openai", "server.address": "api.openai.com", "server.port": int64(443),
		"gen_ai.conversation.id": "conv_8f2c1d", "gen_ai.agent.name": "OpenAI Agent", "deployment.environment": "prod",
	}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range common {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	mk := func(name string, attrs map[string]any) ptrace.Span {
		s := ptrace.NewSpan()
		s.SetName(name)
		s.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
		s.SetParentSpanID(pcommon.SpanID{8, 7, 6, 5, 4, 3, 2, 1})
		if err := s.Attributes().FromRaw(attrs); err != nil {
			b.Fatal(err)
		}
		return s
	}
	spans := map[string]ptrace.Span{}
	spans["genai_llm"] = mk("chat gpt-4o", with(map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
		"gen_ai.response.id": "resp_0123456789", "gen_ai.response.finish_reasons": []any{"tool_call"},
		"gen_ai.usage.input_tokens": int64(812), "gen_ai.usage.output_tokens": int64(41),
		"gen_ai.usage.cache_read.input_tokens": int64(512), "gen_ai.request.temperature": 0.2,
		"gen_ai.input.messages": input, "gen_ai.output.messages": output, "gen_ai.tool.definitions": defs,
	}))
	spans["genai_tool"] = mk("execute_tool refund_payment", with(map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund_payment", "gen_ai.tool.call.id": "call_9",
		"gen_ai.tool.type":           "function",
		"gen_ai.tool.call.arguments": `{"order_id":"103","payment_id":"p2","amount":42.5,"reason":"duplicate"}`,
		"gen_ai.tool.call.result":    `{"refund_id":"r_77","status":"succeeded"}`,
	}))
	spans["genai_agent"] = mk("invoke_agent billing", with(map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "billing", "gen_ai.agent.id": "asst_1",
		"gen_ai.input.messages":  input,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"I refunded the duplicate payment p2 of 42.50 for order 103."}],"finish_reason":"stop"}]`,
	}))
	oi := map[string]any{
		"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.system": "openai",
		"llm.token_count.prompt": int64(190), "llm.token_count.completion": int64(53), "llm.token_count.total": int64(243),
		"input.mime_type": "application/json", "input.value": `[{"content": "42 multiplied by 17, then divided by 3", "role": "user"}]`,
		"output.mime_type": "application/json", "output.value": `{"id":"resp_1","output":[]}`,
		"session.id": "sess_1",
	}
	for i := 0; i < 6; i++ {
		p := "llm.input_messages." + strconv.Itoa(i) + ".message."
		oi[p+"role"] = []string{"system", "user"}[min(i, 1)]
		oi[p+"content"] = "Message number " + strconv.Itoa(i) + " of the conversation about multiplying numbers."
	}
	oi["llm.output_messages.0.message.role"] = "assistant"
	oi["llm.output_messages.0.message.tool_calls.0.tool_call.id"] = "call_l"
	oi["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = "multiply_numbers"
	oi["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"] = `{"a":42,"b":17}`
	for i, n := range []string{"add_numbers", "multiply_numbers", "divide_numbers"} {
		oi["llm.tools."+strconv.Itoa(i)+".tool.json_schema"] = `{"type": "function", "function": {"name": "` + n + `", "description": "Numbers.", "parameters": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"], "type": "object"}}}`
	}
	spans["openinference_llm"] = mk("response", oi)
	spans["http"] = mk("POST /v1/responses", map[string]any{
		"http.request.method": "POST", "url.full": "https://api.openai.com/v1/responses", "server.address": "api.openai.com",
		"server.port": int64(443), "http.response.status_code": int64(200), "network.protocol.version": "1.1",
		"user_agent.original": "python-httpx/0.27", "session.id": "sess_1", "aws.local.service": "svc",
		"aws.local.environment": "prod", "telemetry.extended": true, "PlatformType": "AWS::BedrockAgentCore",
	})
	return spans
}

// BenchmarkExtract measures the hot path of the processor: one Extract per span.
func BenchmarkExtract(b *testing.B) {
	spans := benchSpans(b)
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "shop-agents")
	res.Attributes().PutStr("telemetry.sdk.language", "python")
	scope := pcommon.NewInstrumentationScope()
	ex := NewExtractor(Config{EndAttribute: "agent_eval.session.end"})
	run := func(b *testing.B, list []ptrace.Span) {
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			for _, s := range list {
				_ = ex.Extract(res, scope, s)
			}
		}
		b.ReportMetric(float64(b.N*len(list))/b.Elapsed().Seconds(), "spans/s")
	}
	names := []string{"genai_llm", "genai_tool", "genai_agent", "openinference_llm", "http"}
	for _, n := range names {
		b.Run(n, func(b *testing.B) { run(b, []ptrace.Span{spans[n]}) })
	}
	b.Run("mix", func(b *testing.B) {
		// A typical batch: HTTP spans outnumber the GenAI ones.
		mix := []ptrace.Span{spans["http"], spans["http"], spans["http"], spans["genai_llm"], spans["genai_tool"],
			spans["genai_agent"], spans["openinference_llm"]}
		run(b, mix)
	})
	b.Run("fixtures", func(b *testing.B) {
		files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.otlp.json"))
		type item struct {
			res   pcommon.Resource
			scope pcommon.InstrumentationScope
			span  ptrace.Span
		}
		var items []item
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				rs := td.ResourceSpans().At(i)
				for j := 0; j < rs.ScopeSpans().Len(); j++ {
					ss := rs.ScopeSpans().At(j)
					for k := 0; k < ss.Spans().Len(); k++ {
						items = append(items, item{rs.Resource(), ss.Scope(), ss.Spans().At(k)})
					}
				}
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			for _, it := range items {
				_ = ex.Extract(it.res, it.scope, it.span)
			}
		}
		b.ReportMetric(float64(b.N*len(items))/b.Elapsed().Seconds(), "spans/s")
	})
}
