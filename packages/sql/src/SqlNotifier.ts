/**
 * The default Notifier: each notification is written to the `notification_outbox`
 * table and logged (recipients and subject, never more), for a mailer to deliver.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Notifier } from "@modelgate/core"

/** Notifier into the outbox table. */
export const layer = Layer.effect(
  Notifier.Notifier,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return Notifier.Notifier.of({
      notify: (n) =>
        Effect.orDie(sql`
          INSERT INTO notification_outbox (kind, recipients, subject, body)
          VALUES (${n.kind}, ${JSON.stringify(n.recipients)}::jsonb, ${n.subject}, ${n.body})`).pipe(
          Effect.andThen(Effect.logInfo("notification queued").pipe(Effect.annotateLogs({ kind: n.kind, recipients: n.recipients.join(", "), subject: n.subject }))),
          Effect.withSpan("SqlNotifier.notify")
        )
    })
  })
)
