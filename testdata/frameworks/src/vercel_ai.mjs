// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Vercel AI SDK (ai v6) scenarios. Two ToolLoopAgents with the SDK's own
// MockLanguageModelV3 (from "ai/test") replaying a script. The SDK has no
// handoff primitive, so the triage agent delegates through a tool,
// transfer_to_refund_agent, whose execute() runs the refund agent (the
// "agent as tool" pattern): the refund agent's ai.generateText span nests
// under the triage agent's ai.toolCall span, in the same trace.
// Telemetry: experimental_telemetry {isEnabled, functionId = agent name,
// metadata {sessionId, userId}}; inputs and outputs are recorded (default).
// A conversation runs either one trace per agent call (the SDK's root span)
// or all its calls inside one application span ("conversation", no
// attributes: the session id is the SDK's telemetry metadata, which the
// application does not write on its own spans).

import { ToolLoopAgent, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import {
  AMOUNT_DESCRIPTION,
  ISSUE_REFUND_DESCRIPTION,
  LOOKUP_ORDER_DESCRIPTION,
  MODEL_ID,
  ORDER_ID_DESCRIPTION,
  REFUND_INSTRUCTIONS,
  SAY,
  TRIAGE_INSTRUCTIONS,
  USER,
  issueRefund,
  lookupOrder,
  sleep,
  tokens,
} from "./domain.mjs";
import { inAppSpan } from "./otel.mjs";

/**
 * A MockLanguageModelV3 that answers each doGenerate call with the next step of
 * a script: {toolCalls: [{id, name, args}]} or {text}.
 */
function scriptedModel(agent, steps) {
  let i = 0;
  return new MockLanguageModelV3({
    modelId: MODEL_ID,
    doGenerate: async (options) => {
      const step = steps[i++];
      if (!step) throw new Error(`${agent}: script exhausted after ${steps.length} steps`);
      await sleep(step.latencyMs ?? 80 + 15 * i);
      const content = step.text
        ? [{ type: "text", text: step.text }]
        : step.toolCalls.map((c) => ({
            type: "tool-call",
            toolCallId: c.id,
            toolName: c.name,
            input: JSON.stringify(c.args),
          }));
      const inTok = tokens(JSON.stringify(options.prompt)) + tokens(JSON.stringify(options.tools ?? []));
      const outTok = tokens(JSON.stringify(content));
      return {
        content,
        finishReason: step.text
          ? { unified: "stop", raw: "stop" }
          : { unified: "tool-calls", raw: "tool_calls" },
        usage: {
          inputTokens: { total: inTok, noCache: inTok, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: outTok, text: outTok, reasoning: undefined },
        },
        response: { id: `resp_${agent}_${String(i).padStart(2, "0")}`, modelId: MODEL_ID, timestamp: new Date() },
        warnings: [],
      };
    },
  });
}

const lookupOrderTool = tool({
  description: LOOKUP_ORDER_DESCRIPTION,
  inputSchema: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  execute: async (args) => {
    await sleep(25);
    return lookupOrder(args);
  },
});

const issueRefundTool = tool({
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

function telemetry(functionId, sessionId) {
  return {
    isEnabled: true,
    recordInputs: true,
    recordOutputs: true,
    functionId,
    metadata: { sessionId, userId: "customer-042" },
  };
}

/** Builds the two agents over one script {triage: [...], refund: [...]} (all turns). */
function buildAgents(script, sessionId) {
  const refundAgent = new ToolLoopAgent({
    id: "refund_agent",
    model: scriptedModel("refund_agent", script.refund),
    instructions: REFUND_INSTRUCTIONS,
    tools: { issue_refund: issueRefundTool },
    stopWhen: stepCountIs(6),
    experimental_telemetry: telemetry("refund_agent", sessionId),
  });
  const transferTool = tool({
    description: "Hand the customer over to the refund agent, with the order id and a summary of the request.",
    inputSchema: z.object({
      order_id: z.string().describe(ORDER_ID_DESCRIPTION),
      request: z.string().describe("What the refund agent should do, in one sentence"),
    }),
    execute: async ({ order_id, request }) => {
      const r = await refundAgent.generate({ prompt: `Order ${order_id}: ${request}` });
      return r.text;
    },
  });
  const triageAgent = new ToolLoopAgent({
    id: "triage_agent",
    model: scriptedModel("triage_agent", script.triage),
    instructions: TRIAGE_INSTRUCTIONS,
    tools: { lookup_order: lookupOrderTool, transfer_to_refund_agent: transferTool },
    stopWhen: stepCountIs(6),
    experimental_telemetry: telemetry("triage_agent", sessionId),
  });
  return { triageAgent, refundAgent };
}

/**
 * Runs the turns of one conversation, carrying the message history between
 * turns. With oneTrace the turns run inside the application's "conversation"
 * span, so that every agent call's root span is its child in one trace.
 */
async function runConversation(script, sessionId, userMessages, { oneTrace = false } = {}) {
  const { triageAgent } = buildAgents(script, sessionId);
  const history = [];
  const turns = async () => {
    for (const text of userMessages) {
      history.push({ role: "user", content: text });
      const r = await triageAgent.generate({ messages: history });
      history.push(...r.response.messages);
      await sleep(300); // think time between turns
    }
  };
  await (oneTrace ? inAppSpan("conversation", {}, turns) : turns());
}

const call = (id, name, args) => ({ id, name, args });
const lookup12345 = (id) => call(id, "lookup_order", { order_id: "12345" });
const transfer12345 = (id) =>
  call(id, "transfer_to_refund_agent", { order_id: "12345", request: SAY.handoffRequest12345 });

/** The model scripts of the three-turn conversation (d and e). */
const multiTurnScript = () => ({
  triage: [
    // turn 1
    { toolCalls: [lookup12345("call_t1_lookup_1")] },
    {
      toolCalls: [
        call("call_t1_transfer_1", "transfer_to_refund_agent", {
          order_id: "12345",
          request: SAY.handoffRequest12345Wrong,
        }),
      ],
    },
    { text: SAY.refund12345 },
    // turn 2
    { toolCalls: [call("call_t2_lookup_1", "lookup_order", { order_id: "123" })] },
    {
      toolCalls: [
        call("call_t2_transfer_1", "transfer_to_refund_agent", {
          order_id: "123",
          request: SAY.handoffRequest123,
        }),
      ],
    },
    { text: SAY.refund123 },
    // turn 3
    { text: SAY.bye },
  ],
  refund: [
    // turn 1
    { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
    { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
    // turn 2
    { toolCalls: [call("call_t2_refund_1", "issue_refund", { order_id: "123", amount: 19.5 })] },
    { text: "Refund RF-1002 of $19.50 for order 123 approved." },
  ],
});

export const SCENARIOS = {
  // a. triage -> refund agent, every tool call valid.
  handoff: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [transfer12345("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-vercel-handoff-0001",
      [USER.damaged],
    ),

  // b. refund agent calls issue_refund with an unknown parameter (reason) and
  //    without the required one (amount); the SDK rejects the call before
  //    execution (tool-error in the next prompt); the model retries correctly.
  bad_tool_args: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [transfer12345("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", reason: "damaged" })] },
          { toolCalls: [call("call_t1_refund_2", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-vercel-badargs-0001",
      [USER.damaged],
    ),

  // c. triage agent calls issue_refund, a tool only the refund agent has; the
  //    SDK answers with a NoSuchToolError tool-error; triage then hands off.
  unknown_tool: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [call("call_t1_refund_x", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { toolCalls: [transfer12345("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-vercel-unknowntool-0001",
      [USER.damaged],
    ),

  // d. three turns, one sessionId. Turn 1: the user asks about order #123 but
  //    the triage agent looks up and refunds #12345. Turn 2: the user corrects
  //    it ("No, I meant order #123"). Turn 3: thanks, no tools.
  multi_turn: () => runConversation(multiTurnScript(), "sess-vercel-multiturn-0001", [USER.t1, USER.t2, USER.t3]),

  // e. the conversation of d (its own sessionId), its three agent calls inside
  //    the application's "conversation" span: one trace.
  one_trace: () =>
    runConversation(multiTurnScript(), "sess-vercel-onetrace-0001", [USER.t1, USER.t2, USER.t3], { oneTrace: true }),
};
