// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// What every sample file contains, by file name: the facts the Go golden tests
// assert (sessions, turns, agents, requested tool calls, injected faults).
// verify.mjs checks each generated file against this table; README.md
// describes the same content for people. `outcome` of a requested tool call:
//   ok                  executed and succeeded
//   handoff             a handoff tool call (transfer_to_refund_agent)
//   rejected            the framework refused it before or while validating the
//                       arguments; the error text went back to the model
//   not_found           the agent has no such tool; error text back to the model
//   not_found_raised    the agent has no such tool; the run failed (exception)
// A file is one trace per turn, unless it gives `traces`: then its turns are
// the subtrees of the children of the trace's root span `trace_root`, each
// child named `invocation_root`, in start order.

import { SAY, USER } from "./domain.mjs";

export const TOOL_SCHEMAS = {
  lookup_order: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false,
  },
  issue_refund: {
    type: "object",
    properties: { order_id: { type: "string" }, amount: { type: "number" } },
    required: ["order_id", "amount"],
    additionalProperties: false,
  },
};

/** Error text each framework feeds back to the model, per fault. */
const ERRORS = {
  vercel_ai: {
    bad_args: "Invalid input for tool issue_refund: Type validation failed",
    not_found: "Model tried to call unavailable tool 'issue_refund'. Available tools: lookup_order, transfer_to_refund_agent.",
  },
  langgraph: {
    bad_args: "Error: Received tool input did not match expected schema",
    not_found: 'Error: Tool "issue_refund" not found.',
  },
  openai_agents: {
    bad_args: "An error occurred while running the tool. Please try again.",
    not_found: "Tool 'issue_refund' not found.",
    raised: "ModelBehaviorError: Tool issue_refund not found in agent triage_agent.",
  },
};

const SESSION_KEY = {
  vercel_ai: "ai.telemetry.metadata.sessionId",
  langgraph: "session.id",
  openai_agents: "session.id",
};

const SESSION_PREFIX = { vercel_ai: "sess-vercel", langgraph: "sess-langgraph", openai_agents: "sess-openai-agents" };

/**
 * one_trace: the span that starts the conversation's one trace (the
 * application's span, or the SDK's withTrace trace) and the root span of each
 * framework invocation under it (AI SDK agent call, graph invocation,
 * Runner.run task span).
 */
const ONE_TRACE_SPANS = {
  vercel_ai: { trace_root: "conversation", invocation_root: "ai.generateText" },
  langgraph: { trace_root: "conversation", invocation_root: "support_graph" },
  openai_agents: { trace_root: "Acme support", invocation_root: "Acme support" },
};

const tc = (turn, agent, tool, call_id, args, outcome, extra = {}) => ({
  turn,
  agent,
  tool,
  call_id,
  arguments: args,
  outcome,
  ...extra,
});

const lookup = (turn, id, order) => tc(turn, "triage_agent", "lookup_order", id, { order_id: order }, "ok");
const refund = (turn, id, order, amount) =>
  tc(turn, "refund_agent", "issue_refund", id, { order_id: order, amount }, "ok");

function handoffCall(fw, turn, id, orderId, request) {
  // Vercel's hand-built handoff tool takes a payload; the SDK/library ones take none.
  const args = fw === "vercel_ai" ? { order_id: orderId, request } : {};
  return tc(turn, "triage_agent", "transfer_to_refund_agent", id, args, "handoff");
}

function scenarios(fw) {
  const E = ERRORS[fw];
  const multiTurn = multiTurnScenario(fw);
  return {
    handoff: {
      description: "triage_agent looks up order 12345 and hands off to refund_agent, which refunds $49.99. All calls valid.",
      session_id: `${SESSION_PREFIX[fw]}-handoff-0001`,
      turns: [{ user_message: USER.damaged, final_response: SAY.refund12345 }],
      tool_calls: [
        lookup(1, "call_t1_lookup_1", "12345"),
        handoffCall(fw, 1, "call_t1_transfer_1", "12345", SAY.handoffRequest12345),
        refund(1, "call_t1_refund_1", "12345", 49.99),
      ],
      faults: [],
    },
    bad_tool_args: {
      description:
        "As handoff, but refund_agent first calls issue_refund with an undeclared parameter `reason` and without the required `amount`; the framework rejects it, the model retries correctly.",
      session_id: `${SESSION_PREFIX[fw]}-badargs-0001`,
      turns: [{ user_message: USER.damaged, final_response: SAY.refund12345 }],
      tool_calls: [
        lookup(1, "call_t1_lookup_1", "12345"),
        handoffCall(fw, 1, "call_t1_transfer_1", "12345", SAY.handoffRequest12345),
        tc(1, "refund_agent", "issue_refund", "call_t1_refund_1", { order_id: "12345", reason: "damaged" }, "rejected", {
          error_contains: E.bad_args,
        }),
        refund(1, "call_t1_refund_2", "12345", 49.99),
      ],
      faults: [
        { kind: "hallucinated_parameter", turn: 1, agent: "refund_agent", tool: "issue_refund", call_id: "call_t1_refund_1", parameter: "reason" },
        { kind: "missing_required_parameter", turn: 1, agent: "refund_agent", tool: "issue_refund", call_id: "call_t1_refund_1", parameter: "amount" },
      ],
    },
    unknown_tool: {
      description:
        "triage_agent calls issue_refund, a tool only refund_agent has; the framework answers with a tool-not-found error, triage_agent then hands off and refund_agent refunds.",
      session_id: `${SESSION_PREFIX[fw]}-unknowntool-0001`,
      turns: [{ user_message: USER.damaged, final_response: SAY.refund12345 }],
      tool_calls: [
        lookup(1, "call_t1_lookup_1", "12345"),
        tc(1, "triage_agent", "issue_refund", "call_t1_refund_x", { order_id: "12345", amount: 49.99 }, "not_found", {
          error_contains: E.not_found,
        }),
        handoffCall(fw, 1, "call_t1_transfer_1", "12345", SAY.handoffRequest12345),
        refund(1, "call_t1_refund_1", "12345", 49.99),
      ],
      faults: [
        { kind: "unauthorized_tool", turn: 1, agent: "triage_agent", tool: "issue_refund", call_id: "call_t1_refund_x", owner: "refund_agent" },
      ],
    },
    multi_turn: multiTurn,
    one_trace: {
      ...multiTurn,
      description:
        "The conversation of multi_turn (same messages, answers and faults) in its own session, its three invocations inside ONE trace: " +
        (fw === "openai_agents"
          ? "the three Runner.run calls inside one withTrace(\"Acme support\"), each run a task span under the trace's root span."
          : "the application's span \"conversation\" (OTel API, startActiveSpan) around them, each invocation's root span its child."),
      session_id: `${SESSION_PREFIX[fw]}-onetrace-0001`,
      traces: 1,
      ...ONE_TRACE_SPANS[fw],
    },
  };
}

