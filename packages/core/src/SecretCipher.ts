/**
 * The port that seals secrets at rest, and its AES-256-GCM implementation on
 * WebCrypto: a random 96-bit nonce per secret, the key id stored beside the
 * ciphertext, and the record's identity as associated data so a sealed value
 * cannot be moved to another record or field. Several keys may decrypt; only the
 * current one encrypts, which is what key rotation needs.
 */
import { Context, Effect, Layer, Schema } from "effect"
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
