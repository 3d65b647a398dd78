/**
 * The port that tells people about permission changes: a grant made with
 * `notifyPeople`, or an access request for a package's admins. Adapters deliver
 * (an outbox table with a log line by default, SMTP behind configuration).
 */
import { Context, Effect, Layer, Ref } from "effect"

/** One notification to one or more recipients (e-mail addresses or userGroupIds). */
export interface Notification {
  readonly kind: "permission.granted" | "permission.requested"
  readonly recipients: ReadonlyArray<string>
  readonly subject: string
  readonly body: string
}

/** Delivers notifications. */
export class Notifier extends Context.Service<Notifier, {
  readonly notify: (notification: Notification) => Effect.Effect<void>
}>()("@modelgate/core/Notifier") {}

/** What the in-memory notifier has been asked to send, for tests. */
export class NotifierOutbox extends Context.Service<NotifierOutbox, {
  readonly sent: Effect.Effect<ReadonlyArray<Notification>>
}>()("@modelgate/core/NotifierOutbox") {}

/** An in-memory notifier that keeps every notification, with its outbox for assertions. */
export const layerMemory = Layer.effectContext(
  Effect.gen(function*() {
    const ref = yield* Ref.make<ReadonlyArray<Notification>>([])
    return Context.make(Notifier, Notifier.of({ notify: (n) => Ref.update(ref, (all) => [...all, n]) })).pipe(
      Context.add(NotifierOutbox, NotifierOutbox.of({ sent: Ref.get(ref) }))
    )
  })
)
