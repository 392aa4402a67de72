// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Strands Agents TypeScript (@strands-agents/sdk): two Agents; the refund agent is given
// to the triage agent as a tool (agents as tools, Agent.asTool: a tool named after the
// agent, input {"input": string}). Native OTel spans with the SDK's default conventions
// (no OTEL_SEMCONV_STABILITY_OPT_IN): the agent span lists tool *names* only
// (gen_ai.agent.tools), content is in the deprecated per-message events. The session id is
// a trace attribute (traceAttributes {"session.id"}), as the Strands docs show. The model
// is a Model subclass that streams the scripted steps.
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
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

if (process.argv[2]?.startsWith("latest_")) {
  // The opt-in a user sets for evaluation: the latest GenAI conventions (content in
  // gen_ai.client.inference.operation.details events) and the tool definitions with their
  // schemas (inputSchema). Strands reads it once, when the SDK loads.
  process.env.OTEL_SEMCONV_STABILITY_OPT_IN = "gen_ai_latest_experimental,gen_ai_tool_definitions";
}
const {
  Agent,
  Model,
  ModelContentBlockDeltaEvent,
  ModelContentBlockStartEvent,
  ModelContentBlockStopEvent,
  ModelMessageStartEvent,
  ModelMessageStopEvent,
  ModelMetadataEvent,
  tool,
} = await import("@strands-agents/sdk");

/** Streams the next scripted step; transfer_to_refund_agent becomes a call of the refund_agent tool. */
class ScriptedModel extends Model {
  constructor(steps) {
    super();
    this.steps = steps;
    this.config = { modelId: MODEL_ID };
  }
  updateConfig(c) {
    this.config = { ...this.config, ...c };
  }
  getConfig() {
    return this.config;
  }
  async *stream(messages) {
    const step = this.steps.next();
    await sleep(80 + 15 * this.steps.index);
    yield new ModelMessageStartEvent({ type: "modelMessageStartEvent", role: "assistant" });
    if (step.text) {
      yield new ModelContentBlockStartEvent({ type: "modelContentBlockStartEvent" });
      yield new ModelContentBlockDeltaEvent({ type: "modelContentBlockDeltaEvent", delta: { type: "textDelta", text: step.text } });
      yield new ModelContentBlockStopEvent({ type: "modelContentBlockStopEvent" });
    }
    for (const c of step.toolCalls ?? []) {
      const [name, args] =
        c.name === "transfer_to_refund_agent"
          ? ["refund_agent", { input: `Order ${c.args.order_id}: ${c.args.request}` }]
          : [c.name, c.args];
      yield new ModelContentBlockStartEvent({
        type: "modelContentBlockStartEvent",
        start: { type: "toolUseStart", name, toolUseId: c.id },
      });
      yield new ModelContentBlockDeltaEvent({
        type: "modelContentBlockDeltaEvent",
        delta: { type: "toolUseInputDelta", input: JSON.stringify(args) },
      });
      yield new ModelContentBlockStopEvent({ type: "modelContentBlockStopEvent" });
    }
    const inTok = tokens(JSON.stringify(messages));
    const outTok = tokens(JSON.stringify(step));
    yield new ModelMetadataEvent({
      type: "modelMetadataEvent",
      usage: { inputTokens: inTok, outputTokens: outTok, totalTokens: inTok + outTok },
    });
    yield new ModelMessageStopEvent({ type: "modelMessageStopEvent", stopReason: step.text ? "endTurn" : "toolUse" });
  }
}

const lookupOrderTool = tool({
  name: "lookup_order",
  description: LOOKUP_ORDER_DESCRIPTION,
  inputSchema: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  callback: async (args) => {
    await sleep(25);
    return lookupOrder(args);
  },
});

const issueRefundTool = tool({
  name: "issue_refund",
  description: ISSUE_REFUND_DESCRIPTION,
  inputSchema: z.object({
    order_id: z.string().describe(ORDER_ID_DESCRIPTION),
    amount: z.number().describe(AMOUNT_DESCRIPTION),
  }),
  callback: async (args) => {
    await sleep(40);
    return issueRefund(args);
  },
});

async function play(_, script, sessionId) {
  const traceAttributes = { "session.id": sessionId, "user.id": "customer-042" };
  const refundAgent = new Agent({
    name: "refund_agent",
    description: "Issues refunds for orders.",
    model: new ScriptedModel(cursor("refund_agent", script.refund)),
    systemPrompt: REFUND_INSTRUCTIONS,
    tools: [issueRefundTool],
    traceAttributes,
    printer: false,
  });
  const triageAgent = new Agent({
    name: "triage_agent",
    model: new ScriptedModel(cursor("triage_agent", script.triage)),
    systemPrompt: TRIAGE_INSTRUCTIONS,
    tools: [lookupOrderTool, refundAgent.asTool()],
    traceAttributes,
    printer: false,
  });
  for (const text of script.users) {
    await triageAgent.invoke(text);
    await sleep(300);
  }
}

await main({
  framework: "strands",
  prefix: "sess-strands",
  variants: { latest_bad_tool_args: "bad_tool_args" },
  setup: (name) => capture({ api, asyncHooks, resources, sdk, transformer }, name, "strands"),
  play,
});
