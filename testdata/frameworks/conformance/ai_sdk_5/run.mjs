// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// AI SDK 5 (ai 5.x): generateText with experimental_telemetry (the legacy ai.* spans,
// session id in ai.telemetry.metadata.sessionId) over MockLanguageModelV2 from ai/test.
// Usage: node run.mjs <scenario> <out-dir> | --list

import * as api from "@opentelemetry/api";
import * as asyncHooks from "@opentelemetry/context-async-hooks";
import * as resources from "@opentelemetry/resources";
import * as sdk from "@opentelemetry/sdk-trace-base";
import * as transformer from "@opentelemetry/otlp-transformer";
import * as ai from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";
import { capture } from "../capture.mjs";
import { playAISDK, stepContent } from "../ai_sdk_common.mjs";
import { MODEL_ID, main, sleep, tokens } from "../scripts.mjs";

function model(agent, steps) {
  return new MockLanguageModelV2({
    modelId: MODEL_ID,
    doGenerate: async (options) => {
      const step = steps.next();
      await sleep(80 + 15 * steps.index);
      const content = stepContent(step);
      const inTok = tokens(JSON.stringify(options.prompt)) + tokens(JSON.stringify(options.tools ?? []));
      const outTok = tokens(JSON.stringify(content));
      return {
        content,
        finishReason: step.text ? "stop" : "tool-calls",
        usage: { inputTokens: inTok, outputTokens: outTok, totalTokens: inTok + outTok },
        response: { id: `resp_${agent}_${String(steps.index).padStart(2, "0")}`, modelId: MODEL_ID, timestamp: new Date() },
        warnings: [],
      };
    },
  });
}

const options = (agent, sessionId) => ({
  experimental_telemetry: {
    isEnabled: true,
    recordInputs: true,
    recordOutputs: true,
    functionId: agent,
    metadata: { sessionId, userId: "customer-042" },
  },
});

await main({
  framework: "ai_sdk_5",
  prefix: "sess-ai-sdk-5",
  setup: (name) => capture({ api, asyncHooks, resources, sdk, transformer }, name, "ai_sdk_5"),
  play: (_, script, sessionId) => playAISDK({ ai, z, model, options }, script, sessionId),
});
