// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Google ADK for TypeScript (@google/adk): an LlmAgent triage_agent with refund_agent as
// a sub-agent. The handoff is ADK's own transfer: the model calls transfer_to_agent
// {"agentName":"refund_agent"} (ADK TS names the parameter agentName; Python: agent_name) and the refund agent takes over the turn (pass control;
// refund_agent does not transfer back, so every new turn starts at triage_agent). Native
// ADK spans (scope gcp.vertex.agent: invocation, invoke_agent, call_llm with
// gcp.vertex.agent.llm_request / llm_response JSON, execute_tool); the session is ADK's
// session id (gen_ai.conversation.id). The model is a BaseLlm subclass that yields the
// scripted steps as Gemini content.
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
  passControl,
  sleep,
  tokens,
} from "../scripts.mjs";

// ADK pins its own @opentelemetry/api (1.9.0) and takes its tracer at import time; that
// copy's proxy only follows a global provider registered before the import.
const cap = capture({ api, asyncHooks, resources, sdk, transformer }, `adk_${process.argv[2]}`, "adk");
const { AgentTool, BaseLlm, FunctionTool, InMemoryRunner, LlmAgent } = await import("@google/adk");

/** Yields the next scripted step; transfer_to_refund_agent becomes ADK's transfer_to_agent. */
class ScriptedLlm extends BaseLlm {
  constructor(steps, asTool = false) {
    super({ model: MODEL_ID });
    this.steps = steps;
    this.asTool = asTool;
  }
  async *generateContentAsync(req) {
    const step = this.steps.next();
    await sleep(80 + 15 * this.steps.index);
    const parts = step.text
      ? [{ text: step.text }]
      : step.toolCalls.map((c) => ({
          functionCall:
            c.name !== "transfer_to_refund_agent"
              ? { id: c.id, name: c.name, args: c.args }
              : this.asTool
                ? { id: c.id, name: "refund_agent", args: { request: `Order ${c.args.order_id}: ${c.args.request}` } }
                : { id: c.id, name: "transfer_to_agent", args: { agentName: "refund_agent" } },
        }));
    const inTok = tokens(JSON.stringify(req.contents)) + tokens(JSON.stringify(req.config?.tools ?? []));
    const outTok = tokens(JSON.stringify(parts));
    yield {
      content: { role: "model", parts },
      finishReason: "STOP",
      usageMetadata: { promptTokenCount: inTok, candidatesTokenCount: outTok, totalTokenCount: inTok + outTok },
    };
  }
  async connect() {
    throw new Error("live connections are not scripted");
  }
}

const lookupOrderTool = new FunctionTool({
  name: "lookup_order",
  description: LOOKUP_ORDER_DESCRIPTION,
  parameters: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  execute: async (args) => {
    await sleep(25);
    return lookupOrder(args);
  },
});

const issueRefundTool = new FunctionTool({
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

async function play(scenario, script, sessionId) {
  // agent_tool: the refund agent is an AgentTool of the triage agent (agent as tool,
  // refund_agent {request}); the triage agent gets its answer back and answers itself.
  const asTool = scenario === "agent_tool";
  const refundAgent = new LlmAgent({
    name: "refund_agent",
    description: "Issues refunds for orders.",
    model: new ScriptedLlm(cursor("refund_agent", script.refund)),
    instruction: REFUND_INSTRUCTIONS,
    tools: [issueRefundTool],
    disallowTransferToParent: true,
    disallowTransferToPeers: true,
  });
  const refundTool = new AgentTool({ agent: refundAgent });
  const triageAgent = new LlmAgent({
    name: "triage_agent",
    description: "Acme Shop customer support triage.",
    model: new ScriptedLlm(cursor("triage_agent", asTool ? script.triage : passControl(script.triage)), asTool),
    instruction: TRIAGE_INSTRUCTIONS,
    tools: asTool ? [lookupOrderTool, refundTool] : [lookupOrderTool],
    subAgents: asTool ? [] : [refundAgent],
  });
  const runner = new InMemoryRunner({ agent: triageAgent, appName: "acme_support" });
  await runner.sessionService.createSession({ appName: "acme_support", userId: "customer-042", sessionId });
  for (const text of script.users) {
    for await (const ev of runner.runAsync({
      userId: "customer-042",
      sessionId,
      newMessage: { role: "user", parts: [{ text }] },
    })) {
      if (ev.errorMessage) console.error(`event error: ${ev.errorMessage}`);
    }
    await sleep(300);
  }
}

await main({
  framework: "adk",
  prefix: "sess-adk",
  setup: () => cap,
  play,
  variants: { agent_tool: "handoff" },
});
