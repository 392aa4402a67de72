// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// The four conversations every conformance generator plays, as model scripts: what the
// scripted triage and refund models answer, step by step. Same facts and faults as the
// samples (../src/vercel_ai.mjs and ../README.md): a clean handoff, bad arguments, a tool
// the agent does not have, and a three-turn conversation with a user correction.
// A step is {toolCalls: [{id, name, args}]} or {text}. The generators turn a
// transfer_to_refund_agent call into their framework's own handoff (sub-agent, agent as
// tool, transfer_to_agent...) where the framework has one; `delegate` tells them the
// order id and the request the triage agent passes on.

import { SAY, USER } from "../src/domain.mjs";

export { SAY, USER };
export * from "../src/domain.mjs";

const call = (id, name, args) => ({ id, name, args });
const lookup = (id, order) => call(id, "lookup_order", { order_id: order });
const transfer = (id, order, request) => call(id, "transfer_to_refund_agent", { order_id: order, request });
const refund = (id, order, amount) => call(id, "issue_refund", { order_id: order, amount });
const refundDone12345 = { text: "Refund RF-1001 of $49.99 for order 12345 approved." };

/** name → {session, users, triage[], refund[]}; session is the suffix after the framework prefix. */
export const SCRIPTS = {
  handoff: {
    session: "handoff-0001",
    users: [USER.damaged],
    triage: [
      { toolCalls: [lookup("call_t1_lookup_1", "12345")] },
      { toolCalls: [transfer("call_t1_transfer_1", "12345", SAY.handoffRequest12345)] },
      { text: SAY.refund12345 },
    ],
    refund: [{ toolCalls: [refund("call_t1_refund_1", "12345", 49.99)] }, refundDone12345],
  },
  bad_tool_args: {
    session: "badargs-0001",
    users: [USER.damaged],
    triage: [
      { toolCalls: [lookup("call_t1_lookup_1", "12345")] },
      { toolCalls: [transfer("call_t1_transfer_1", "12345", SAY.handoffRequest12345)] },
      { text: SAY.refund12345 },
    ],
    refund: [
      { toolCalls: [call("call_t1_refund_1", "issue_refund", { order_id: "12345", reason: "damaged" })] },
      { toolCalls: [refund("call_t1_refund_2", "12345", 49.99)] },
      refundDone12345,
    ],
  },
  unknown_tool: {
    session: "unknowntool-0001",
    users: [USER.damaged],
    triage: [
      { toolCalls: [lookup("call_t1_lookup_1", "12345")] },
      { toolCalls: [refund("call_t1_refund_x", "12345", 49.99)] },
      { toolCalls: [transfer("call_t1_transfer_1", "12345", SAY.handoffRequest12345)] },
      { text: SAY.refund12345 },
    ],
    refund: [{ toolCalls: [refund("call_t1_refund_1", "12345", 49.99)] }, refundDone12345],
  },
  multi_turn: {
    session: "multiturn-0001",
    users: [USER.t1, USER.t2, USER.t3],
    triage: [
      { toolCalls: [lookup("call_t1_lookup_1", "12345")] },
      { toolCalls: [transfer("call_t1_transfer_1", "12345", SAY.handoffRequest12345Wrong)] },
      { text: SAY.refund12345 },
      { toolCalls: [lookup("call_t2_lookup_1", "123")] },
      { toolCalls: [transfer("call_t2_transfer_1", "123", SAY.handoffRequest123)] },
      { text: SAY.refund123 },
      { text: SAY.bye },
    ],
    refund: [
      { toolCalls: [refund("call_t1_refund_1", "12345", 49.99)] },
      refundDone12345,
      { toolCalls: [refund("call_t2_refund_1", "123", 19.5)] },
      { text: "Refund RF-1002 of $19.50 for order 123 approved." },
    ],
  },
};

/** A cursor over one agent's script; next() throws when the script is exhausted. */
export function cursor(agent, steps) {
  let i = 0;
  return {
    get index() {
      return i;
    },
    next() {
      const s = steps[i++];
      if (!s) throw new Error(`${agent}: script exhausted after ${steps.length} steps`);
      return s;
    },
  };
}

/**
 * The command line every generator shares: `node run.mjs <scenario> <out-dir>` or
 * `node run.mjs --list`. Calls play(scenarioName, script, sessionId) between capture
 * start and file write. variants maps extra scenario names to the script they replay.
 */
export async function main({ framework, prefix, setup, play, variants = {} }) {
  const [scenario, outDir] = process.argv.slice(2);
  if (scenario === "--list") {
    console.log([...Object.keys(SCRIPTS), ...Object.keys(variants)].join("\n"));
    return;
  }
  // A variant replays one of the scripts with another shape of the framework (its
  // name is passed on to play; the session id gets the variant's name).
  const script = SCRIPTS[scenario] ?? (variants[scenario] && { ...SCRIPTS[variants[scenario]], session: `${scenario.replaceAll("_", "")}-0001` });
  if (!script || !outDir) {
    console.error(`usage: node run.mjs <${Object.keys(SCRIPTS).join("|")}> <out-dir> | --list`);
    process.exit(2);
  }
  const name = `${framework}_${scenario}`;
  const cap = await setup(name);
  await play(scenario, script, `${prefix}-${script.session}`, cap);
  const out = `${outDir}/${name}.json`;
  const st = await cap.write(out);
  console.log(`${out}: ${st.spans} spans, ${st.traces} traces, ${st.bytes} bytes`);
  // Some frameworks keep timers alive (VoltAgent's observability, the model registry):
  // the file is written, the run is over.
  process.exit(0);
}

/**
 * The triage script of a framework whose handoff passes control: the sub-agent answers
 * the user, so the triage agent's answer after each transfer is never asked for.
 */
export function passControl(steps) {
  return steps.filter(
    (s, i) => !(s.text && steps[i - 1]?.toolCalls?.some((c) => c.name === "transfer_to_refund_agent")),
  );
}
