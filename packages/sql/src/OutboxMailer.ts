/**
 * Delivers the notification outbox by e-mail over SMTP (nodemailer): notifications
 * waiting in `notification_outbox` are sent oldest first, each marked sent once the
 * server accepted it; a failed send is retried on the next round. Several instances
 * may run it: rows are claimed with `FOR UPDATE SKIP LOCKED`.
 */
import { Config, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import nodemailer, { type Transporter } from "nodemailer"

/** SMTP settings. */
export interface Options {
  /** `smtp://user:pass@host:port` or `smtps://…`. */
  readonly url: Redacted.Redacted<string>
  readonly from: string
  readonly pollEvery?: Duration.Input
  readonly batchSize?: number
}

interface Row {
  readonly id: string
  readonly recipients: unknown
  readonly subject: string
  readonly body: string
}

const addresses = (recipients: unknown): ReadonlyArray<string> =>
  (Array.isArray(recipients) ? recipients : typeof recipients === "string" ? JSON.parse(recipients) as unknown[] : [])
    .filter((r): r is string => typeof r === "string" && r.includes("@"))

/** Sends one round: up to `batchSize` waiting notifications; returns how many were sent. */
export const deliver = (transport: Transporter, options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<Row>`
        SELECT id::text AS id, recipients, subject, body FROM notification_outbox
        WHERE sent_at IS NULL ORDER BY id LIMIT ${options.batchSize ?? 20} FOR UPDATE SKIP LOCKED`
      let sent = 0
      for (const row of rows) {
        const to = addresses(row.recipients)
        if (to.length > 0) {
          const ok = yield* Effect.tryPromise(() => transport.sendMail({ from: options.from, to: [...to], subject: row.subject, text: row.body })).pipe(
            Effect.as(true),
            Effect.catch((error) => Effect.logWarning("notification not sent; will retry", { id: row.id, reason: String(error) }).pipe(Effect.as(false)))
          )
          if (!ok) continue
        }
        yield* sql`UPDATE notification_outbox SET sent_at = now() WHERE id = ${row.id}::bigint`
        sent++
      }
      return sent
    }))
  })

/** Runs delivery rounds in the background for the layer's lifetime. */
export const layer = (options: Options) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const transport = nodemailer.createTransport(Redacted.value(options.url))
    yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
    yield* deliver(transport, options).pipe(
      Effect.orDie,
      Effect.catchDefect((defect) => Effect.logError("notification delivery failed", defect)),
      Effect.repeat(Schedule.spaced(options.pollEvery ?? Duration.seconds(5))),
      Effect.forkScoped
    )
  }))

/** From `MODELGATE_SMTP_URL` and `MODELGATE_SMTP_FROM`; no mailer when the URL is unset. */
export const layerConfig = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.option(Config.Redacted("MODELGATE_SMTP_URL"))
  if (Option.isNone(url)) return Layer.empty
  const from = yield* Config.String("MODELGATE_SMTP_FROM")
  return layer({ url: url.value, from })
}))
