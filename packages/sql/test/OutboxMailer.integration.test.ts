import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import { SMTPServer } from "smtp-server"
import { Notifier, SecretCipher } from "@modelgate/core"
import { OutboxMailer, Storage } from "@modelgate/sql"
import { SqlClient } from "effect/sql/SqlClient"
import { pgliteClient } from "./TestDatabase.ts"

interface Mail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly data: string
}

// A real SMTP server on loopback that keeps what it receives.
const smtp = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ server: SMTPServer; port: number; mails: Array<Mail> }>((done) => {
      const mails: Array<Mail> = []
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS"],
        onData(stream, session, callback) {
          let data = ""
          stream.on("data", (c: Buffer) => (data += c.toString()))
          stream.on("end", () => {
            mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address), data })
            callback()
          })
        }
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.server.address()
        done({ server, port: typeof address === "object" && address !== null ? address.port : 0, mails })
      })
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

describe("OutboxMailer", () => {
  it.live("delivers queued notifications once, by SMTP, and marks them sent", () =>
    Effect.gen(function*() {
      const { mails, port } = yield* smtp
      const notifier = yield* Notifier.Notifier
      yield* notifier.notify({ kind: "permission.granted", recipients: ["ada@example.com", "grace@example.com"], subject: "Welcome to shop", body: "You can now read shop." })
      yield* notifier.notify({ kind: "permission.requested", recipients: ["group:nobody-with-address"], subject: "No address", body: "-" })
      const options = { url: Redacted.make(`smtp://127.0.0.1:${port}`), from: "modelgate@example.com" }
      const transport = nodemailer.createTransport(Redacted.value(options.url), { ignoreTLS: true } as object)
      assert.strictEqual(yield* OutboxMailer.deliver(transport, options), 2)
      assert.strictEqual(yield* OutboxMailer.deliver(transport, options), 0)
      assert.strictEqual(mails.length, 1)
      assert.deepStrictEqual(mails[0]?.to, ["ada@example.com", "grace@example.com"])
      assert.include(mails[0]?.data, "Subject: Welcome to shop")
      const pending = yield* Effect.flatMap(SqlClient, (sql) => sql`SELECT id FROM notification_outbox WHERE sent_at IS NULL`)
      assert.strictEqual(pending.length, 0)
      transport.close()
    }).pipe(
      Effect.scoped,
      Effect.provide(Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(pgliteClient)))
    ), 60_000)
})
