// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// VoltAgent (@voltagent/core): a supervisor (triage_agent) with one sub-agent
// (refund_agent). VoltAgent gives a supervisor the delegate_task tool
// {task, targetAgents[], context}; the model names the sub-agent in targetAgents.
// Spans come from VoltAgent's own OpenTelemetry observability (VoltAgentObservability,
// its own vocabulary: agent spans, llm:*, tool.execution:*, subagent:*, entity.*,
// conversation.id, user.id), with our in-memory span processor added to it. The session
// is VoltAgent's conversationId, and VoltAgent's default memory (in memory) keeps the
// history: the application passes only the new message, as text, or (variant
// memory_messages) as a UI message list; variant memory_history passes every UI message
// so far (a chat UI's default). Models are MockLanguageModelV3 (ai 6, VoltAgent's peer).
// Usage: node run.mjs <scenario> <out-dir> | --list

import { randomUUID } from "node:crypto";
import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { capture } from "../capture.mjs";
import { scriptedV3 } from "../ai_sdk_common.mjs";
import {
  AMOUNT_DESCRIPTION,
  ISSUE_REFUND_DESCRIPTION,
  LOOKUP_ORDER_DESCRIPTION,
  ORDER_ID_DESCRIPTION,
  REFUND_INSTRUCTIONS,
  TRIAGE_INSTRUCTIONS,
  cursor,
  issueRefund,
  lookupOrder,
  main,
  sleep,
} from "../scripts.mjs";

// In development VoltAgent refreshes its model-provider list from models.dev at import
// time; production mode does not, and the generator must run without network.
process.env.NODE_ENV = "production";
const { Agent, VoltAgentObservability, createTool } = await import("@voltagent/core");

/** The scripted step as AI SDK content; transfer_to_refund_agent becomes delegate_task. */
function content(step) {
  if (step.text) return [{ type: "text", text: step.text }];
  return step.toolCalls.map((c) => {
    const [name, args] =
      c.name === "transfer_to_refund_agent"
        ? ["delegate_task", { task: c.args.request, targetAgents: ["refund_agent"], context: { order_id: c.args.order_id } }]
        : [c.name, c.args];
    return { type: "tool-call", toolCallId: c.id, toolName: name, input: JSON.stringify(args) };
  });
}

const model = (agent, steps) => scriptedV3({ MockLanguageModelV3, simulateReadableStream }, agent, steps, content);

const lookupOrderTool = createTool({
  name: "lookup_order",
  description: LOOKUP_ORDER_DESCRIPTION,
  parameters: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  execute: async (args) => {
    await sleep(25);
    return lookupOrder(args);
  },
});

const issueRefundTool = createTool({
  name: "issue_refund",
  description: ISSUE_REFUND_DESCRIPTION,
  parameters: z.object({
    order_id: z.string().describe(ORDER_ID_DESCRIPTION),
    amount: z.number().describe(AMOUNT_DESCRIPTION),
  }),
  execute: async (args) => {
    await sleep(40);
    return issueRefund(args);
  },
});

let processor;

async function play(scenario, script, sessionId) {
  const observability = new VoltAgentObservability({
    serviceName: "acme-support-voltagent",
    spanProcessors: [processor],
  });
  const refundAgent = new Agent({
    name: "refund_agent",
    purpose: "Issues refunds for orders.",
    instructions: REFUND_INSTRUCTIONS,
    model: model("refund_agent", cursor("refund_agent", script.refund)),
    tools: [issueRefundTool],
    observability,
  });
  const triageAgent = new Agent({
    name: "triage_agent",
    instructions: TRIAGE_INSTRUCTIONS,
    model: model("triage_agent", cursor("triage_agent", script.triage)),
    tools: [lookupOrderTool],
    subAgents: [refundAgent],
    observability,
  });
  // The UI messages of the conversation, as a chat UI (useChat) keeps them.
  const ui = [];
  for (const text of script.users) {
    ui.push({ id: randomUUID(), role: "user", parts: [{ type: "text", text }] });
    // memory_messages: the new message as a UI message list, what a chat UI sends to an
    // agent with memory (the history is memory's to load); memory_history: every UI
    // message so far, useChat's default, although memory holds them too.
    const input = { memory_messages: ui.slice(-1), memory_history: [...ui] }[scenario] ?? text;
    const r = await triageAgent.generateText(input, { userId: "customer-042", conversationId: sessionId });
    ui.push({ id: randomUUID(), role: "assistant", parts: [{ type: "text", text: r.text }] });
    await sleep(300);
  }
  await observability.forceFlush?.();
}

await main({
  framework: "voltagent",
  prefix: "sess-voltagent",
  variants: { memory_messages: "multi_turn", memory_history: "multi_turn" },
  setup: (name) => {
    const cap = capture({ api, asyncHooks, resources, sdk, transformer }, name, "voltagent");
    processor = cap.processor;
    return cap;
  },
  play,
});
