// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// LangGraph JS scenarios: a supervisor graph from @langchain/langgraph-supervisor
// (supervisor node "triage_agent" with its own lookup_order tool, one worker,
// "refund_agent", a createReactAgent with issue_refund). Handoffs are the
// library's transfer_to_refund_agent / transfer_back_to_triage_agent tools.
// The chat model is a BaseChatModel subclass that replays scripted AIMessages
// (with tool_calls and usage) and reports the bound tools in its invocation
// params, as provider models do, so OpenInference records llm.tools.
// Instrumented with @arizeai/openinference-instrumentation-langchain; the
// conversation id is the LangGraph thread_id (checkpointer), which LangGraph
// copies into run metadata and OpenInference maps to session.id. A
// conversation runs either one trace per graph invocation (LangGraph's own
// root span) or all its invocations inside one application span
// ("conversation", which also carries session.id = thread_id).

import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
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

/** Patches LangChain's CallbackManager so every run becomes an OpenInference span. */
export function instrument(provider) {
  const inst = new LangChainInstrumentation({ tracerProvider: provider });
  inst.manuallyInstrument(CallbackManagerModule);
}

/**
 * A chat model that answers each call with the next step of a script:
 * {toolCalls: [{id, name, args}]} or {text}. bindTools() binds the tools in
 * OpenAI function format, as ChatOpenAI does.
 */
class ScriptedChatModel extends BaseChatModel {
  static lc_name() {
    return "ScriptedChatModel";
  }

  constructor({ agent, steps }) {
    super({});
    this.agent = agent;
    this.steps = steps;
    this.i = 0;
  }

  _llmType() {
    return "scripted";
  }

  bindTools(tools, kwargs) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)), ...kwargs });
  }

  invocationParams(options) {
    return { model: MODEL_ID, temperature: 0, ...(options?.tools ? { tools: options.tools } : {}) };
  }

  async _generate(messages, options) {
    const step = this.steps[this.i++];
    if (!step) throw new Error(`${this.agent}: script exhausted after ${this.steps.length} steps`);
    await sleep(step.latencyMs ?? 80 + 15 * this.i);
    const inTok = tokens(JSON.stringify(messages)) + tokens(JSON.stringify(options?.tools ?? []));
    const outTok = tokens(JSON.stringify(step));
    const message = new AIMessage({
      id: `resp_${this.agent}_${String(this.i).padStart(2, "0")}`,
      content: step.text ?? "",
      tool_calls: (step.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.args, type: "tool_call" })),
      // ChatOpenAI also keeps the raw OpenAI tool calls here; OpenInference reads them from it.
      additional_kwargs: step.toolCalls
        ? {
            tool_calls: step.toolCalls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          }
        : {},
      usage_metadata: { input_tokens: inTok, output_tokens: outTok, total_tokens: inTok + outTok },
      response_metadata: { model_name: MODEL_ID, finish_reason: step.text ? "stop" : "tool_calls" },
    });
    return { generations: [{ message, text: step.text ?? "" }] };
  }
}

const lookupOrderTool = tool(
  async (args) => {
    await sleep(25);
    return JSON.stringify(lookupOrder(args));
  },
  {
    name: "lookup_order",
    description: LOOKUP_ORDER_DESCRIPTION,
    schema: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  },
);

const issueRefundTool = tool(
  async (args) => {
    await sleep(40);
    return JSON.stringify(issueRefund(args));
  },
  {
    name: "issue_refund",
    description: ISSUE_REFUND_DESCRIPTION,
    schema: z.object({
      order_id: z.string().describe(ORDER_ID_DESCRIPTION),
      amount: z.number().describe(AMOUNT_DESCRIPTION),
    }),
  },
);

function buildGraph(script) {
  const refundAgent = createReactAgent({
    llm: new ScriptedChatModel({ agent: "refund_agent", steps: script.refund }),
    tools: [issueRefundTool],
    name: "refund_agent",
    prompt: REFUND_INSTRUCTIONS,
  });
  return createSupervisor({
    agents: [refundAgent],
    llm: new ScriptedChatModel({ agent: "triage_agent", steps: script.triage }),
    tools: [lookupOrderTool],
    prompt: TRIAGE_INSTRUCTIONS,
    supervisorName: "triage_agent",
    outputMode: "last_message",
  }).compile({ checkpointer: new MemorySaver(), name: "support_graph" });
}

/**
 * Runs the turns of one conversation on one thread (the checkpointer keeps the
 * history). With oneTrace the turns run inside the application's
 * "conversation" span, which carries session.id (the thread id), so that every
 * graph invocation's root span is its child in one trace.
 */
async function runConversation(script, threadId, userMessages, { oneTrace = false } = {}) {
  const graph = buildGraph(script);
  const turns = async () => {
    for (const text of userMessages) {
      await graph.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: threadId }, metadata: { user_id: "customer-042" } },
      );
      await sleep(300); // think time between turns
    }
  };
  await (oneTrace ? inAppSpan("conversation", { "session.id": threadId }, turns) : turns());
}

const call = (id, name, args) => ({ id, name, args });
const lookup12345 = (id) => call(id, "lookup_order", { order_id: "12345" });
const transfer = (id) => call(id, "transfer_to_refund_agent", {});

/** The model scripts of the three-turn conversation (d and e). */
const multiTurnScript = () => ({
  triage: [
    // turn 1
    { toolCalls: [lookup12345("call_t1_lookup_1")] },
    { toolCalls: [transfer("call_t1_transfer_1")] },
    { text: SAY.refund12345 },
    // turn 2
    { toolCalls: [call("call_t2_lookup_1", "lookup_order", { order_id: "123" })] },
    { toolCalls: [transfer("call_t2_transfer_1")] },
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
  // a. triage -> refund agent -> back to triage, every tool call valid.
  handoff: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [transfer("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-langgraph-handoff-0001",
      [USER.damaged],
    ),

  // b. refund agent calls issue_refund with an unknown parameter (reason) and
  //    without the required one (amount); ToolNode rejects it (error
  //    ToolMessage in the next LLM input); the model retries correctly.
  bad_tool_args: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [transfer("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", reason: "damaged" })] },
          { toolCalls: [call("call_t1_refund_2", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-langgraph-badargs-0001",
      [USER.damaged],
    ),

  // c. triage agent calls issue_refund, a tool only the refund agent has;
  //    ToolNode answers "Tool not found"; triage then hands off.
  unknown_tool: () =>
    runConversation(
      {
        triage: [
          { toolCalls: [lookup12345("call_t1_lookup_1")] },
          { toolCalls: [call("call_t1_refund_x", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { toolCalls: [transfer("call_t1_transfer_1")] },
          { text: SAY.refund12345 },
        ],
        refund: [
          { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", amount: 49.99 })] },
          { text: "Refund RF-1001 of $49.99 for order 12345 approved." },
        ],
      },
      "sess-langgraph-unknowntool-0001",
      [USER.damaged],
    ),

  // d. three turns on one thread. Turn 1: the user asks about order #123 but
  //    the triage agent looks up #12345 and the refund agent refunds it.
  //    Turn 2: "No, I meant order #123". Turn 3: thanks, no tools.
  multi_turn: () => runConversation(multiTurnScript(), "sess-langgraph-multiturn-0001", [USER.t1, USER.t2, USER.t3]),

  // e. the conversation of d (its own thread), its three graph invocations
  //    inside the application's "conversation" span: one trace.
  one_trace: () =>
    runConversation(multiTurnScript(), "sess-langgraph-onetrace-0001", [USER.t1, USER.t2, USER.t3], { oneTrace: true }),
};
