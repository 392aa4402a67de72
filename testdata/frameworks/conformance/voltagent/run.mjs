// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// VoltAgent (@voltagent/core): a supervisor (triage_agent) with one sub-agent
// (refund_agent). VoltAgent gives a supervisor the delegate_task tool
// {task, targetAgents[], context}; the model names the sub-agent in targetAgents.
// Spans come from VoltAgent's own OpenTelemetry observability (VoltAgentObservability,
// its own vocabulary: agent spans, llm:*, tool.execution:*, subagent:*, entity.*,
// conversation.id, user.id), with our in-memory span processor added to it. The session
// is VoltAgent's conversationId. Models are MockLanguageModelV3 (ai 6, VoltAgent's peer).
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { capture } from "../capture.mjs";
import {
  AMOUNT_DESCRIPTION,
  ISSUE_REFUND_DESCRIPTION,
  LOOKUP_ORDER_DESCRIPTION,
  MODEL_ID,
  ORDER_ID_DESCRIPTION,
  REFUND_INSTRUCTIONS,
  TRIAGE_INSTRUCTIONS,
  cursor,
  issueRefund,
  lookupOrder,
  main,
  sleep,
  tokens,
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

function model(agent, steps) {
  const generate = async (options) => {
    const step = steps.next();
    await sleep(80 + 15 * steps.index);
    const c = content(step);
    const inTok = tokens(JSON.stringify(options.prompt)) + tokens(JSON.stringify(options.tools ?? []));
    const outTok = tokens(JSON.stringify(c));
    return {
      content: c,
      finishReason: step.text ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" },
      usage: {
        inputTokens: { total: inTok, noCache: inTok, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: outTok, text: outTok, reasoning: undefined },
      },
      response: { id: `resp_${agent}_${String(steps.index).padStart(2, "0")}`, modelId: MODEL_ID, timestamp: new Date() },
      warnings: [],
    };
  };
  // Sub-agents stream (streamText): the same step as stream parts.
  const stream = async (options) => {
    const r = await generate(options);
    const parts = [{ type: "stream-start", warnings: [] }, { type: "response-metadata", ...r.response }];
    for (const c of r.content) {
      if (c.type === "text") {
        parts.push({ type: "text-start", id: "t0" }, { type: "text-delta", id: "t0", delta: c.text }, { type: "text-end", id: "t0" });
      } else {
        parts.push(c);
      }
    }
    parts.push({ type: "finish", finishReason: r.finishReason, usage: r.usage });
    return { stream: simulateReadableStream({ chunks: parts }) };
  };
  return new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: generate, doStream: stream });
}

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

async function play(_, script, sessionId) {
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
  for (const text of script.users) {
    await triageAgent.generateText(text, { userId: "customer-042", conversationId: sessionId });
    await sleep(300);
  }
  await observability.forceFlush?.();
}

await main({
  framework: "voltagent",
  prefix: "sess-voltagent",
  setup: (name) => {
    const cap = capture({ api, asyncHooks, resources, sdk, transformer }, name, "voltagent");
    processor = cap.processor;
    return cap;
  },
  play,
});
