/**
 * The port that seals secrets at rest, and its AES-256-GCM implementation on
 * WebCrypto: a random 96-bit nonce per secret, the key id stored beside the
 * ciphertext, and the record's identity as associated data so a sealed value
 * cannot be moved to another record or field. Several keys may decrypt; only the
 * current one encrypts, which is what key rotation needs.
 */
import { Config, Context, Effect, Layer, Redacted, Result, Schema } from "effect"
import { Aead, SecureRandom } from "effect/crypto"

/** A sealed secret: `<keyId>:<base64 nonce ‖ ciphertext ‖ tag>`. */
export type Sealed = string

/** A sealed value could not be opened: unknown key id, tampering, or the wrong record. */
export class SecretDecryptFailed extends Schema.TaggedError<SecretDecryptFailed>()("SecretDecryptFailed", {
  message: Schema.String,
  keyId: Schema.String
}) {}

/** Seals and opens secrets. */
export class SecretCipher extends Context.Service<SecretCipher, {
  /** The id of the key new secrets are sealed with. */
  readonly currentKeyId: string
  /** Every key id that can open sealed values. */
  readonly keyIds: ReadonlyArray<string>
  /** Seals `plaintext`, bound to `associatedData` (the record's identity and the field's path). */
  readonly seal: (plaintext: string, associatedData: string) => Effect.Effect<Sealed>
  /** Opens a sealed value with the key its id names. */
  readonly open: (sealed: Sealed, associatedData: string) => Effect.Effect<string, SecretDecryptFailed>
  /** The key id a sealed value was made with (to find values that need re-encryption). */
  readonly keyIdOf: (sealed: Sealed) => string | undefined
}>()("@modelgate/core/SecretCipher") {
  /**
   * AES-256-GCM with the given keys (id → 32 raw bytes); `current` encrypts.
   * Fails at construction when `current` is not among the keys or a key is not 32 bytes.
   */
  static readonly layerAesGcm = (options: { readonly keys: ReadonlyMap<string, Uint8Array>; readonly current: string }) =>
    Layer.effect(SecretCipher, make(options)).pipe(
      Layer.provide(Aead.layerWebCrypto),
      Layer.provide(SecureRandom.layerWebCrypto)
    )

  /**
   * AES-256-GCM with the keys of `MODELGATE_SECRET_KEYS` (see {@link parseKeyring}).
   * A missing or malformed value stops start-up with a message naming the variable.
   */
  static readonly layerConfig = Layer.unwrap(
    Effect.gen(function*() {
      const text = yield* Config.Redacted("MODELGATE_SECRET_KEYS")
      const keyring = parseKeyring(Redacted.value(text))
      if (keyring._tag === "Failure") {
        return yield* Effect.die(new Error(`MODELGATE_SECRET_KEYS: ${keyring.failure}`))
      }
      return SecretCipher.layerAesGcm(keyring.success)
    })
  )

  /** AES-256-GCM with one fresh random key: for tests and throwaway in-memory setups. */
  static readonly layerMemory = Layer.unwrap(
    Effect.map(
      Effect.sync(() => SecureRandom.randomBytesUnsafe(32)),
      (key) => SecretCipher.layerAesGcm({ keys: new Map([["test", key]]), current: "test" })
    )
  )
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const nonceLength = 12

const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes))
const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

