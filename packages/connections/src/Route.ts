/**
 * How a connection test reaches its targets: directly, or through the
 * connection's SSH proxy, which sits below every driver. A tester asks its route
 * for the endpoint of a target (the target itself, or a tunnel's local end) and
 * never opens sockets to the bastion itself; the route also holds the deployment
 * options that every tester shares.
 */
import type { Connection, Errors } from "@modelgate/core"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import * as Net from "node:net"
import { describeSocketError, failed, hostPort } from "./internal/Failure.ts"
import * as SshTunnel from "./SshTunnel.ts"

/**
 * TLS of a direct PostgreSQL connection, a deployment setting (the spec rejects
 * `sslmode` on a direct connection). `allow`: plaintext, and TLS without
 * verification only when the server refuses the plaintext session; `require`:
 * always TLS, unverified; `verify-full`: TLS verified against the system CAs and
 * the host name; `disable`: never TLS.
 */
export type PostgresTls = "disable" | "allow" | "require" | "verify-full"

/** The TLS modes of a direct PostgreSQL connection, for configuration. */
export const postgresTlsModes: ReadonlyArray<PostgresTls> = ["disable", "allow", "require", "verify-full"]

/** Deployment options of the connection testers. */
export interface Options {
  /** The bound of every wait: SSH session, TCP connect, TLS and authentication, HTTP answer. */
  readonly connectTimeoutMillis: number
  /** TLS of direct PostgreSQL connections; `allow` when omitted. */
  readonly postgresTls?: PostgresTls | undefined
  /**
   * Name resolution for direct reachability probes (cloud endpoints). Node's
   * resolver when omitted; tests pass one that keeps every probe on loopback.
   */
  readonly lookup?: Net.LookupFunction | undefined
}

/** The endpoint a driver connects to, and why the bastion refused to forward, if it did. */
export interface Hop extends SshTunnel.Endpoint {
  readonly forwardFailure: () => string | undefined
}

/** How one connection test reaches its targets. */
export interface Route {
  readonly options: Options
  /** The bastion when the connection is proxied. */
  readonly proxy: Connection.SshProxyConfig | undefined
  /** The endpoint a driver connects to for `target`: the target, or a tunnel open until the scope closes. */
  readonly endpoint: (target: SshTunnel.Endpoint) => Effect.Effect<Hop, Errors.ConnectionTestFailed, Scope.Scope>
  /** Succeeds when `target` accepts a TCP connection (from the bastion, when proxied). */
  readonly reach: (target: SshTunnel.Endpoint) => Effect.Effect<void, Errors.ConnectionTestFailed>
}

/** A TCP connection to `target` from this host, closed at once; bounded by the connect timeout. */
export const probe = (target: SshTunnel.Endpoint, options: Options): Effect.Effect<void, Errors.ConnectionTestFailed> =>
  Effect.callback<void, Errors.ConnectionTestFailed>((resume) => {
    const socket = Net.connect({
      host: target.host,
      port: target.port,
      ...(options.lookup === undefined ? {} : { lookup: options.lookup })
    })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.void)
    })
    socket.once("error", (error) => {
      socket.destroy()
      resume(Effect.fail(failed("connect", `cannot reach ${hostPort(target.host, target.port)}: ${describeSocketError(error)}`)))
    })
    return Effect.sync(() => socket.destroy())
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(options.connectTimeoutMillis),
      orElse: () =>
        Effect.fail(
          failed("connect", `cannot reach ${hostPort(target.host, target.port)} within ${options.connectTimeoutMillis} ms`)
        )
    })
  )

/** The route of a connection: through its SSH proxy when it has one, direct otherwise. */
export const make = (
  options: Options,
  proxy: Connection.ConnectionProxy | undefined
): Effect.Effect<Route, Errors.ConnectionTestFailed> => {
  if (proxy === undefined) {
    return Effect.succeed({
      options,
      proxy: undefined,
      endpoint: (target) => Effect.succeed({ ...target, forwardFailure: () => undefined }),
      reach: (target) => probe(target, options)
    })
  }
  const ssh = proxy.ssh
  if (ssh === undefined) return Effect.fail(failed("proxy", "the proxy of type ssh has no ssh settings"))
  return Effect.succeed({
    options,
    proxy: ssh,
    endpoint: (target) => SshTunnel.open(ssh, target, options),
    reach: (target) => SshTunnel.reach(ssh, target, options)
  })
}
