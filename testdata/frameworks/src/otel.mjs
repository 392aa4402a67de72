// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// OpenTelemetry JS SDK set-up shared by every scenario: an in-memory exporter,
// an AsyncLocalStorage context manager (so that context-carried attributes such
// as OpenInference's session.id reach child spans), and the OTLP/JSON
// serialisation of the finished spans into one ExportTraceServiceRequest.
// Also the application's own span around a whole conversation.

import { writeFileSync } from "node:fs";
import { SpanStatusCode, context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/**
 * Registers a global tracer provider that keeps every finished span in memory.
 *
 * @param {object} opts
 * @param {string} opts.instanceId  service.instance.id; unique per sample file. It is the
 *   first resource attribute so that the first bytes of every file differ (the
 *   otlpjsonfile receiver's file consumer fingerprints files by their first 1 KiB).
 * @param {string} opts.serviceName service.name
 * @returns {{provider: BasicTracerProvider, exporter: InMemorySpanExporter}}
 */
export function setupTracing({ instanceId, serviceName }) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.instance.id": instanceId,
      "service.name": serviceName,
      "service.version": "1.0.0",
      "deployment.environment.name": "agenteval-sample",
      "telemetry.sdk.language": "nodejs",
      "telemetry.sdk.name": "opentelemetry",
      "telemetry.sdk.version": "2.12.1",
    }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const cm = new AsyncLocalStorageContextManager();
  cm.enable();
  context.setGlobalContextManager(cm);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return { provider, exporter };
}

/**
 * Flushes the provider and writes all finished spans as ONE OTLP/JSON
 * ExportTraceServiceRequest on ONE line (JSON Lines, as the contrib otlpjsonfile
 * receiver and ptrace.JSONUnmarshaler both read it).
 *
 * @returns {{spans: number, traces: number, bytes: number}}
 */
export async function writeOTLPJSON(provider, exporter, outPath) {
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  // Re-encode to be sure the line is compact and newline-free.
  const req = JSON.parse(Buffer.from(bytes).toString("utf8"));
  const line = JSON.stringify(req) + "\n";
  writeFileSync(outPath, line);
  await provider.shutdown();
  return {
    spans: spans.length,
    traces: new Set(spans.map((s) => s.spanContext().traceId)).size,
    bytes: Buffer.byteLength(line),
  };
}

/**
 * Runs fn inside a span of the application itself, started with the OTel API
 * as a chat loop or a request handler starts one
 * (tracer.startActiveSpan(name, ...), tracer "acme-support-app", kind
 * INTERNAL): every framework span started in fn becomes part of its trace,
 * each invocation's root span a child of it. The span carries only the given
 * attributes (no GenAI ones) and ends when fn settles, with status ERROR and an
 * exception event if fn throws.
 *
 * @param {string} name span name, e.g. "conversation"
 * @param {Record<string, string>} attributes
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 * @template T
 */
export function inAppSpan(name, attributes, fn) {
  return trace.getTracer("acme-support-app", "1.0.0").startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(err?.message ?? err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