/** d. The three-turn conversation, one trace per turn. */
function multiTurnScenario(fw) {
  return {
    description:
      "Three turns (three traces) in one session. Turn 1: the user asks for a refund of order #123 but triage_agent looks up #12345 and refund_agent refunds $49.99 on it. Turn 2: the user corrects it (\"No, I meant order #123\"); order 123 is refunded ($19.50). Turn 3: thanks, no tool call.",
    session_id: `${SESSION_PREFIX[fw]}-multiturn-0001`,
    turns: [
      { user_message: USER.t1, final_response: SAY.refund12345 },
      { user_message: USER.t2, final_response: SAY.refund123 },
      { user_message: USER.t3, final_response: SAY.bye },
    ],
    tool_calls: [
      lookup(1, "call_t1_lookup_1", "12345"),
      handoffCall(fw, 1, "call_t1_transfer_1", "12345", SAY.handoffRequest12345Wrong),
      refund(1, "call_t1_refund_1", "12345", 49.99),
      lookup(2, "call_t2_lookup_1", "123"),
      handoffCall(fw, 2, "call_t2_transfer_1", "123", SAY.handoffRequest123),
      refund(2, "call_t2_refund_1", "123", 19.5),
    ],
    faults: [
      { kind: "wrong_argument_value", turn: 1, agent: "triage_agent", tool: "lookup_order", call_id: "call_t1_lookup_1", parameter: "order_id", value: "12345", expected: "123" },
      { kind: "user_correction", turn: 2, corrects_turn: 1, message: USER.t2 },
    ],
  };
}

function openaiExtra() {
  return {
    unknown_tool_raise: {
      description:
        "As unknown_tool with the SDK default toolNotFoundBehavior (raise_error): the run fails with ModelBehaviorError after triage_agent calls issue_refund; no handoff, no refund, no final response.",
      session_id: "sess-openai-agents-unknowntoolraise-0001",
      turns: [{ user_message: USER.damaged, final_response: null, error_contains: ERRORS.openai_agents.raised }],
      tool_calls: [
        tc(1, "triage_agent", "lookup_order", "call_t1_lookup_1", { order_id: "12345" }, "ok"),
        tc(1, "triage_agent", "issue_refund", "call_t1_refund_x", { order_id: "12345", amount: 49.99 }, "not_found_raised", {
          error_contains: ERRORS.openai_agents.raised,
        }),
      ],
      faults: [
        { kind: "unauthorized_tool", turn: 1, agent: "triage_agent", tool: "issue_refund", call_id: "call_t1_refund_x", owner: "refund_agent" },
      ],
    },
  };
}

/** Agents and the tools each one is offered (as seen on its LLM spans). */
export const AGENTS = {
  vercel_ai: { triage_agent: ["lookup_order", "transfer_to_refund_agent"], refund_agent: ["issue_refund"] },
  langgraph: { triage_agent: ["lookup_order", "transfer_to_refund_agent"], refund_agent: ["issue_refund"] },
  openai_agents: { triage_agent: ["lookup_order", "transfer_to_refund_agent"], refund_agent: ["issue_refund"] },
};

/** file name -> expectations */
export const EXPECTED = {};
for (const fw of ["vercel_ai", "langgraph", "openai_agents"]) {
  const sc = { ...scenarios(fw), ...(fw === "openai_agents" ? openaiExtra() : {}) };
  for (const [name, e] of Object.entries(sc)) {
    EXPECTED[`${fw}_${name}.json`] = { framework: fw, scenario: name, session_key: SESSION_KEY[fw], agents: AGENTS[fw], ...e };
  }
}
