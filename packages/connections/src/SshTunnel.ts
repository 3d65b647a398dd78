/**
 * The SSH proxy of a connection: local port forwarding through a bastion, set up
 * below the driver so that the driver connects to a local endpoint. It
 * authenticates with a public key only, pins the bastion's host key when one is
 * given (any listed key matches, a mismatch fails closed), and closes with its scope.
 */
import type { Connection, Errors } from "@modelgate/core"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { Buffer } from "node:buffer"
import * as Net from "node:net"
import ssh2 from "ssh2"
import type { ClientChannel, ConnectConfig } from "ssh2"
import { describeSocketError, errorMessage, failed, hostPort } from "./internal/Failure.ts"
import * as HostKeys from "./internal/HostKeys.ts"

/** A host and port a driver connects to. */
export interface Endpoint {
  readonly host: string
  readonly port: number
}

/** Options of a tunnel. */
export interface Options {
  /** How long the SSH session (TCP connect, handshake, authentication) may take. */
  readonly connectTimeoutMillis: number
}

/** An open tunnel: the local endpoint that forwards to the target through the bastion. */
export interface Tunnel extends Endpoint {
  readonly host: "127.0.0.1"
  /** Why the bastion last refused to open a forwarded channel (for example "Connection refused"), if it did. */
  readonly forwardFailure: () => string | undefined
}

type ParsedKey = Exclude<ReturnType<typeof ssh2.utils.parseKey>, Error>

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const readPrivateKey = (where: string, privateKey: string, passphrase: string | undefined) => {
  const parsed = ssh2.utils.parseKey(privateKey, present(passphrase) ? passphrase : undefined)
  // parseKey's messages are generic ("... no passphrase given"); they are replaced anyway so
  // that nothing derived from the key or passphrase can reach a message.
  if (parsed instanceof Error) {
    const encrypted = /passphrase|encrypt|decrypt/i.test(parsed.message)
    return Effect.fail(failed(
      "proxy",
      present(passphrase)
        ? `${where}: the private key cannot be read with the given passphrase (wrong passphrase, or not a private key)`
        : encrypted
        ? `${where}: the private key is encrypted and no passphrase was given`
        : `${where}: the private key is not a valid PEM or OpenSSH private key`
    ))
  }
  const key: ParsedKey = parsed
  return key.isPrivateKey()
    ? Effect.succeed(key)
    : Effect.fail(failed("proxy", `${where}: the private key setting holds a public key, not a private key`))
}

/**
 * An authenticated SSH session to the bastion, ended when the scope closes. Every
 * failure is a `proxy` step naming the bastion and what failed, never a secret.
 */
const session = Effect.fnUntraced(function*(config: Connection.SshProxyConfig, options: Options) {
  if (!present(config.host)) return yield* failed("proxy", "the SSH proxy has no bastion host")
  const host = config.host.trim()
  const where = `SSH proxy ${hostPort(host, config.port)}`
  if (!present(config.username)) return yield* failed("proxy", `${where}: no SSH username is set`)
  if (!present(config.privateKey)) {
    return yield* failed("proxy", `${where}: no private key is set (the proxy authenticates with a public key only)`)
  }
  const username = config.username.trim()
  // Read once here so that a bad key or passphrase is reported in words; ssh2 reads it again.
  yield* readPrivateKey(where, config.privateKey, config.privateKeyPass)

  const pins = present(config.hostKey) ? HostKeys.pins(config.hostKey) : undefined
  let mismatch: Buffer | undefined
  // Any listed key is accepted; only the blob is compared, never the host name.
  const hostVerifier = (presented: Buffer): boolean => {
    if (pins === undefined) return true
    const accepted = HostKeys.matches(pins, presented)
    if (!accepted) mismatch = Buffer.from(presented)
    return accepted
  }
  const algorithms = pins === undefined ? undefined : HostKeys.hostKeyAlgorithms(pins.accepted)
  const connectConfig: ConnectConfig = {
    host,
    port: config.port,
    username,
    privateKey: config.privateKey,
    ...(present(config.privateKeyPass) ? { passphrase: config.privateKeyPass } : {}),
    readyTimeout: options.connectTimeoutMillis,
    hostVerifier,
    ...(algorithms === undefined ? {} : { algorithms: { serverHostKey: algorithms } })
  }

  const classify = (error: unknown): Errors.ConnectionTestFailed => {
    if (mismatch !== undefined) {
      return failed(
        "proxy",
        `${where}: the bastion's host key (${HostKeys.blobKeyType(mismatch) ?? "unknown type"} ${
          HostKeys.fingerprint(mismatch)
        }) matches none of the pinned host keys; refusing to connect`
      )
    }
    const level = error instanceof Error && "level" in error ? error.level : undefined
    switch (level) {
      case "client-authentication":
        return failed("proxy", `${where}: the bastion rejected the public key of user "${username}"`)
      case "client-timeout":
        return failed("proxy", `${where}: no SSH session within ${options.connectTimeoutMillis} ms`)
      case "client-socket":
      case "client-dns":
        return failed("proxy", `${where} is unreachable: ${describeSocketError(error)}`)
      default: {
        const message = errorMessage(error)
        return failed("proxy", `${where}: SSH handshake failed${message === undefined ? "" : `: ${message}`}`)
      }
    }
  }

  const client = new ssh2.Client()
  // A late error (the bastion going away) must not be an unhandled 'error' event.
  client.on("error", () => {})
  yield* Effect.addFinalizer(() => Effect.sync(() => client.end()))
  yield* Effect.callback<void, Errors.ConnectionTestFailed>((resume) => {
    client.once("ready", () => resume(Effect.void))
    client.once("error", (error) => resume(Effect.fail(classify(error))))
    client.once("close", () => resume(Effect.fail(classify(new Error("the bastion closed the connection")))))
    try {
      client.connect(connectConfig)
    } catch (error) {
      resume(Effect.fail(classify(error)))
    }
    return Effect.sync(() => client.end())
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(options.connectTimeoutMillis),
      orElse: () => Effect.fail(failed("proxy", `${where}: no SSH session within ${options.connectTimeoutMillis} ms`))
    })
  )
  return { client, where }
})

