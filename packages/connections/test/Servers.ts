/**
 * Real servers for the connection tests, each a scoped fixture: a fresh database
 * and password role on the machine's PostgreSQL and MariaDB, a private PostgreSQL
 * cluster with password authentication and TLS (the machine's server trusts
 * 127.0.0.1, so a wrong password cannot fail there), and an `sshd` bastion.
 * Everything listens on loopback only and is removed when its scope closes.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Random } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { access } from "node:fs/promises"
import mysql from "mysql2/promise"
import * as Net from "node:net"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"

/** The machine's PostgreSQL server (trust authentication for 127.0.0.1). */
export const sharedPostgres = { host: "127.0.0.1", port: 5432 } as const
/** The machine's MariaDB server (root without a password). */
export const sharedMysql = { host: "127.0.0.1", port: 3306 } as const

/** Runs a program and yields its stdout; a failure is a defect that quotes its stderr. */
export const exec = (file: string, args: ReadonlyArray<string>, options: { readonly uid?: number; readonly gid?: number } = {}) =>
  Effect.callback<string>((resume) => {
    execFile(file, [...args], { ...options, env: { ...process.env, LC_ALL: "C" } }, (error, stdout, stderr) => {
      resume(error === null ? Effect.succeed(stdout) : Effect.die(new Error(`${file} ${args.join(" ")} failed: ${stderr || error.message}`)))
    })
  })

/** A loopback port that was free a moment ago (listen on 0, then close). */
export const freePort = Effect.callback<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = address !== null && typeof address === "object" ? address.port : 0
    server.close(() => resume(port === 0 ? Effect.die(new Error("no free port")) : Effect.succeed(port)))
  })
})

/** A temporary directory, removed when the scope closes. */
export const tempDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), prefix))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const suffix = Effect.map(Random.nextIntBetween(0, 1_000_000_000), (n) => n.toString(36))

/** Starts a process in the scope and waits until a line of its output matches `ready`; it is stopped on release. */
export const startProcess = (
  file: string,
  args: ReadonlyArray<string>,
  ready: RegExp,
  options: { readonly uid?: number; readonly gid?: number } = {}
): Effect.Effect<ChildProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess>((resume) => {
      const child = spawn(file, [...args], { ...options, stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        if (ready.test(output)) resume(Effect.succeed(child))
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      child.once("error", (error) => resume(Effect.die(new Error(`${file} could not start: ${error.message}`))))
      child.once("exit", (code) => resume(Effect.die(new Error(`${file} exited with ${code} before it was ready:\n${output}`))))
    }).pipe(
      Effect.timeoutOrElse({
        duration: "30 seconds",
        orElse: () => Effect.die(new Error(`${file} did not report readiness within 30 seconds`))
      })
    ),
    (child) =>
      Effect.callback<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGINT")
      })
  )

const adminPostgres = (statement: string, config: PgClient.PgPoolConfig) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql.unsafe(statement)
  }).pipe(Effect.provide(PgClient.layer({ maxConnections: 1, ...config })), Effect.orDie)

const sharedAdmin = { host: sharedPostgres.host, port: sharedPostgres.port, username: "postgres", database: "postgres", ssl: false }

/** A PostgreSQL database of its own and a login role with a password. */
export interface PostgresDatabase {
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string
  readonly password: string
}

