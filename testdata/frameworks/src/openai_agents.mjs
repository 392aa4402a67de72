// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// OpenAI Agents JS scenarios: triage_agent (tool lookup_order, handoff to
// refund_agent) and refund_agent (tool issue_refund), real SDK handoffs.
// The model is the SDK's own OpenAIResponsesModel (the default, Responses API)
// over a real `openai` client whose fetch() answers from a script with
// Responses API JSON, so the SDK code path (response spans, tool-call parsing,
// argument validation, handoffs) is the real one; only the HTTP transport is
// scripted. The SDK's native traces are bridged to
// OpenTelemetry by @arizeai/openinference-instrumentation-openai-agents (a
// TracingProcessor). The conversation id is set with OpenInference's
// setSession context (-> session.id on every span) and as the SDK trace
// groupId; multi-turn history is kept by the SDK's MemorySession. A
// conversation runs either one trace per Runner.run (the SDK default) or all
// its runs inside one withTrace(...) (the SDK's API for grouping runs).

import * as agents from "@openai/agents";
import { Agent, MemorySession, OpenAIResponsesModel, Runner, tool, withTrace } from "@openai/agents";
import { OpenAIAgentsInstrumentation } from "@arizeai/openinference-instrumentation-openai-agents";
import { setSession, setUser } from "@arizeai/openinference-core";
import { context } from "@opentelemetry/api";
import OpenAI from "openai";
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

/** Registers the OpenInference TracingProcessor (exclusive: no export to OpenAI). */
export function instrument(provider) {
  const inst = new OpenAIAgentsInstrumentation({ tracerProvider: provider });
  inst.manuallyInstrument(agents);
}

/**
 * An `openai` client whose transport replays a script. Each POST /responses
 * (the Responses API, the SDK's default model API) is answered with the next
 * step of the calling agent's script, recognised by the request's
 * instructions: {toolCalls: [{id, name, args}]} or {text}. Like the real API,
 * the response echoes instructions, tools and tool_choice.
 */
