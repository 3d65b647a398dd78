import { assert, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ConnectionRepo, SecretCipher } from "@modelgate/core"
import { Reencrypt, Storage } from "@modelgate/sql"
import { connection, scaffold } from "./Conformance.ts"
import { pgliteClient } from "./TestDatabase.ts"

const key = (byte: number) => new Uint8Array(32).fill(byte)
const cipher = (keys: ReadonlyArray<readonly [string, number]>, current: string) =>
  SecretCipher.SecretCipher.layerAesGcm({ keys: new Map(keys.map(([id, b]) => [id, key(b)])), current })

const k1 = cipher([["k1", 1]], "k1")
const k1k2 = cipher([["k1", 1], ["k2", 2]], "k2")
const k2 = cipher([["k2", 2]], "k2")

const withStorage = (keys: Layer.Layer<SecretCipher.SecretCipher>) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.provide(Storage.layer.pipe(Layer.provideMerge(keys))))

const storedKeyIds = Effect.flatMap(SqlClient, (sql) => sql<{ readonly ids: ReadonlyArray<string> }>`SELECT secret_key_ids AS ids FROM connections`)

layer(pgliteClient, { timeout: 60_000 })("secret keys", (it) => {
  it.effect("rotation: old keys still open, new writes use the current key, re-encryption moves old rows", () =>
    Effect.gen(function*() {
      const ref = yield* Effect.gen(function*() {
        const { organization } = yield* scaffold
        yield* (yield* ConnectionRepo.ConnectionRepo).insert(connection(organization, "rotating", "old-secret"))
        return { organization, environment: "prod", name: "rotating" }
      }).pipe(withStorage(k1))
      assert.deepStrictEqual((yield* storedKeyIds).map((r) => [...r.ids]), [["k1"]])

      // Start-up with only the new key fails, naming the missing key id.
      const refused = yield* Effect.exit(Effect.void.pipe(withStorage(k2)))
      assert.isTrue(Exit.isFailure(refused))
      if (Exit.isFailure(refused)) assert.match(Cause.pretty(refused.cause), /MODELGATE_SECRET_KEYS lacks the key id\(s\) k1/)

      // With both keys (k2 current): reads open k1 values; re-encryption moves them to k2.
      yield* Effect.gen(function*() {
        const repo = yield* ConnectionRepo.ConnectionRepo
        assert.strictEqual((yield* repo.get(ref)).settings.postgresConnection?.password, "old-secret")
        assert.strictEqual(yield* Reencrypt.run, 1)
        assert.strictEqual(yield* Reencrypt.run, 0)
      }).pipe(withStorage(k1k2))
      assert.deepStrictEqual((yield* storedKeyIds).map((r) => [...r.ids]), [["k2"]])

      // Now the old key can go.
      const read = yield* Effect.gen(function*() {
        return yield* (yield* ConnectionRepo.ConnectionRepo).get(ref)
      }).pipe(withStorage(k2))
      assert.strictEqual(read.settings.postgresConnection?.password, "old-secret")
      assert.strictEqual(read.settings.proxy?.ssh?.privateKey, "PRIVATE KEY")
    }))
})