// The bastion's reason for refusing a forwarded channel, without ssh2's prefix.
const openFailure = (error: Error): string => error.message.replace(/^\(SSH\) Channel open failure: /, "")

const forward = (client: ssh2.Client, target: Endpoint) =>
  Effect.callback<ClientChannel, string>((resume) => {
    client.forwardOut("127.0.0.1", 0, target.host, target.port, (error, channel) => {
      if (error !== undefined && error !== null) resume(Effect.fail(openFailure(error)))
      else resume(Effect.succeed(channel))
    })
  })

/**
 * Opens a tunnel to `target` through the bastion of `config`, yielding the local
 * endpoint (`127.0.0.1` and a free port) that a driver connects to. The session,
 * the local listener and every forwarded socket close when the scope closes.
 */
export const open = (
  config: Connection.SshProxyConfig,
  target: Endpoint,
  options: Options
): Effect.Effect<Tunnel, Errors.ConnectionTestFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, where } = yield* session(config, options)
    const sockets = new Set<Net.Socket>()
    let forwardFailure: string | undefined
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
      socket.pause()
      client.forwardOut("127.0.0.1", socket.remotePort ?? 0, target.host, target.port, (error, channel) => {
        if (error !== undefined && error !== null) {
          forwardFailure = openFailure(error)
          socket.destroy()
          return
        }
        channel.on("error", () => socket.destroy())
        channel.on("close", () => socket.end())
        socket.on("close", () => channel.close())
        socket.pipe(channel).pipe(socket)
        socket.resume()
      })
    })
    server.on("error", () => {})
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
    )
    const port = yield* Effect.callback<number, Errors.ConnectionTestFailed>((resume) => {
      server.once("error", (error) =>
        resume(Effect.fail(failed("proxy", `${where}: cannot open the local end of the tunnel: ${describeSocketError(error)}`))))
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(
          address !== null && typeof address === "object"
            ? Effect.succeed(address.port)
            : Effect.fail(failed("proxy", `${where}: cannot open the local end of the tunnel`))
        )
      })
    })
    const tunnel: Tunnel = { host: "127.0.0.1", port, forwardFailure: () => forwardFailure }
    return tunnel
  })

/**
 * Whether the bastion can open a TCP connection to `target`: opens the SSH session
 * and one forwarded channel, then closes both. A refusal is a `connect` failure
 * that names the target and the bastion's reason.
 */
export const reach = (
  config: Connection.SshProxyConfig,
  target: Endpoint,
  options: Options
): Effect.Effect<void, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    const { client, where } = yield* session(config, options)
    const channel = yield* forward(client, target).pipe(
      Effect.mapError((reason) =>
        failed("connect", `cannot reach ${hostPort(target.host, target.port)} through the ${where}: the bastion reported "${reason}"`)
      ),
      Effect.timeoutOrElse({
        duration: Duration.millis(options.connectTimeoutMillis),
        orElse: () =>
          Effect.fail(
            failed(
              "connect",
              `cannot reach ${hostPort(target.host, target.port)} through the ${where} within ${options.connectTimeoutMillis} ms`
            )
          )
      })
    )
    channel.close()
  }))
