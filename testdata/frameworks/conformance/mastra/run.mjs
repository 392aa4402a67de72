// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Mastra (@mastra/core) with @mastra/observability and @mastra/otel-exporter: a triage
// agent with the refund agent as a sub-agent (`agents`), which Mastra offers to the model
// as the tool agent-refund_agent {prompt}. Mastra's AI tracing is converted to OTel spans
// by the OtelExporter, given our in-memory span exporter. The models are ai 6's
// MockLanguageModelV3. Without memory the application passes the conversation history
// and the session id is tracingOptions.metadata.sessionId; with memory (variants memory:
// the new message as text, memory_messages: as [{role, content}]) Mastra loads the
// history and the session id is its threadId (memory thread), with resourceId the user.
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { capture } from "../capture.mjs";
import { scriptedV3, stepContent } from "../ai_sdk_common.mjs";
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

/** transfer_to_refund_agent becomes Mastra's sub-agent tool agent-refund_agent {prompt}. */
const content = (step) =>
  stepContent({
    ...step,
    toolCalls: step.toolCalls?.map((c) =>
      c.name === "transfer_to_refund_agent"
        ? { id: c.id, name: "agent-refund_agent", args: { prompt: `Order ${c.args.order_id}: ${c.args.request}` } }
        : c,
    ),
  });

const model = (agent, steps) => scriptedV3({ MockLanguageModelV3, simulateReadableStream }, agent, steps, content);

const lookupOrderTool = createTool({
  id: "lookup_order",
  description: LOOKUP_ORDER_DESCRIPTION,
  inputSchema: z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }),
  execute: async (args) => {
    await sleep(25);
    return lookupOrder(args);
  },
});

const issueRefundTool = createTool({
  id: "issue_refund",
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

let exporter;

async function play(scenario, script, sessionId) {
  // memory: both agents have Mastra memory; the conversation is the memory thread
  // (threadId = the session id) and Mastra runs the sub-agent in a thread of its own,
  // "<threadId>-<uuid>".
  const withMemory = scenario.startsWith("memory");
  const memory = withMemory ? new Memory({ storage: new InMemoryStore() }) : undefined;
  const refundAgent = new Agent({
    id: "refund_agent",
    name: "refund_agent",
    description: "Issues refunds for orders.",
    instructions: REFUND_INSTRUCTIONS,
    model: model("refund_agent", cursor("refund_agent", script.refund)),
    tools: { issue_refund: issueRefundTool },
    ...(memory ? { memory } : {}),
  });
  const triageAgent = new Agent({
    id: "triage_agent",
    name: "triage_agent",
    instructions: TRIAGE_INSTRUCTIONS,
    model: model("triage_agent", cursor("triage_agent", script.triage)),
    tools: { lookup_order: lookupOrderTool },
    agents: { refund_agent: refundAgent },
    ...(memory ? { memory } : {}),
  });
  // The provider block only satisfies the exporter's set-up; our span exporter replaces
  // the OTLP one it would load, so nothing is sent anywhere.
  const otel = new OtelExporter({
    provider: { custom: { endpoint: "http://127.0.0.1:9/v1/traces", protocol: "http/json" } },
    exporter,
    signals: { logs: false },
  });
  const observability = new Observability({
    configs: { otel: { serviceName: "acme-support-mastra", exporters: [otel] } },
  });
  const mastra = new Mastra({ agents: { triageAgent, refundAgent }, observability, logger: false });
  const agent = mastra.getAgent("triageAgent");
  const history = [];
  for (const text of script.users) {
    history.push({ role: "user", content: text });
    const r = withMemory
      ? await agent.generate(scenario === "memory_messages" ? [{ role: "user", content: text }] : text, {
          maxSteps: 6,
          memory: { thread: sessionId, resource: "customer-042" },
        })
      : await agent.generate(history, {
          maxSteps: 6,
          tracingOptions: { metadata: { sessionId, userId: "customer-042" } },
        });
    history.push(...r.response.messages);
    await sleep(300);
  }
  await sleep(200);
  await otel.flush(); // not shutdown: that would also clear the in-memory exporter
}

await main({
  framework: "mastra",
  prefix: "sess-mastra",
  variants: { memory: "multi_turn", memory_messages: "multi_turn" },
  setup: (name) => {
    const cap = capture({ api, asyncHooks, resources, sdk, transformer }, name, "mastra");
    exporter = cap.exporter;
    return cap;
  },
  play,
});
