/**
 * The SSH proxy against a real `sshd` bastion on loopback: host-key pinning in
 * every accepted form, a wrong pin failing closed, no pin, a rejected client key,
 * an encrypted key with its passphrase, and PostgreSQL sslmode through the tunnel.
 * Nothing here is skipped: without openssh-server the fixture fails and says so.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { Connection } from "@modelgate/core"
import { Effect, Layer } from "effect"
import { Buffer } from "node:buffer"
import { createHmac, randomBytes } from "node:crypto"
import * as Net from "node:net"
import * as SshTunnel from "../src/SshTunnel.ts"
import * as Testers from "../src/Testers.ts"
import * as Http from "node:http"
import { closedPort, mysqlDatabase, PasswordPostgres, postgresDatabase, Sshd } from "./Servers.ts"

const options = { connectTimeoutMillis: 5_000 }

type Bastion = Sshd["Service"]

const proxyOf = (sshd: Bastion, overrides: Partial<Connection.SshProxyConfig> = {}): Connection.ConnectionProxy => ({
  type: "ssh",
  ssh: { host: sshd.host, port: sshd.port, username: sshd.username, privateKey: sshd.clientKey, ...overrides }
})

// A known_hosts line with a hashed host name, as `ssh-keygen -H` writes it.
const hashedLine = (host: string, port: number, keyLine: string) => {
  const salt = randomBytes(20)
  const name = port === 22 ? host : `[${host}]:${port}`
  const hash = createHmac("sha1", salt).update(name).digest()
  return `|1|${salt.toString("base64")}|${hash.toString("base64")} ${keyLine}`
}

const blobOf = (keyLine: string) => keyLine.split(/\s+/)[1] ?? ""

describe("SshTunnel", () => {
  layer(Layer.mergeAll(Sshd.layer, PasswordPostgres.layer), { excludeTestServices: true })((it) => {
    const throughBastion = (proxy: Connection.ConnectionProxy, sslmode: Connection.SslMode = "disable") =>
      Effect.gen(function*() {
        const db = yield* postgresDatabase
        return yield* Testers.test(
          {
            name: "pg",
            type: "postgres",
            excludeAllTables: false,
            proxy,
            postgresConnection: {
              host: db.host,
              port: db.port,
              databaseName: db.database,
              userName: db.user,
              password: db.password,
              sslmode
            }
          },
          options
        )
      })

    it.effect("a pinned plain known_hosts line (with a marker-free host list) connects", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const report = yield* throughBastion(proxyOf(sshd, { hostKey: `bastion.example,127.0.0.1 ${sshd.hostKeyLine}` }))
        assert.match(report.serverVersion ?? "", /^PostgreSQL/)
      }))

    it.effect("a pinned hashed known_hosts line connects", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        yield* throughBastion(proxyOf(sshd, { hostKey: hashedLine(sshd.host, sshd.port, sshd.hostKeyLine) }))
      }))

    it.effect("a pinned bare base64 blob connects", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        yield* throughBastion(proxyOf(sshd, { hostKey: blobOf(sshd.hostKeyLine) }))
      }))

    it.effect("several pinned lines connect when any one is the bastion's key (host names are not compared)", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const hostKey = [
          "# rotated keys",
          `other.example ${sshd.otherHostKeyLine}`,
          "",
          `@cert-authority *.example ${sshd.otherHostKeyLine}`,
          `not-this-host.example ${sshd.hostKeyLine}`
        ].join("\n")
        yield* throughBastion(proxyOf(sshd, { hostKey }))
      }))

    it.effect("a wrong pinned key fails closed at proxy and shows the presented fingerprint", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const error = yield* Effect.flip(throughBastion(proxyOf(sshd, { hostKey: `127.0.0.1 ${sshd.otherHostKeyLine}` })))
        assert.strictEqual(error.step, "proxy")
        assert.include(error.message, `SSH proxy 127.0.0.1:${sshd.port}`)
        assert.include(error.message, "matches none of the pinned host keys")
        assert.match(error.message, /ssh-ed25519 SHA256:[A-Za-z0-9+/]+/)
      }))

    it.effect("a @revoked line never pins its key", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const hostKey = [`127.0.0.1 ${sshd.hostKeyLine}`, `@revoked * ${sshd.hostKeyLine}`].join("\n")
        const error = yield* Effect.flip(throughBastion(proxyOf(sshd, { hostKey })))
        assert.strictEqual(error.step, "proxy")
        assert.include(error.message, "matches none of the pinned host keys")
      }))

    it.effect("no pinned key connects without verification", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        yield* throughBastion(proxyOf(sshd))
      }))

    it.effect("a client key the bastion does not accept fails at proxy (auth rejected), without the key", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const error = yield* Effect.flip(throughBastion(proxyOf(sshd, { privateKey: sshd.strangerKey })))
        assert.strictEqual(error.step, "proxy")
        assert.include(error.message, `SSH proxy 127.0.0.1:${sshd.port}: the bastion rejected the public key of user "${sshd.username}"`)
        assert.notInclude(error.message, "PRIVATE KEY")
      }))

    it.effect("an encrypted private key connects with its passphrase", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        yield* throughBastion(proxyOf(sshd, { privateKey: sshd.encryptedClientKey, privateKeyPass: sshd.passphrase }))
      }))

    it.effect("an encrypted private key without or with a wrong passphrase fails at proxy, never echoing it", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const missing = yield* Effect.flip(throughBastion(proxyOf(sshd, { privateKey: sshd.encryptedClientKey })))
        assert.strictEqual(missing.step, "proxy")
        assert.include(missing.message, "encrypted and no passphrase was given")
        const wrong = yield* Effect.flip(
          throughBastion(proxyOf(sshd, { privateKey: sshd.encryptedClientKey, privateKeyPass: "wrong-phrase" }))
        )
        assert.strictEqual(wrong.step, "proxy")
        assert.include(wrong.message, "cannot be read with the given passphrase")
        assert.notInclude(wrong.message, "wrong-phrase")
      }))

    it.effect("an unreachable bastion fails at proxy", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const port = yield* closedPort
        const error = yield* Effect.flip(throughBastion(proxyOf(sshd, { port })))
        assert.strictEqual(error.step, "proxy")
        assert.include(error.message, `SSH proxy 127.0.0.1:${port} is unreachable: connection refused`)
      }))

    it.effect("a target the bastion cannot reach fails at connect with the bastion's reason", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const port = yield* closedPort
        const error = yield* Effect.flip(Testers.test(
          {
            name: "pg",
            type: "postgres",
            excludeAllTables: false,
            proxy: proxyOf(sshd),
            postgresConnection: { host: "127.0.0.1", port, userName: "postgres", sslmode: "disable" }
          },
          options
        ))
        assert.strictEqual(error.step, "connect")
        assert.include(error.message, `cannot reach 127.0.0.1:${port} through the SSH proxy`)
      }))

    it.effect("the tunnel forwards a local port to the target and closes with its scope", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const proxy = proxyOf(sshd).ssh
        assert.isDefined(proxy)
        if (proxy === undefined) return
        const tunnelPort = yield* Effect.scoped(Effect.gen(function*() {
          const tunnel = yield* SshTunnel.open(proxy, { host: "127.0.0.1", port: 5432 }, options)
          assert.strictEqual(tunnel.host, "127.0.0.1")
          // PostgreSQL answers an SSLRequest with one byte ("N": no TLS here) through the tunnel.
          const answer = yield* Effect.callback<string>((resume) => {
            const socket = Net.connect({ host: tunnel.host, port: tunnel.port })
            socket.once("data", (data) => {
              socket.destroy()
              resume(Effect.succeed(data.toString("latin1")))
            })
            socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]))
          })
          assert.strictEqual(answer, "N")
          return tunnel.port
        }))
        const refused = yield* Effect.callback<string>((resume) => {
          const socket = Net.connect({ host: "127.0.0.1", port: tunnelPort })
          socket.once("connect", () => {
            socket.destroy()
            resume(Effect.succeed("connected"))
          })
          socket.once("error", (error) => resume(Effect.succeed("code" in error ? String(error.code) : "error")))
        })
        assert.strictEqual(refused, "ECONNREFUSED")
      }))

    it.effect("MySQL and Publisher connect through the tunnel too", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const db = yield* mysqlDatabase
        const report = yield* Testers.test(
          {
            name: "my",
            type: "mysql",
            excludeAllTables: false,
            proxy: proxyOf(sshd, { hostKey: sshd.hostKeyLine }),
            mysqlConnection: { host: db.host, port: db.port, database: db.database, user: db.user, password: db.password }
          },
          options
        )
        assert.match(report.serverVersion ?? "", /^\d+\.\d+/)

        const seen: Array<string> = []
        const server = yield* Effect.acquireRelease(
          Effect.callback<Http.Server>((resume) => {
            const server = Http.createServer((request, response) => {
              seen.push(`${request.headers.host} ${request.headers.authorization}`)
              response.statusCode = request.headers.authorization === "Bearer t0k" ? 200 : 401
              response.end("{}")
            })
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) =>
            Effect.callback<void>((resume) => {
              server.close(() => resume(Effect.void))
            })
        )
        const address = server.address()
        const port = address !== null && typeof address === "object" ? address.port : 0
        yield* Testers.test(
          {
            name: "pub",
            type: "publisher",
            excludeAllTables: false,
            proxy: proxyOf(sshd),
            publisherConnection: { connectionUri: `http://127.0.0.1:${port}/api/v0/environments/e/connections/c`, accessToken: "t0k" }
          },
          options
        )
        // The remote saw its own host name, not the tunnel's local end.
        assert.deepStrictEqual(seen, [`127.0.0.1:${port} Bearer t0k`])
      }))

    it.effect("sslmode through the tunnel: no-verify encrypts, verify-ca rejects a self-signed chain, disable is plain", () =>
      Effect.gen(function*() {
        const sshd = yield* Sshd
        const server = yield* PasswordPostgres
        const settings = (sslmode: Connection.SslMode, user: string, password: string): Connection.ConnectionSettings => ({
          name: "pg",
          type: "postgres",
          excludeAllTables: false,
          proxy: proxyOf(sshd),
          postgresConnection: { host: server.host, port: server.port, databaseName: "postgres", userName: user, password, sslmode }
        })
        // The TLS-only role proves that no-verify really used TLS.
        yield* Testers.test(settings("no-verify", server.tlsOnlyUser, server.tlsOnlyPassword), options)
        const unverified = yield* Effect.flip(Testers.test(settings("verify-ca", server.tlsOnlyUser, server.tlsOnlyPassword), options))
        assert.strictEqual(unverified.step, "connect")
        assert.include(unverified.message, "TLS verification")
        const plain = yield* Effect.flip(Testers.test(settings("disable", server.tlsOnlyUser, server.tlsOnlyPassword), options))
        assert.strictEqual(plain.step, "authenticate")
        yield* Testers.test(settings("disable", server.user, server.password), options)
      }))
  })
})
