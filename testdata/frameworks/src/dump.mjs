// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Usage: node src/dump.mjs <file.json> [attr-substring ...]
// Prints the span tree of an OTLP/JSON file, one line per span, with the
// attributes whose key contains one of the given substrings (all when none).

import { readFileSync } from "node:fs";

const [file, ...filters] = process.argv.slice(2);
const req = JSON.parse(readFileSync(file, "utf8"));
const spans = [];
for (const rs of req.resourceSpans)
  for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, scope: ss.scope?.name });

const val = (v) => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return v.intValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return JSON.stringify((v.arrayValue.values ?? []).map(val));
  return JSON.stringify(v);
};
const byParent = new Map();
const ids = new Set(spans.map((s) => s.spanId));
for (const s of spans) {
  const p = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : "";
  if (!byParent.has(p)) byParent.set(p, []);
  byParent.get(p).push(s);
}
for (const l of byParent.values()) l.sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
const print = (s, depth) => {
  const ms = Number((BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1000000n);
  const st = s.status?.code ? ` status=${s.status.code}${s.status.message ? ":" + s.status.message : ""}` : "";
  console.log(`${"  ".repeat(depth)}${s.name} [${s.traceId.slice(0, 8)}/${s.spanId.slice(0, 8)}] ${ms}ms${st}`);
  for (const a of s.attributes ?? []) {
    if (filters.length && !filters.some((f) => a.key.includes(f))) continue;
    let v = String(val(a.value));
    if (v.length > 400) v = v.slice(0, 400) + "…";
    console.log(`${"  ".repeat(depth)}  · ${a.key} = ${v}`);
  }
  for (const e of s.events ?? []) console.log(`${"  ".repeat(depth)}  ! event ${e.name}`);
  for (const c of byParent.get(s.spanId) ?? []) print(c, depth + 1);
};
for (const r of byParent.get("") ?? []) print(r, 0);
