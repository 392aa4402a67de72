// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// AI SDK 7 (ai 7.x) with its OpenTelemetry integration @ai-sdk/otel (GenAI invoke_agent /
// chat / execute_tool spans), registered with registerTelemetry. The session id travels in
// the runtime context (runtimeContext + telemetry.includeRuntimeContext), which the
// integration writes as ai.settings.context.sessionId when runtimeContext is on: AI SDK 7
// has no telemetry metadata any more. The model is MockLanguageModelV4 from ai/test.
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import * as ai from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { capture } from "../capture.mjs";
import { playAISDK, stepContent } from "../ai_sdk_common.mjs";
import { MODEL_ID, main, sleep, tokens } from "../scripts.mjs";

function model(agent, steps) {
  return new MockLanguageModelV4({
    modelId: MODEL_ID,
    doGenerate: async (options) => {
      const step = steps.next();
      await sleep(80 + 15 * steps.index);
      const content = stepContent(step);
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
    },
  });
}

const options = (agent, sessionId) => ({
  runtimeContext: { sessionId, userId: "customer-042" },
  telemetry: {
    isEnabled: true,
    recordInputs: true,
    recordOutputs: true,
    functionId: agent,
    includeRuntimeContext: { sessionId: true, userId: true },
  },
});

// legacy_bad_tool_args: the same run through @ai-sdk/otel's LegacyOpenTelemetry, the
// ai.* span shape of AI SDK <= 6 for users who keep their dashboards.
const scenario = process.argv[2];

await main({
  framework: "ai_sdk_7",
  prefix: "sess-ai-sdk-7",
  variants: { legacy_bad_tool_args: "bad_tool_args" },
  setup: (name) => {
    const cap = capture({ api, asyncHooks, resources, sdk, transformer }, name, "ai_sdk_7");
    ai.registerTelemetry(
      scenario?.startsWith("legacy_")
        ? new LegacyOpenTelemetry()
        : new OpenTelemetry({ agentSpanName: "functionId", runtimeContext: true }),
    );
    return cap;
  },
  play: (_, script, sessionId) => playAISDK({ ai, z, model, options }, script, sessionId),
});
