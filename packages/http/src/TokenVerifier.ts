/**
 * Verifies admin API bearer tokens (JWT) with `jose`: an HS256 shared secret for
 * development, or a JWKS URL with issuer and audience for production. Only the
 * configured algorithms are accepted (no `none`, no HS/RS confusion); `exp` and
 * `nbf` are checked with a small leeway. The claims become the Actor.
 */
import { Config, Context, Effect, Layer, Option, Predicate, Redacted } from "effect"
import * as jose from "jose"
import { Errors, type Roles } from "@modelgate/core"

/** Verifies a bearer token into the caller it names. */
export class TokenVerifier extends Context.Service<TokenVerifier, {
  readonly verify: (token: string) => Effect.Effect<Roles.Actor, Errors.AuthenticationRequired>
}>()("@modelgate/http/TokenVerifier") {
  /** HS256 with a shared secret (development and the example server). */
  static readonly layerHs256 = (options: {
    readonly secret: Redacted.Redacted<string>
    readonly issuer?: string | undefined
    readonly audience?: string | undefined
  }) =>
    Layer.effect(
      TokenVerifier,
      // The HMAC key is imported once, not at every verification.
      Effect.map(
        Effect.promise(() =>
          crypto.subtle.importKey("raw", new TextEncoder().encode(Redacted.value(options.secret)), { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
        ),
        (key) => make(key, ["HS256"], options)
      )
    )

  /** Asymmetric keys from a JWKS URL (production identity providers). */
  static readonly layerJwks = (options: {
    readonly url: string
    readonly issuer: string
    readonly audience: string
    readonly algorithms?: ReadonlyArray<string>
  }) =>
    Layer.succeed(
      TokenVerifier,
      make(jose.createRemoteJWKSet(new URL(options.url)), options.algorithms ?? ["RS256", "ES256", "EdDSA"], options)
    )

  /**
   * From configuration: `MODELGATE_JWT_JWKS_URL` (with `MODELGATE_JWT_ISSUER` and
   * `MODELGATE_JWT_AUDIENCE`, both required then), else `MODELGATE_JWT_SECRET`.
   */
  static readonly layerConfig = Layer.unwrap(Effect.gen(function*() {
    const jwks = yield* Config.option(Config.String("MODELGATE_JWT_JWKS_URL"))
    const issuer = yield* Config.option(Config.String("MODELGATE_JWT_ISSUER"))
    const audience = yield* Config.option(Config.String("MODELGATE_JWT_AUDIENCE"))
    if (Option.isSome(jwks)) {
      return TokenVerifier.layerJwks({
        url: jwks.value,
        issuer: yield* Config.String("MODELGATE_JWT_ISSUER"),
        audience: yield* Config.String("MODELGATE_JWT_AUDIENCE")
      })
    }
    return TokenVerifier.layerHs256({
      secret: yield* Config.Redacted("MODELGATE_JWT_SECRET"),
      issuer: Option.getOrUndefined(issuer),
      audience: Option.getOrUndefined(audience)
    })
  }))
}

/** Clock skew tolerated on `exp` and `nbf`, in seconds. */
export const leewaySeconds = 30

const userIdPattern = /^[a-zA-Z0-9_.-]+$/

type VerifyKey = Parameters<typeof jose.jwtVerify>[1]

const make = (
  key: VerifyKey,
  algorithms: ReadonlyArray<string>,
  options: { readonly issuer?: string | undefined; readonly audience?: string | undefined }
): TokenVerifier["Service"] => ({
  verify: (token) =>
    Effect.tryPromise({
      try: () =>
        jose.jwtVerify(token, key, {
          algorithms: [...algorithms],
          clockTolerance: leewaySeconds,
          ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
          ...(options.audience === undefined ? {} : { audience: options.audience })
        }),
      // Never echo the token or the verifier's internals: one stable message.
      catch: () => new Errors.AuthenticationRequired({ message: "A valid bearer token is required" })
    }).pipe(
      Effect.flatMap(({ payload }) => {
        const sub = payload.sub
        if (!Predicate.isString(sub) || !userIdPattern.test(sub)) {
          return Effect.fail(new Errors.AuthenticationRequired({ message: "The token has no valid subject (sub)" }))
        }
        const email = payload["email"]
        const groups = payload["groups"]
        return Effect.succeed({
          userId: sub,
          ...(Predicate.isString(email) ? { email } : {}),
          groups: Array.isArray(groups) ? groups.filter(Predicate.isString) : []
        })
      })
    )
})

/** Signs a development token (HS256) for `sub`; used by the example server and tests. */
export const signHs256 = (
  secret: Redacted.Redacted<string>,
  claims: { readonly sub: string; readonly email?: string; readonly groups?: ReadonlyArray<string> },
  options: { readonly issuer?: string | undefined; readonly audience?: string | undefined; readonly expiresIn?: string } = {}
): Promise<string> => {
  let jwt = new jose.SignJWT({ ...(claims.email === undefined ? {} : { email: claims.email }), ...(claims.groups === undefined ? {} : { groups: [...claims.groups] }) })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "12h")
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer)
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience)
  return jwt.sign(new TextEncoder().encode(Redacted.value(secret)))
}
