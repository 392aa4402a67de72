// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Usage: node src/verify.mjs <samples-dir>
// Checks every <samples-dir>/*.json:
//  - OTLP/JSON shape: one line, one ExportTraceServiceRequest, lower-case hex
//    trace/span ids of the right length, decimal-string nanosecond timestamps,
//    end >= start, under 1 MiB (the otlpjsonfile receiver's default
//    max_log_size);
//  - content, against expected.mjs: one trace per turn (or, for a file whose
//    turns share one trace, that trace's root span and one invocation root
//    span per turn under it, disjoint in time), the session id in every turn,
//    user messages and final responses, every requested tool call (call id +
//    arguments), the error text of every faulty call, the tools offered to
//    each agent.
// Exits 1 on the first file with problems listed.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { EXPECTED } from "./expected.mjs";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node src/verify.mjs <samples-dir>");
  process.exit(2);
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const NANOS = /^[0-9]{19}$/;
const MAX_LINE = 1024 * 1024;
const TARGET = 200 * 1024;

function strings(v, out) {
  if (!v) return out;
  if (v.stringValue !== undefined) out.push(v.stringValue);
  if (v.arrayValue) for (const x of v.arrayValue.values ?? []) strings(x, out);
  if (v.kvlistValue) for (const kv of v.kvlistValue.values ?? []) strings(kv.value, out);
  return out;
}

/** Every string a span carries: attribute values, status message, event attributes. */
function spanStrings(s) {
  const out = [];
  for (const a of s.attributes ?? []) strings(a.value, out);
  if (s.status?.message) out.push(s.status.message);
  for (const e of s.events ?? []) for (const a of e.attributes ?? []) strings(a.value, out);
  return out;
}

/** True if needle occurs in the haystack as is or JSON-escaped (JSON in a JSON string). */
function has(hay, needle) {
  const esc = JSON.stringify(needle).slice(1, -1);
  const esc2 = JSON.stringify(esc).slice(1, -1);
  return hay.some((h) => h.includes(needle) || h.includes(esc) || h.includes(esc2));
}

function checkFile(file, exp) {
  const errs = [];
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").filter((l) => l.length);
  if (lines.length !== 1) errs.push(`want 1 JSON line, have ${lines.length}`);
  if (Buffer.byteLength(text) > MAX_LINE) errs.push(`${Buffer.byteLength(text)} bytes > 1 MiB (receiver max_log_size)`);
  const req = JSON.parse(lines[0]);
  if (!Array.isArray(req.resourceSpans) || req.resourceSpans.length !== 1) errs.push("want exactly one resourceSpans");
  const spans = [];
  for (const rs of req.resourceSpans ?? []) {
    if (!rs.resource?.attributes?.some((a) => a.key === "service.name")) errs.push("resource without service.name");
    for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push(s);
  }
  for (const s of spans) {
    if (!HEX32.test(s.traceId)) errs.push(`bad traceId ${s.traceId}`);
    if (!HEX16.test(s.spanId)) errs.push(`bad spanId ${s.spanId}`);
    if (s.parentSpanId !== undefined && s.parentSpanId !== "" && !HEX16.test(s.parentSpanId))
      errs.push(`bad parentSpanId ${s.parentSpanId}`);
    if (!NANOS.test(s.startTimeUnixNano) || !NANOS.test(s.endTimeUnixNano)) errs.push(`bad timestamps on ${s.name}`);
    else if (BigInt(s.endTimeUnixNano) < BigInt(s.startTimeUnixNano)) errs.push(`end < start on ${s.name}`);
  }
  const byTrace = new Map();
  for (const s of spans) {
    if (!byTrace.has(s.traceId)) byTrace.set(s.traceId, []);
    byTrace.get(s.traceId).push(s);
  }
  const start = (l) => l.reduce((m, s) => (BigInt(s.startTimeUnixNano) < m ? BigInt(s.startTimeUnixNano) : m), 1n << 64n);
  const end = (l) => l.reduce((m, s) => (BigInt(s.endTimeUnixNano) > m ? BigInt(s.endTimeUnixNano) : m), 0n);
  const traces = [...byTrace.values()].sort((a, b) => (start(a) < start(b) ? -1 : 1));
  // The spans of each turn, in start order: one trace each, or the subtrees of
  // the one trace's invocation roots.
  let turns = traces;
  if (exp.traces === undefined) {
    if (traces.length !== exp.turns.length) errs.push(`want ${exp.turns.length} traces (turns), have ${traces.length}`);
  } else {
    if (traces.length !== exp.traces) errs.push(`want ${exp.traces} traces, have ${traces.length}`);
    turns = invocations(traces[0] ?? [], exp, errs);
    if (turns.length !== exp.turns.length)
      errs.push(`want ${exp.turns.length} invocations (turns), have ${turns.length}`);
    turns.forEach((l, i) => {
      if (i > 0 && start(l) < end(turns[i - 1])) errs.push(`turn ${i + 1} starts before turn ${i} ends`);
    });
  }
  const hay = turns.map((l) => l.flatMap(spanStrings));
  const all = hay.flat();
  turns.forEach((l, i) => {
    const ok = l.some((s) =>
      (s.attributes ?? []).some((a) => a.key === exp.session_key && a.value.stringValue === exp.session_id),
    );
    if (!ok) errs.push(`turn ${i + 1}: no span with ${exp.session_key}=${exp.session_id}`);
  });
  exp.turns.forEach((t, i) => {
    const h = hay[i] ?? [];
    if (!has(h, t.user_message)) errs.push(`turn ${i + 1}: user message not found`);
    if (t.final_response && !has(h, t.final_response)) errs.push(`turn ${i + 1}: final response not found`);
    if (t.error_contains && !has(h, t.error_contains)) errs.push(`turn ${i + 1}: run error not found`);
  });
  for (const c of exp.tool_calls) {
    const h = hay[c.turn - 1] ?? [];
    if (!has(h, c.call_id)) errs.push(`turn ${c.turn}: call id ${c.call_id} not found`);
    if (Object.keys(c.arguments).length && !has(h, JSON.stringify(c.arguments)))
      errs.push(`turn ${c.turn}: arguments of ${c.call_id} not found: ${JSON.stringify(c.arguments)}`);
    if (c.error_contains && !has(h, c.error_contains)) errs.push(`turn ${c.turn}: error of ${c.call_id} not found`);
  }
  for (const [agent, tools] of Object.entries(exp.agents)) {
    if (!has(all, agent)) errs.push(`agent ${agent} not found`);
    for (const t of tools) if (!has(all, `"name":"${t}"`)) errs.push(`tool definition ${t} (${agent}) not found`);
  }
  return { errs, spans: spans.length, traces: traces.length, bytes: Buffer.byteLength(text) };
}

