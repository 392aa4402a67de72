// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// OpenLLMetry for Node (@traceloop/node-server-sdk) over the openai client: the agent
// loop is the application's own, as OpenLLMetry users write it, traced with the SDK's
// withWorkflow / withAgent / withTool wrappers (traceloop.span.kind workflow / agent /
// tool) and the openai instrumentation (chat spans with gen_ai.* messages and tool
// definitions). The triage agent hands off through its transfer_to_refund_agent tool,
// which runs the refund agent inside the tool (agent as tool). Unknown tools and
// arguments that fail the tool's zod schema are answered to the model with an error, as
// a hand-written loop does. The session id is the association property session_id. The
// openai client's fetch is scripted: it returns Chat Completions JSON, nothing leaves the
// process.
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import * as traceloop from "@traceloop/node-server-sdk";
import OpenAI from "openai";
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

/** A fetch that answers /chat/completions with the next step of the agent named in `user`. */
function scriptedFetch(scripts) {
  let n = 0;
  return async (url, init) => {
    const body = JSON.parse(init.body);
    const steps = scripts[body.user];
    const step = steps.next();
    await sleep(80 + 15 * steps.index);
    const message = step.text
      ? { role: "assistant", content: step.text, refusal: null }
      : {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: step.toolCalls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: JSON.stringify(c.args) },
          })),
        };
    const inTok = tokens(JSON.stringify(body.messages)) + tokens(JSON.stringify(body.tools ?? []));
    const outTok = tokens(JSON.stringify(message));
    const res = {
      id: `chatcmpl-${body.user}-${String(++n).padStart(2, "0")}`,
      object: "chat.completion",
      created: 1795000000 + n,
      model: "gpt-4o-mini-2024-07-18",
      choices: [{ index: 0, message, finish_reason: step.text ? "stop" : "tool_calls", logprobs: null }],
      usage: { prompt_tokens: inTok, completion_tokens: outTok, total_tokens: inTok + outTok },
    };
    return new Response(JSON.stringify(res), { status: 200, headers: { "content-type": "application/json" } });
  };
}

const zodTool = (name, description, schema, run) => ({
  name,
  schema,
  run,
  definition: { type: "function", function: { name, description, parameters: z.toJSONSchema(schema) } },
});

async function play(_, script, sessionId, cap) {
  const client = new OpenAI({
    apiKey: "sk-scripted",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: scriptedFetch({
      triage_agent: cursor("triage_agent", script.triage),
      refund_agent: cursor("refund_agent", script.refund),
    }),
  });
  traceloop.initialize({
    appName: "acme-support-openllmetry",
    exporter: cap.exporter,
    disableBatch: true,
    silenceInitializationMessage: true,
    traceloopSyncEnabled: false,
    instrumentModules: { openAI: OpenAI },
  });

  /** The application's tool loop for one agent, traced as an OpenLLMetry agent. */
  const runAgent = (name, instructions, tools, messages) =>
    traceloop.withAgent({ name }, async () => {
      for (let i = 0; i < 6; i++) {
        const r = await client.chat.completions.create({
          model: MODEL_ID,
          user: name,
          messages: [{ role: "system", content: instructions }, ...messages],
          tools: tools.map((t) => t.definition),
        });
        const msg = r.choices[0].message;
        messages.push(msg);
        if (!msg.tool_calls?.length) return msg.content;
        for (const call of msg.tool_calls) {
          const t = tools.find((x) => x.name === call.function.name);
          let content;
          if (!t) {
            content = `Error: tool '${call.function.name}' is not available. Available tools: ${tools.map((x) => x.name).join(", ")}.`;
          } else {
            const parsed = t.schema.safeParse(JSON.parse(call.function.arguments));
            content = parsed.success
              ? JSON.stringify(await traceloop.withTool({ name: t.name }, () => t.run(parsed.data)))
              : `Error: invalid arguments for ${t.name}: ${parsed.error.message}`;
          }
          messages.push({ role: "tool", tool_call_id: call.id, content });
        }
      }
      throw new Error(`${name}: too many steps`);
    });

  const issueRefundTool = zodTool(
    "issue_refund",
    ISSUE_REFUND_DESCRIPTION,
    z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION), amount: z.number().describe(AMOUNT_DESCRIPTION) }),
    async (args) => {
      await sleep(40);
      return issueRefund(args);
    },
  );
  const triageTools = [
    zodTool("lookup_order", LOOKUP_ORDER_DESCRIPTION, z.object({ order_id: z.string().describe(ORDER_ID_DESCRIPTION) }), async (args) => {
      await sleep(25);
      return lookupOrder(args);
    }),
    zodTool(
      "transfer_to_refund_agent",
      "Hand the customer over to the refund agent, with the order id and a summary of the request.",
      z.object({
        order_id: z.string().describe(ORDER_ID_DESCRIPTION),
        request: z.string().describe("What the refund agent should do, in one sentence"),
      }),
      ({ order_id, request }) =>
        runAgent("refund_agent", REFUND_INSTRUCTIONS, [issueRefundTool], [
          { role: "user", content: `Order ${order_id}: ${request}` },
        ]),
    ),
  ];
  const history = [];
  for (const text of script.users) {
    history.push({ role: "user", content: text });
    await traceloop.withWorkflow({ name: "acme_support", associationProperties: { session_id: sessionId, user_id: "customer-042" } }, () =>
      runAgent("triage_agent", TRIAGE_INSTRUCTIONS, triageTools, history),
    );
    await sleep(300);
  }
  await traceloop.forceFlush();
}

await main({
  framework: "openllmetry",
  prefix: "sess-openllmetry",
  // Our tracer provider is global before initialize(), which then instruments into it;
  // Traceloop's span processor (association properties, entity paths) is added to it, as
  // the SDK documents for applications that own their provider.
  setup: (name) =>
    capture({ api, asyncHooks, resources, sdk, transformer }, name, "openllmetry", [
      traceloop.createSpanProcessor({ exporter: new sdk.InMemorySpanExporter(), disableBatch: true }),
    ]),
  play,
});
