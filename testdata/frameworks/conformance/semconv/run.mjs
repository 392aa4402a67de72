// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Hand-written spans in the newest GenAI shapes (semantic-conventions-genai main branch,
// development status), which no released instrumentation emits yet, and one trace as
// contrib's gen_ai_normalizer processor leaves it. Written directly as OTLP/JSON; no
// dependency. Same domain and facts as the framework traces (../scripts.mjs).
// Usage: node run.mjs --list | node run.mjs <scenario> <out-dir>

import { writeFileSync } from "node:fs";
import { SAY, USER } from "../scripts.mjs";

const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 };
let clock = 1795000000000000000n; // ns
let seq = 0;

const hex = (n, len) => n.toString(16).padStart(len, "0");
const attr = (k, v) => ({
  key: k,
  value:
    typeof v === "boolean"
      ? { boolValue: v }
      : typeof v === "number"
        ? Number.isInteger(v)
          ? { intValue: v }
          : { doubleValue: v }
        : typeof v === "object"
          ? { stringValue: JSON.stringify(v) }
          : { stringValue: String(v) },
});
const attrs = (o) => Object.entries(o).map(([k, v]) => attr(k, v));

/** A span tree builder: span(name, attributes, children, opts) returns a node. */
function span(name, a, children = [], opts = {}) {
  return { name, a, children, opts };
}

/** Lays the tree out in time (each span after its previous sibling) and flattens it. */
function flatten(traceId, node, parentId, out) {
  const spanId = hex(BigInt(++seq), 16);
  const start = clock;
  clock += 5_000_000n;
  for (const c of node.children) flatten(traceId, c, spanId, out);
  clock += 5_000_000n;
  out.push({
    traceId,
    spanId,
    ...(parentId ? { parentSpanId: parentId } : {}),
    name: node.name,
    kind: node.opts.kind ?? KIND.INTERNAL,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(clock),
    attributes: attrs(node.a),
    ...(node.opts.events
      ? {
          events: node.opts.events.map((e) => ({
            timeUnixNano: String(start + 1_000_000n),
            name: e.name,
            attributes: attrs(e.a),
          })),
        }
      : {}),
    status: node.opts.error ? { code: 2, message: node.opts.error } : {},
  });
}

function write(outDir, name, turns) {
  const spans = [];
  turns.forEach((t, i) => {
    flatten(hex(BigInt(0x5e3c0000 + i) + (BigInt(seq) << 40n), 32), t, "", spans);
    clock += 300_000_000n;
  });
  const req = {
    resourceSpans: [
      {
        resource: {
          attributes: attrs({
            "service.instance.id": `conformance-${name.replaceAll("_", "-")}`,
            "service.name": "acme-support-semconv",
            "deployment.environment.name": "agenteval-conformance",
          }),
        },
        scopeSpans: [{ scope: { name: "hand-written/semantic-conventions-genai-main" }, spans }],
      },
    ],
  };
  const line = JSON.stringify(req) + "\n";
  writeFileSync(`${outDir}/${name}.json`, line);
  console.log(`${outDir}/${name}.json: ${spans.length} spans, ${turns.length} traces, ${line.length} bytes`);
}

// Tool definitions and messages in the v1.37+ JSON forms.
const DEFS = {
  lookup_order: {
    type: "function",
    name: "lookup_order",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false },
  },
  transfer_to_refund_agent: {
    type: "function",
    name: "transfer_to_refund_agent",
    parameters: { type: "object", properties: { request: { type: "string" } }, required: ["request"], additionalProperties: false },
  },
  issue_refund: {
    type: "function",
    name: "issue_refund",
    parameters: {
      type: "object",
      properties: { order_id: { type: "string" }, amount: { type: "number" } },
      required: ["order_id", "amount"],
      additionalProperties: false,
    },
  },
};
const user = (t) => [{ role: "user", parts: [{ type: "text", content: t }] }];
const calls = (...cs) => [{ role: "assistant", parts: cs.map(([id, name, args]) => ({ type: "tool_call", id, name, arguments: args })), finish_reason: "tool_call" }];
const text = (t) => [{ role: "assistant", parts: [{ type: "text", content: t }], finish_reason: "stop" }];
const ORDER = { order_id: "12345", status: "delivered", item: "Ceramic mug set (4 pcs)", total: 49.99 };
const REFUND = { refund_id: "RF-1001", order_id: "12345", amount: 49.99, status: "approved" };

