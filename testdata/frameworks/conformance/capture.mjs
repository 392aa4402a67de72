// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// Span capture shared by the conformance generators. Every generator is its own npm
// project (the frameworks pin incompatible versions of `ai`, zod and OpenTelemetry), so
// this file imports nothing: each generator passes the OpenTelemetry modules it installed.
// The spans are written as ONE OTLP/JSON ExportTraceServiceRequest on one line, with the
// JS exporters' own serialiser, like ../src/otel.mjs does for the samples.

import { writeFileSync } from "node:fs";

/**
 * Registers a global tracer provider that keeps every finished span in memory.
 *
 * @param {object} otel  the generator's modules: {api, asyncHooks, resources, sdk, transformer}
 * @param {string} name  <framework>_<scenario>; gives service.instance.id
 * @param {string} framework  gives service.name acme-support-<framework>
 * @param {object[]} [before]  span processors of the framework that must see every span
 *   before ours (e.g. one that copies context values onto spans)
 * @returns {{provider, exporter, processor, write(outPath): Promise<object>}}
 */
export function capture(otel, name, framework, before = []) {
  const { api, asyncHooks, resources, sdk, transformer } = otel;
  const exporter = new sdk.InMemorySpanExporter();
  const processor = new sdk.SimpleSpanProcessor(exporter);
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({
      "service.instance.id": `conformance-${name.replaceAll("_", "-")}`,
      "service.name": `acme-support-${framework.replaceAll("_", "-")}`,
      "service.version": "1.0.0",
      "deployment.environment.name": "agenteval-conformance",
      "telemetry.sdk.language": "nodejs",
      "telemetry.sdk.name": "opentelemetry",
    }),
    spanProcessors: [...before, processor],
  });
  const cm = new asyncHooks.AsyncLocalStorageContextManager();
  cm.enable();
  api.context.setGlobalContextManager(cm);
  api.trace.setGlobalTracerProvider(provider);
  return {
    provider,
    exporter,
    processor,
    /** Writes the finished spans (plus `extra` ReadableSpans) and returns counts. */
    async write(outPath, extra = []) {
      await provider.forceFlush();
      const spans = [...exporter.getFinishedSpans(), ...extra];
      const bytes = transformer.JsonTraceSerializer.serializeRequest(spans);
      const line = JSON.stringify(JSON.parse(Buffer.from(bytes).toString("utf8"))) + "\n";
      writeFileSync(outPath, line);
      return {
        spans: spans.length,
        traces: new Set(spans.map((s) => s.spanContext().traceId)).size,
        bytes: Buffer.byteLength(line),
      };
    },
  };
}