/**
 * The turns of a conversation run inside one trace: the trace must have one
 * root span, named exp.trace_root, whose children are the invocations' root
 * spans, each named exp.invocation_root. Returns each child's subtree (spans),
 * in start order.
 */
function invocations(spans, exp, errs) {
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
  if (roots.length !== 1) {
    errs.push(`want 1 root span in the trace, have ${roots.length}`);
    return [];
  }
  const root = roots[0];
  if (root.name !== exp.trace_root) errs.push(`root span is ${root.name}, want ${exp.trace_root}`);
  const children = new Map();
  for (const s of spans) {
    if (s === root) continue;
    if (!children.has(s.parentSpanId)) children.set(s.parentSpanId, []);
    children.get(s.parentSpanId).push(s);
  }
  const subtree = (s) => [s, ...(children.get(s.spanId) ?? []).flatMap(subtree)];
  const tops = (children.get(root.spanId) ?? []).sort((a, b) =>
    BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1,
  );
  for (const s of tops)
    if (s.name !== exp.invocation_root) errs.push(`invocation root ${s.name}, want ${exp.invocation_root}`);
  return tops.map(subtree);
}

let failed = 0;
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
for (const f of files) {
  const exp = EXPECTED[f];
  if (!exp) {
    console.log(`FAIL ${f}: not in expected.mjs`);
    failed++;
    continue;
  }
  const r = checkFile(join(dir, f), exp);
  const note = r.bytes > TARGET ? " (over the 200 KB target)" : "";
  if (r.errs.length) {
    failed++;
    console.log(`FAIL ${f}: ${r.errs.length} problems`);
    for (const e of r.errs.slice(0, 20)) console.log(`  - ${e}`);
  } else console.log(`ok   ${f}: ${r.spans} spans, ${r.traces} traces, ${r.bytes} bytes${note}`);
}
for (const f of Object.keys(EXPECTED)) if (!files.includes(f)) {
  console.log(`FAIL ${f}: missing`);
  failed++;
}
console.log(`${files.length - failed >= 0 ? files.length - failed : 0} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