/** A fresh database and password role on the machine's PostgreSQL, dropped on release. */
export const postgresDatabase: Effect.Effect<PostgresDatabase, never, Scope.Scope> = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `mg_conn_${yield* suffix}`
    const password = `pw-${yield* suffix}`
    yield* adminPostgres(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`, sharedAdmin)
    yield* adminPostgres(`CREATE DATABASE ${name} OWNER ${name}`, sharedAdmin)
    return { ...sharedPostgres, database: name, user: name, password }
  }),
  (db) =>
    Effect.andThen(
      adminPostgres(`DROP DATABASE IF EXISTS ${db.database} WITH (FORCE)`, sharedAdmin),
      adminPostgres(`DROP ROLE IF EXISTS ${db.user}`, sharedAdmin)
    )
)

/** A MariaDB database of its own and a user with a password. */
export interface MysqlDatabase {
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string
  readonly password: string
}

const adminMysql = (statements: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const connection = await mysql.createConnection({ host: sharedMysql.host, port: sharedMysql.port, user: "root" })
    try {
      for (const statement of statements) await connection.query(statement)
    } finally {
      await connection.end()
    }
  })

/** A fresh database and password user on the machine's MariaDB, dropped on release. */
export const mysqlDatabase: Effect.Effect<MysqlDatabase, never, Scope.Scope> = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `mg_conn_${yield* suffix}`
    const password = `pw-${yield* suffix}`
    yield* adminMysql([
      `CREATE DATABASE ${name}`,
      `CREATE USER '${name}'@'127.0.0.1' IDENTIFIED BY '${password}'`,
      `GRANT ALL ON ${name}.* TO '${name}'@'127.0.0.1'`
    ])
    return { ...sharedMysql, database: name, user: name, password }
  }),
  (db) => adminMysql([`DROP USER IF EXISTS '${db.user}'@'127.0.0.1'`, `DROP DATABASE IF EXISTS ${db.database}`])
)

const idOf = (flag: "-u" | "-g", user: string) => Effect.map(exec("id", [flag, user]), (out) => Number(out.trim()))

/**
 * A private PostgreSQL cluster with scram-sha-256 password authentication and TLS
 * (a self-signed certificate). `tlsOnlyUser` may log in over TLS only.
 */
export class PasswordPostgres extends Context.Service<PasswordPostgres, {
  readonly host: "127.0.0.1"
  readonly port: number
  readonly user: string
  readonly password: string
  readonly tlsOnlyUser: string
  readonly tlsOnlyPassword: string
}>()("test/PasswordPostgres") {
  static readonly layer = Layer.effect(
    PasswordPostgres,
    Effect.gen(function*() {
      const bindir = (yield* exec("pg_config", ["--bindir"]).pipe(
        Effect.catchDefect(() =>
          Effect.die(new Error("pg_config not found: install the PostgreSQL server packages (postgresql) to run these tests"))
        )
      )).trim()
      const uid = yield* idOf("-u", "postgres")
      const gid = yield* idOf("-g", "postgres")
      const dir = yield* tempDir("mg-pg-")
      const data = join(dir, "data")
      yield* Effect.promise(() => chown(dir, uid, gid))
      yield* exec("openssl", [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
        "-keyout", join(dir, "server.key"), "-out", join(dir, "server.crt")
      ])
      yield* Effect.promise(async () => {
        await chown(join(dir, "server.key"), uid, gid)
        await chown(join(dir, "server.crt"), uid, gid)
        await chmod(join(dir, "server.key"), 0o600)
      })
      yield* exec(join(bindir, "initdb"), ["-D", data, "-U", "postgres", "-E", "UTF8", "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"], { uid, gid })
      yield* Effect.promise(() =>
        writeFile(
          join(data, "pg_hba.conf"),
          [
            "local all all trust",
            "hostssl all tls_only 127.0.0.1/32 scram-sha-256",
            "hostnossl all tls_only 127.0.0.1/32 reject",
            "host all all 127.0.0.1/32 scram-sha-256",
            ""
          ].join("\n")
        )
      )
      const port = yield* freePort
      yield* startProcess(join(bindir, "postgres"), [
        "-D", data, "-p", String(port), "-k", dir,
        "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
        "-c", "ssl=on", "-c", `ssl_cert_file=${join(dir, "server.crt")}`, "-c", `ssl_key_file=${join(dir, "server.key")}`
      ], /ready to accept connections/, { uid, gid })
      const admin = { path: join(dir, `.s.PGSQL.${port}`), username: "postgres", database: "postgres", ssl: false }
      const password = `pw-${yield* suffix}`
      const tlsOnlyPassword = `tls-${yield* suffix}`
      yield* adminPostgres(`CREATE ROLE mg_password LOGIN PASSWORD '${password}'`, admin)
      yield* adminPostgres(`CREATE ROLE tls_only LOGIN PASSWORD '${tlsOnlyPassword}'`, admin)
      return PasswordPostgres.of({ host: "127.0.0.1", port, user: "mg_password", password, tlsOnlyUser: "tls_only", tlsOnlyPassword })
    })
  )
}

/** An sshd bastion on loopback, with its host key and the client keys it does and does not accept. */
export class Sshd extends Context.Service<Sshd, {
  readonly host: "127.0.0.1"
  readonly port: number
  readonly username: string
  /** The host key as a known_hosts line body: `ssh-ed25519 AAAA... comment`. */
  readonly hostKeyLine: string
  /** Another host key (not the bastion's), in the same form. */
  readonly otherHostKeyLine: string
  /** An accepted client key, unencrypted (OpenSSH format). */
  readonly clientKey: string
  /** An accepted client key encrypted with `passphrase`. */
  readonly encryptedClientKey: string
  readonly passphrase: string
  /** A valid private key that the bastion does not accept. */
  readonly strangerKey: string
}>()("test/Sshd") {
  static readonly layer = Layer.effect(
    Sshd,
    Effect.gen(function*() {
      const sshd = "/usr/sbin/sshd"
      yield* Effect.tryPromise(() => access(sshd)).pipe(
        Effect.catch(() =>
          Effect.die(new Error(`${sshd} not found: install openssh-server (apt-get install openssh-server) to run the SSH proxy tests`))
        )
      )
      // The privilege-separation directory sshd insists on.
      yield* Effect.promise(() => mkdir("/run/sshd", { recursive: true, mode: 0o755 }))
      const dir = yield* tempDir("mg-sshd-")
      const keygen = (name: string, passphrase: string) =>
        exec("ssh-keygen", ["-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", join(dir, name)])
      const passphrase = `phrase-${yield* suffix}`
      yield* keygen("host", "")
      yield* keygen("other_host", "")
      yield* keygen("client", "")
      yield* keygen("client_encrypted", passphrase)
      yield* keygen("stranger", "")
      const read = (name: string) => Effect.promise(() => readFile(join(dir, name), "utf8"))
      yield* Effect.promise(async () =>
        writeFile(
          join(dir, "authorized_keys"),
          (await readFile(join(dir, "client.pub"), "utf8")) + (await readFile(join(dir, "client_encrypted.pub"), "utf8"))
        )
      )
      const port = yield* freePort
      const config = join(dir, "sshd_config")
      yield* Effect.promise(() =>
        writeFile(
          config,
          [
            `Port ${port}`,
            "ListenAddress 127.0.0.1",
            `HostKey ${join(dir, "host")}`,
            `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "AllowTcpForwarding yes",
            "UsePAM no",
            "StrictModes no",
            `PidFile ${join(dir, "sshd.pid")}`,
            "LogLevel INFO",
            ""
          ].join("\n")
        )
      )
      yield* exec(sshd, ["-t", "-f", config])
      yield* startProcess(sshd, ["-D", "-e", "-f", config], /Server listening on 127\.0\.0\.1 port/)
      return Sshd.of({
        host: "127.0.0.1",
        port,
        username: userInfo().username,
        hostKeyLine: (yield* read("host.pub")).trim(),
        otherHostKeyLine: (yield* read("other_host.pub")).trim(),
        clientKey: yield* read("client"),
        encryptedClientKey: yield* read("client_encrypted"),
        passphrase,
        strangerKey: yield* read("stranger")
      })
    })
  )
}

/** A TCP port on loopback where nothing listens. */
export const closedPort = freePort
