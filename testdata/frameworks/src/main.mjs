// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Usage: node src/main.mjs <framework> <scenario> <out-dir>
//        node src/main.mjs <framework> --list      (prints the scenario names)
// Runs one scenario of one framework in this process (instrumentations patch
// global state, so every scenario gets a fresh process) and writes
// <out-dir>/<framework>_<scenario>.json.

import { join } from "node:path";
import { setupTracing, writeOTLPJSON } from "./otel.mjs";

const FRAMEWORKS = {
  vercel_ai: () => import("./vercel_ai.mjs"),
  langgraph: () => import("./langgraph.mjs"),
  openai_agents: () => import("./openai_agents.mjs"),
};

const [fw, scenario, outDir] = process.argv.slice(2);
if (FRAMEWORKS[fw] && scenario === "--list") {
  const { SCENARIOS } = await FRAMEWORKS[fw]();
  console.log(Object.keys(SCENARIOS).join("\n"));
  process.exit(0);
}
if (!FRAMEWORKS[fw] || !scenario || !outDir) {
  console.error(`usage: node src/main.mjs <${Object.keys(FRAMEWORKS).join("|")}> <scenario> <out-dir>`);
  process.exit(2);
}
const name = `${fw}_${scenario}`;
// The tracer provider must be global before the framework modules load.
const { provider, exporter } = setupTracing({
  instanceId: `sample-${name.replaceAll("_", "-")}`,
  serviceName: `acme-support-${fw.replaceAll("_", "-")}`,
});
const mod = await FRAMEWORKS[fw]();
if (mod.instrument) await mod.instrument(provider);
const run = mod.SCENARIOS[scenario];
if (!run) {
  console.error(`${fw}: unknown scenario ${scenario}; have ${Object.keys(mod.SCENARIOS).join(", ")}`);
  process.exit(2);
}
await run();
const out = join(outDir, `${name}.json`);
const st = await writeOTLPJSON(provider, exporter, out);
console.log(`${out}: ${st.spans} spans, ${st.traces} traces, ${st.bytes} bytes`);
