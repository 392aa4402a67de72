// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// The AI SDK conversation shared by the AI SDK 5 and 7 generators (the samples' AI SDK 6
// is ../src/vercel_ai.mjs). Two agents, each a generateText tool loop over a scripted mock
// model; the triage agent delegates through the tool transfer_to_refund_agent whose
// execute() runs the refund agent (agent as tool), so the turn stays one trace. The
// generator passes what differs between majors: the `ai` module, zod, the mock model and
// the telemetry options.

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
  sleep,
  tokens,
} from "./scripts.mjs";

/**
 * @param {object} sdk {ai, z, model(agent, cursor): LanguageModel, options(agent, sessionId): object}
 *   options() returns the generateText options that switch telemetry on and carry the session.
 */
export async function playAISDK(sdk, script, sessionId) {
  const { ai, z } = sdk;
  const triageModel = sdk.model("triage_agent", cursor("triage_agent", script.triage));
  const refundModel = sdk.model("refund_agent", cursor("refund_agent", script.refund));
  const lookupOrderTool = ai.tool({
    description: LOOKUP_ORDER_DESCRIPTION,
    inputSchema: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
    execute: async (args) => {
      await sleep(25);
      return lookupOrder(args);
    },
  });
  const issueRefundTool = ai.tool({
    description: ISSUE_REFUND_DESCRIPTION,
    inputSchema: z.object({
      order_id: z.string().describe(ORDER_ID_DESCRIPTION),
      amount: z.number().describe(AMOUNT_DESCRIPTION),
    }),
    execute: async (args) => {
      await sleep(40);
      return issueRefund(args);
    },
  });
  const transferTool = ai.tool({
    description: "Hand the customer over to the refund agent, with the order id and a summary of the request.",
    inputSchema: z.object({
      order_id: z.string().describe(ORDER_ID_DESCRIPTION),
      request: z.string().describe("What the refund agent should do, in one sentence"),
    }),
    execute: async ({ order_id, request }) => {
      const r = await ai.generateText({
        model: refundModel,
        system: REFUND_INSTRUCTIONS,
        prompt: `Order ${order_id}: ${request}`,
        tools: { issue_refund: issueRefundTool },
        stopWhen: ai.stepCountIs(6),
        ...sdk.options("refund_agent", sessionId),
      });
      return r.text;
    },
  });
  const history = [];
  for (const text of script.users) {
    history.push({ role: "user", content: text });
    const r = await ai.generateText({
      model: triageModel,
      system: TRIAGE_INSTRUCTIONS,
      messages: history,
      tools: { lookup_order: lookupOrderTool, transfer_to_refund_agent: transferTool },
      stopWhen: ai.stepCountIs(6),
      ...sdk.options("triage_agent", sessionId),
    });
    history.push(...r.response.messages);
    await sleep(300);
  }
}

/** The content of one scripted step in the AI SDK's provider format. */
export function stepContent(step) {
  return step.text
    ? [{ type: "text", text: step.text }]
    : step.toolCalls.map((c) => ({
        type: "tool-call",
        toolCallId: c.id,
        toolName: c.name,
        input: JSON.stringify(c.args),
      }));
}

/**
 * A scripted LanguageModelV3 (ai 6's MockLanguageModelV3) that answers generate and stream
 * calls with the next step; toContent(step) gives the provider content (default
 * stepContent). Frameworks built on the AI SDK (VoltAgent, Mastra) take it as their model.
 */
export function scriptedV3({ MockLanguageModelV3, simulateReadableStream }, agent, steps, toContent = stepContent) {
  const generate = async (options) => {
    const step = steps.next();
    await sleep(80 + 15 * steps.index);
    const content = toContent(step);
    const inTok = tokens(JSON.stringify(options.prompt)) + tokens(JSON.stringify(options.tools ?? []));
    const outTok = tokens(JSON.stringify(content));
    return {
      content,
      finishReason: step.text ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" },
      usage: {
        inputTokens: { total: inTok, noCache: inTok, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: outTok, text: outTok, reasoning: undefined },
      },
      response: { id: `resp_${agent}_${String(steps.index).padStart(2, "0")}`, modelId: MODEL_ID, timestamp: new Date() },
      warnings: [],
    };
  };
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
