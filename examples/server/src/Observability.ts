/**
 * Logs, traces and metrics of the example server. Logs go to stderr, one JSON object a line or a
 * pretty form for a terminal, from a minimum level; stdout stays the start-up announcement. With an
 * OTLP/HTTP endpoint, spans, metrics and logs are exported to it as JSON (Effect's built-in
 * exporters, no OpenTelemetry SDK).
 */
import { Layer, Logger, type LogLevel, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp, type OtlpExporter } from "effect/observability"

/** What to log and where to export telemetry. */
export interface Options {
  readonly logFormat: "json" | "pretty"
  readonly logLevel: LogLevel.LogLevel
  /** The OTLP/HTTP base URL (`/v1/traces`, `/v1/metrics`, `/v1/logs` are appended); absent: no export. */
  readonly otlpEndpoint?: string | undefined
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** Headers of every export request (an API key of the collector, say). */
  readonly otlpHeaders?: Readonly<Record<string, string>> | undefined
  /** How often spans and metrics are exported. */
  readonly tracesIntervalMillis?: number | undefined
  readonly metricsIntervalMillis?: number | undefined
}

/** Parses `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values URL-encoded. */
export const parseHeaders = (text: string): Record<string, string> | undefined => {
  const headers: Record<string, string> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    if (at <= 0) return undefined
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return undefined
    }
  }
  return headers
}

/** The loggers, the minimum log level and, with an endpoint, the OTLP exporters. */
export const layer = (options: Options): Layer.Layer<OtlpExporter.Flusher> | Layer.Layer<never> => {
  const logger = Logger.layer([options.logFormat === "json" ? Logger.withConsoleError(Logger.formatJson) : Logger.consolePretty()])
  const level = Layer.mergeAll(Layer.succeed(References.MinimumLogLevel, options.logLevel), Layer.succeed(Logger.LogToStderr, true))
  if (options.otlpEndpoint === undefined) return Layer.mergeAll(logger, level)
  const otlp = Otlp.layerJson({
    baseUrl: options.otlpEndpoint.replace(/\/+$/, ""),
    resource: { serviceName: options.serviceName, ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion }) },
    ...(options.otlpHeaders === undefined ? {} : { headers: options.otlpHeaders }),
    ...(options.tracesIntervalMillis === undefined ? {} : { tracerExportInterval: options.tracesIntervalMillis }),
    ...(options.metricsIntervalMillis === undefined ? {} : { metricsExportInterval: options.metricsIntervalMillis }),
    // Logs are exported beside the console's, not instead of them.
    loggerMergeWithExisting: true
  }).pipe(Layer.provide(FetchHttpClient.layer))
  // The console logger first: the OTLP logger joins the loggers it finds.
  return Layer.mergeAll(otlp.pipe(Layer.provideMerge(logger)), level)
}