function scriptedClient(scripts) {
  const pos = { triage_agent: 0, refund_agent: 0 };
  let n = 0;
  const fetch = async (url, init) => {
    if (!String(url).endsWith("/responses")) throw new Error(`unexpected request ${url}`);
    const body = JSON.parse(init.body);
    const agent = body.instructions === REFUND_INSTRUCTIONS ? "refund_agent" : "triage_agent";
    const step = scripts[agent][pos[agent]++];
    if (!step) throw new Error(`${agent}: script exhausted after ${scripts[agent].length} steps`);
    n++;
    const seq = String(n).padStart(2, "0");
    await sleep(step.latencyMs ?? 80 + 15 * pos[agent]);
    const output = step.text
      ? [
          {
            type: "message",
            id: `msg_${agent}_${seq}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: step.text, annotations: [] }],
          },
        ]
      : step.toolCalls.map((c, i) => ({
          type: "function_call",
          id: `fc_${agent}_${seq}_${i}`,
          call_id: c.id,
          name: c.name,
          arguments: JSON.stringify(c.args),
          status: "completed",
        }));
    const inTok = tokens(JSON.stringify(body.input)) + tokens(body.instructions ?? "") + tokens(JSON.stringify(body.tools ?? []));
    const outTok = tokens(JSON.stringify(output));
    const response = {
      id: `resp_${agent}_${seq}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: null,
      model: `${MODEL_ID}-2024-07-18`,
      output,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: null,
      temperature: 1,
      text: { format: { type: "text" } },
      tool_choice: body.tool_choice ?? "auto",
      tools: body.tools ?? [],
      top_p: 1,
      truncation: "disabled",
      usage: {
        input_tokens: inTok,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outTok,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inTok + outTok,
      },
      user: null,
      metadata: {},
    };
    return new Response(JSON.stringify(response), {
      status: 200,
      headers: { "content-type": "application/json", "x-request-id": `req_${seq}` },
    });
  };
  return new OpenAI({ apiKey: "sk-scripted-not-a-key", fetch, maxRetries: 0 });
}

const lookupOrderTool = tool({
  name: "lookup_order",
  description: LOOKUP_ORDER_DESCRIPTION,
  parameters: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  execute: async (args) => {
    await sleep(25);
    return JSON.stringify(lookupOrder(args));
  },
});

const issueRefundTool = tool({
  name: "issue_refund",
  description: ISSUE_REFUND_DESCRIPTION,
  parameters: z.object({
    order_id: z.string().describe(ORDER_ID_DESCRIPTION),
    amount: z.number().describe(AMOUNT_DESCRIPTION),
  }),
  execute: async (args) => {
    await sleep(40);
    return JSON.stringify(issueRefund(args));
  },
});

function buildAgents(scripts) {
  const model = new OpenAIResponsesModel(scriptedClient(scripts), MODEL_ID);
  const refundAgent = new Agent({
    name: "refund_agent",
    handoffDescription: "Issues refunds for orders.",
    instructions: REFUND_INSTRUCTIONS,
    tools: [issueRefundTool],
    model,
  });
  const triageAgent = new Agent({
    name: "triage_agent",
    instructions: TRIAGE_INSTRUCTIONS,
    tools: [lookupOrderTool],
    handoffs: [refundAgent],
    model,
  });
  return { triageAgent, refundAgent };
}

const WORKFLOW = "Acme support";
const TRACE_METADATA = { user_id: "customer-042" };

/**
 * Runs the turns of one conversation. Every turn is one Runner.run starting at
 * triage_agent; the MemorySession carries the history. By default every run is
 * its own trace (the runner creates it with workflowName, groupId and
 * traceMetadata); with oneTrace all the runs happen inside one
 * withTrace(WORKFLOW, ...) with the same groupId and metadata, and each run
 * adds its task span to that trace.
 */
async function runConversation(scripts, sessionId, userMessages, runOptions = {}, { oneTrace = false } = {}) {
  const { triageAgent } = buildAgents(scripts);
  const runner = new Runner({
    workflowName: WORKFLOW,
    groupId: sessionId,
    traceMetadata: TRACE_METADATA,
    traceIncludeSensitiveData: true,
  });
  const session = new MemorySession({ sessionId });
  const ctx = setUser(setSession(context.active(), { sessionId }), { userId: "customer-042" });
  const turns = async () => {
    for (const text of userMessages) {
      try {
        await runner.run(triageAgent, text, { session, maxTurns: 8, ...runOptions });
      } catch (err) {
        if (!runOptions.expectError) throw err;
        console.error(`expected run error: ${err.name}: ${err.message}`);
      }
      await sleep(300); // think time between turns
    }
  };
  await context.with(ctx, () =>
    oneTrace ? withTrace(WORKFLOW, turns, { groupId: sessionId, metadata: TRACE_METADATA }) : turns(),
  );
}

const call = (id, name, args) => ({ id, name, args });
const lookup12345 = (id) => call(id, "lookup_order", { order_id: "12345" });
const transfer = (id) => call(id, "transfer_to_refund_agent", {});

/** The model scripts of the three-turn conversation (d and e). */
const multiTurnScripts = () => ({
  triage_agent: [
    // turn 1
    { toolCalls: [lookup12345("call_t1_lookup_1")] },
    { toolCalls: [transfer("call_t1_transfer_1")] },
    // turn 2
    { toolCalls: [call("call_t2_lookup_1", "lookup_order", { order_id: "123" })] },
    { toolCalls: [transfer("call_t2_transfer_1")] },
    // turn 3
    { text: SAY.bye },
  ],
  refund_agent: [
    // turn 1
    { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
    { text: SAY.refund12345 },
    // turn 2
    { toolCalls: [call("call_t2_refund_1", "issue_refund", { order_id: "123", amount: 19.5 })] },
    { text: SAY.refund123 },
  ],
});

export const SCENARIOS = {
  // a. triage -> refund agent (SDK handoff), every tool call valid.
  handoff: () =>
    runConversation(
      {
        triage_agent: [{ toolCalls: [lookup12345("call_t1_lookup_1")] }, { toolCalls: [transfer("call_t1_transfer_1")] }],
        refund_agent: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: SAY.refund12345 },
        ],
      },
      "sess-openai-agents-handoff-0001",
      [USER.damaged],
    ),

  // b. refund agent calls issue_refund with an unknown parameter (reason) and
  //    without the required one (amount); the SDK's argument validation fails
  //    inside the function span and the error text goes back to the model,
  //    which retries correctly.
  bad_tool_args: () =>
    runConversation(
      {
        triage_agent: [{ toolCalls: [lookup12345("call_t1_lookup_1")] }, { toolCalls: [transfer("call_t1_transfer_1")] }],
        refund_agent: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", reason: "damaged" })] },
          { toolCalls: [call("call_t1_refund_2", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: SAY.refund12345 },
        ],
      },
      "sess-openai-agents-badargs-0001",
      [USER.damaged],
    ),

  // c. triage agent calls issue_refund, a tool only the refund agent has. With
  //    toolNotFoundBehavior "return_error_to_model" the SDK returns an error
  //    tool output to the model, which then hands off.
  unknown_tool: () =>
    runConversation(
      {
        triage_agent: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [call("call_t1_refund_x", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { toolCalls: [transfer("call_t1_transfer_1")] },
        ],
        refund_agent: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: SAY.refund12345 },
        ],
      },
      "sess-openai-agents-unknowntool-0001",
      [USER.damaged],
      { toolNotFoundBehavior: "return_error_to_model" },
    ),

  // c'. same request with the SDK default (toolNotFoundBehavior "raise_error"):
  //    the run fails with ModelBehaviorError "Tool issue_refund not found in
  //    agent triage_agent." and no refund happens.
  unknown_tool_raise: () =>
    runConversation(
      {
        triage_agent: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [call("call_t1_refund_x", "issue_refund", { order_id: "12345", amount: 49.99 })] },
        ],
        refund_agent: [],
      },
      "sess-openai-agents-unknowntoolraise-0001",
      [USER.damaged],
      { expectError: true },
    ),

  // d. three turns, one session. Turn 1: the user asks about order #123 but the
  //    triage agent looks up #12345 and the refund agent refunds it. Turn 2:
  //    "No, I meant order #123". Turn 3: thanks, no tools.
  multi_turn: () =>
    runConversation(multiTurnScripts(), "sess-openai-agents-multiturn-0001", [USER.t1, USER.t2, USER.t3]),

  // e. the conversation of d (its own session), its three runs inside one
  //    withTrace: one trace, one task span per run.
  one_trace: () =>
    runConversation(
      multiTurnScripts(),
      "sess-openai-agents-onetrace-0001",
      [USER.t1, USER.t2, USER.t3],
      {},
      { oneTrace: true },
    ),
};