/** A chat span whose content is in a gen_ai.client.inference.operation.details event. */
const chat = (sess, input, output, defs) =>
  span(
    "chat gpt-4o-mini",
    { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.conversation.id": sess, "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 20 },
    [],
    {
      kind: KIND.CLIENT,
      events: [
        {
          name: "gen_ai.client.inference.operation.details",
          a: { "gen_ai.input.messages": input, "gen_ai.output.messages": output, "gen_ai.tool.definitions": defs.map((d) => DEFS[d]) },
        },
      ],
    },
  );
const tool = (name, id, args, result, extra = {}, children = []) =>
  span(
    `execute_tool ${name}`,
    { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": id, "gen_ai.tool.call.arguments": args, "gen_ai.tool.call.result": result, ...extra },
    children,
  );
const agent = (name, sess, nested, children, extra = {}, opts = {}) =>
  span(`invoke_agent ${name}`, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "gen_ai.conversation.id": sess, "gen_ai.invocation.is_nested": nested, ...extra }, children, opts);

const REQ = "Customer reports order 12345 (Ceramic mug set, $49.99) arrived damaged and wants a full refund.";

export const SCENARIOS = {
  // handle_conversation_turn, gen_ai.invocation.is_nested, the transfer refinement of
  // execute_tool (gen_ai.transfer.target.name / .mode), plan, gen_ai.agent.turn.count, content
  // only in details events.
  turn_transfer: (out) => {
    const s = "sess-semconv-turn-transfer-0001";
    const refund = agent("refund_agent", s, true, [
      chat(s, user(`Order 12345: ${REQ}`), calls(["call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 }]), ["issue_refund"]),
      tool("issue_refund", "call_t1_refund_1", { order_id: "12345", amount: 49.99 }, REFUND),
      chat(s, user(`Order 12345: ${REQ}`), text(SAY.refund12345), ["issue_refund"]),
    ], { "gen_ai.agent.turn.count": 2 });
    write(out, "semconv_turn_transfer", [
      span("handle_conversation_turn acme_support", { "gen_ai.operation.name": "handle_conversation_turn", "gen_ai.workflow.name": "acme_support", "gen_ai.conversation.id": s }, [
        agent("triage_agent", s, false, [
          span("plan triage_agent", { "gen_ai.operation.name": "plan", "gen_ai.agent.name": "triage_agent" }),
          chat(s, user(USER.damaged), calls(["call_t1_lookup_1", "lookup_order", { order_id: "12345" }]), ["lookup_order", "transfer_to_refund_agent"]),
          tool("lookup_order", "call_t1_lookup_1", { order_id: "12345" }, ORDER),
          chat(s, user(USER.damaged), calls(["call_t1_transfer_1", "transfer_to_refund_agent", { request: REQ }]), ["lookup_order", "transfer_to_refund_agent"]),
          tool("transfer_to_refund_agent", "call_t1_transfer_1", { request: REQ }, SAY.refund12345, {
            "gen_ai.agent.name": "triage_agent",
            "gen_ai.transfer.target.name": "refund_agent",
            "gen_ai.transfer.target.type": "agent",
            "gen_ai.transfer.mode": "return_to_caller",
          }, [refund]),
          chat(s, user(USER.damaged), text(SAY.refund12345), ["lookup_order", "transfer_to_refund_agent"]),
        ], { "gen_ai.agent.turn.count": 3 }),
      ]),
    ]);
  },

  // A remote agent called over a protocol (A2A): an invoke_agent CLIENT span with
  // gen_ai.caller.type / gen_ai.caller.name, a child of the calling agent's span.
  remote_agent: (out) => {
    const s = "sess-semconv-remote-agent-0001";
    write(out, "semconv_remote_agent", [
      agent("triage_agent", s, false, [
        chat(s, user(USER.damaged), calls(["call_t1_lookup_1", "lookup_order", { order_id: "12345" }]), ["lookup_order"]),
        tool("lookup_order", "call_t1_lookup_1", { order_id: "12345" }, ORDER),
        agent("refund_agent", s, true, [], { "gen_ai.caller.type": "agent", "gen_ai.caller.name": "triage_agent", "gen_ai.provider.name": "a2a", "gen_ai.output.messages": text("Refund RF-1001 of $49.99 for order 12345 approved.") }, { kind: KIND.CLIENT }),
        chat(s, user(USER.damaged), text(SAY.refund12345), ["lookup_order"]),
      ]),
    ]);
  },

  // A policy denies a call before it runs: the gen_ai.tool.call.decision event, outcome
  // deny, on the chat span that requested it; no execute_tool span.
  decision_deny: (out) => {
    const s = "sess-semconv-decision-deny-0001";
    const c = chat(s, user(USER.damaged), calls(["call_t1_refund_x", "issue_refund", { order_id: "12345", amount: 49.99 }]), ["lookup_order"]);
    c.opts.events.push({
      name: "gen_ai.tool.call.decision",
      a: { "gen_ai.tool.call.decision.outcome": "deny", "gen_ai.tool.name": "issue_refund", "gen_ai.tool.call.id": "call_t1_refund_x" },
    });
    write(out, "semconv_decision_deny", [
      agent("triage_agent", s, false, [
        chat(s, user(USER.damaged), calls(["call_t1_lookup_1", "lookup_order", { order_id: "12345" }]), ["lookup_order"]),
        tool("lookup_order", "call_t1_lookup_1", { order_id: "12345" }, ORDER),
        c,
        chat(s, user(USER.damaged), text("I can't issue refunds myself; a colleague will contact you."), ["lookup_order"]),
      ]),
    ]);
  },

  // An OpenInference LangGraph trace after contrib's gen_ai_normalizer: every CHAIN span
  // (and an OpenLLMetry task span) got gen_ai.operation.name=invoke_agent, the source kind
  // is kept. One agent, not five.
  normalized: (out) => {
    const s = "sess-semconv-normalized-0001";
    const chain = (name, children, extra = {}) =>
      span(name, { "openinference.span.kind": "CHAIN", "gen_ai.operation.name": "invoke_agent", "session.id": s, ...extra }, children);
    write(out, "semconv_normalized", [
      chain("LangGraph", [
        span("triage_agent", { "openinference.span.kind": "AGENT", "gen_ai.operation.name": "invoke_agent", "agent.name": "triage_agent", "gen_ai.agent.name": "triage_agent", "session.id": s }, [
          chain("RunnableSequence", [
            span("ChatOpenAI", { "openinference.span.kind": "LLM", "gen_ai.operation.name": "chat", "session.id": s, "gen_ai.input.messages": user(USER.damaged), "gen_ai.output.messages": calls(["call_t1_lookup_1", "lookup_order", { order_id: "12345" }]), "gen_ai.tool.definitions": [DEFS.lookup_order] }),
          ]),
          chain("tools", [
            span("lookup_order", { "openinference.span.kind": "TOOL", "gen_ai.operation.name": "execute_tool", "tool.name": "lookup_order", "gen_ai.tool.name": "lookup_order", "gen_ai.tool.call.id": "call_t1_lookup_1", "gen_ai.tool.call.arguments": { order_id: "12345" }, "gen_ai.tool.call.result": ORDER, "session.id": s }),
          ]),
          span("format_answer.task", { "traceloop.span.kind": "task", "gen_ai.operation.name": "invoke_agent", "session.id": s }),
          chain("RunnableSequence", [
            span("ChatOpenAI", { "openinference.span.kind": "LLM", "gen_ai.operation.name": "chat", "session.id": s, "gen_ai.input.messages": user(USER.damaged), "gen_ai.output.messages": text("Order 12345 (Ceramic mug set) was delivered on 2026-11-02."), "gen_ai.tool.definitions": [DEFS.lookup_order] }),
          ]),
        ]),
      ], { "input.value": USER.damaged, "output.value": "Order 12345 (Ceramic mug set) was delivered on 2026-11-02." }),
    ]);
  },
};

const [scenario, outDir] = process.argv.slice(2);
if (scenario === "--list") {
  console.log(Object.keys(SCENARIOS).join("\n"));
} else if (SCENARIOS[scenario] && outDir) {
  SCENARIOS[scenario](outDir);
} else {
  console.error(`usage: node run.mjs <${Object.keys(SCENARIOS).join("|")}> <out-dir> | --list`);
  process.exit(2);
}