const make = Effect.fnUntraced(function*(options: { readonly keys: ReadonlyMap<string, Uint8Array>; readonly current: string }) {
  const aead = yield* Aead.Aead
  const random = yield* SecureRandom.SecureRandom
  if (!options.keys.has(options.current)) {
    return yield* Effect.die(new Error(`The current secret key id ${options.current} is not among the configured keys`))
  }
  const keys = new Map<string, Aead.Key>()
  for (const [id, bytes] of options.keys) {
    if (id.includes(":")) return yield* Effect.die(new Error(`Secret key id ${id} must not contain ':'`))
    if (bytes.length !== 32) return yield* Effect.die(new Error(`Secret key ${id} must be 32 bytes, got ${bytes.length}`))
    keys.set(id, yield* Effect.orDie(Aead.key(Aead.aes256Gcm, bytes)))
  }
  const currentKey = keys.get(options.current)
  if (currentKey === undefined) return yield* Effect.die(new Error("unreachable: current key"))

  const keyIdOf = (sealed: Sealed) => {
    const at = sealed.indexOf(":")
    return at <= 0 ? undefined : sealed.slice(0, at)
  }

  return SecretCipher.of({
    currentKeyId: options.current,
    keyIds: [...keys.keys()].sort(),
    keyIdOf,
    seal: (plaintext, associatedData) =>
      Effect.gen(function*() {
        const nonce = yield* random.randomBytes(nonceLength)
        const ciphertext = yield* aead.encrypt(currentKey, encoder.encode(plaintext), { nonce, aad: encoder.encode(associatedData) })
        const out = new Uint8Array(nonce.length + ciphertext.length)
        out.set(nonce)
        out.set(ciphertext, nonce.length)
        return `${options.current}:${toBase64(out)}`
      }).pipe(Effect.orDie),
    open: (sealed, associatedData) => {
      const keyId = keyIdOf(sealed) ?? ""
      const key = keys.get(keyId)
      if (key === undefined) {
        return Effect.fail(new SecretDecryptFailed({ keyId, message: `No secret key with id ${JSON.stringify(keyId)} is configured` }))
      }
      return Effect.try({
        try: () => fromBase64(sealed.slice(keyId.length + 1)),
        catch: () => new SecretDecryptFailed({ keyId, message: "Sealed secret is not valid base64" })
      }).pipe(
        Effect.flatMap((bytes) =>
          aead.decrypt(key, bytes.subarray(nonceLength), { nonce: bytes.subarray(0, nonceLength), aad: encoder.encode(associatedData) })
        ),
        Effect.map((plain) => decoder.decode(plain)),
        Effect.mapError(() => new SecretDecryptFailed({ keyId, message: "Sealed secret failed authentication (tampered, or sealed for another record)" }))
      )
    }
  })
})

/**
 * Parses a keyring: comma-separated `id=base64` pairs of 32-byte keys, the current
 * one marked with a leading `*` (a single key is current by itself), e.g.
 * `2026-01=q1w2…,*2026-11=e3r4…`. Ids are letters, digits, `_`, `.` and `-`.
 */
export const parseKeyring = (
  text: string
): Result.Result<{ readonly keys: ReadonlyMap<string, Uint8Array>; readonly current: string }, string> => {
  const entries = text.split(",").map((e) => e.trim()).filter((e) => e !== "")
  if (entries.length === 0) return Result.fail("no keys given; expected id=base64 pairs, the current one marked with '*'")
  const keys = new Map<string, Uint8Array>()
  const current: Array<string> = []
  // Messages name entries by position, never by content: a mistyped entry may be key material.
  for (const [index, entry] of entries.entries()) {
    const n = index + 1
    const at = entry.indexOf("=")
    const marked = entry.startsWith("*")
    const id = at <= 0 ? "" : entry.slice(marked ? 1 : 0, at)
    if (!/^[A-Za-z0-9_.-]+$/.test(id)) {
      return Result.fail(`entry ${n} is not id=base64 (ids may only use letters, digits, '_', '.' and '-')`)
    }
    if (keys.has(id)) return Result.fail(`entry ${n} repeats a key id given twice`)
    let bytes: Uint8Array
    try {
      bytes = fromBase64(entry.slice(at + 1))
    } catch {
      return Result.fail(`entry ${n}: the key is not valid base64`)
    }
    if (bytes.length !== 32) return Result.fail(`entry ${n}: the key must decode to 32 bytes, got ${bytes.length}`)
    keys.set(id, bytes)
    if (marked) current.push(id)
  }
  if (current.length > 1) return Result.fail(`only one key may be marked current with '*', got ${current.length}`)
  const only = keys.size === 1 ? [...keys.keys()][0] : undefined
  const chosen = current[0] ?? only
  if (chosen === undefined) return Result.fail("mark the current key with a leading '*'")
  return Result.succeed({ keys, current: chosen })
}
