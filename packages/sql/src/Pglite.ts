/**
 * The embedded storage engine: PostgreSQL compiled to WASM (PGlite), in this process, served to
 * `@effect/sql-pg` over in-process wire-protocol sessions, so repositories run the same SQL here as
 * on a PostgreSQL server. PGlite has one backend session, so the pooled sessions take turns: a
 * session owns the backend from its first message until a `Sync` or simple `Query` leaves it
 * outside a transaction block, and a transaction is never interleaved with another session's work.
 */
import { PGlite } from "@electric-sql/pglite"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Predicate } from "effect"
import type { Layer, Scope } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { Buffer } from "node:buffer"
import { randomBytes } from "node:crypto"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Duplex } from "node:stream"

/** Options of the embedded PGlite layer. */
export interface Options {
  /** Directory of a persistent database, created if missing; in memory when omitted. */
  readonly dataDir?: string | undefined
  /** Pooled sessions; they share one backend, so more only admits more open transactions. Defaults to 4. */
  readonly maxConnections?: number | undefined
}

/**
 * A `PgClient` (and `SqlClient`) backed by an embedded PGlite: in memory when `dataDir` is omitted,
 * on that directory otherwise. The database is created in the layer's scope and closed on release.
 */
export const layer = (options: Options = {}): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  PgClient.layerFrom(Effect.gen(function*() {
    const pglite = yield* makePglite(options)
    const stream = yield* makeStream(pglite)
    return yield* PgClient.make({
      stream,
      maxConnections: options.maxConnections ?? 4,
      // A package's data file is one bytea row: accept what PostgreSQL accepts (1 GB a field).
      maxMessageSize: 1024 * 1024 * 1024,
      username: "postgres",
      database: "postgres",
      // Named statements are safe on the shared backend: sql-pg names them
      // `effect_<random per connection>_<n>`, and a session closes its names when it ends.
      prepare: true
    })
  }))

/**
 * Opens a PGlite database in the current scope and closes it when the scope closes.
 *
 * Durability is kept strict: `relaxedDurability` is off (every protocol call waits for the file
 * system sync) and `synchronous_commit` is on, so a `COMMIT` is acknowledged only after its WAL
 * record was written to the data directory.
 */
export const makePglite = (options: Pick<Options, "dataDir"> = {}): Effect.Effect<PGlite, SqlError, Scope.Scope> =>
  Effect.andThen(
    options.dataDir === undefined ? Effect.void : lockDataDir(resolve(options.dataDir)),
    openPglite(options)
  )

/**
 * Takes the data directory for this process: PGlite itself does not stop a second
 * process from opening the same directory, which would corrupt it. A lock file names
 * the owning process; a lock left by a process that no longer runs (a crash) is taken over.
 */
const lockDataDir = (dataDir: string): Effect.Effect<void, SqlError, Scope.Scope> => {
  const lockPath = join(dataDir, ".modelgate.lock")
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return Predicate.hasProperty(error, "code") && error.code === "EPERM"
    }
  }
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await mkdir(dataDir, { recursive: true })
        try {
          await writeFile(lockPath, String(process.pid), { flag: "wx" })
          return
        } catch (error) {
          if (!(Predicate.hasProperty(error, "code") && error.code === "EEXIST")) throw error
        }
        const owner = Number((await readFile(lockPath, "utf8")).trim())
        if (Number.isInteger(owner) && alive(owner)) {
          throw new Error(`The data directory ${dataDir} is in use by process ${owner}; stop it, or remove ${lockPath} if that process is not modelgate`)
        }
        await writeFile(lockPath, String(process.pid))
      },
      catch: (cause) => connectionError(cause, `PGlite: ${cause instanceof Error ? cause.message : "cannot lock the data directory"}`, "connect")
    }),
    () => Effect.promise(() => rm(lockPath, { force: true }))
  )
}

const openPglite = (options: Pick<Options, "dataDir">): Effect.Effect<PGlite, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir)
        if (dataDir !== undefined) await mkdir(dataDir, { recursive: true })
        return await PGlite.create({
          // `file://` keeps a path such as "memory://x" from selecting another file system.
          ...(dataDir === undefined ? {} : { dataDir: `file://${dataDir}` }),
          relaxedDurability: false,
          startParams: [...PGlite.defaultStartParams, "-c", "synchronous_commit=on"]
        })
      },
      catch: (cause) => connectionError(cause, "PGlite: Failed to open the database", "connect")
    }),
    (pglite) => Effect.promise(() => pglite.close().catch(() => undefined))
  )

/**
 * A `PgClient` `stream` factory over one PGlite instance: each call opens a new session.
 *
 * Create it once per PGlite instance (the sessions' turn-taking lives in it) and do not use the
 * instance's own query API while sessions are open. Closing the scope ends every session, after
 * rolling back any transaction one left open.
 */
export const makeStream = (pglite: PGlite): Effect.Effect<() => Duplex, SqlError, Scope.Scope> =>
  Effect.gen(function*() {
    const parameters = yield* Effect.tryPromise({
      try: () =>
        pglite.query<{ readonly name: string; readonly setting: string }>(
          "select name, setting from pg_settings where name = any($1)",
          [reportedParameters]
        ),
      catch: (cause) => connectionError(cause, "PGlite: Failed to read server parameters", "connect")
    })
    const backend = new Backend(pglite, startupReply(parameters.rows))
    yield* Effect.addFinalizer(() => Effect.promise(() => backend.shutdown()))
    return () => backend.connect()
  })

const connectionError = (cause: unknown, message: string, operation: string) =>
  new SqlError({ reason: new ConnectionError({ cause, message, operation }) })

/** The `ParameterStatus` values a session reports at startup, read from the backend once. */
const reportedParameters = [
  "server_version",
  "server_encoding",
  "client_encoding",
  "DateStyle",
  "IntervalStyle",
  "integer_datetimes",
  "standard_conforming_strings",
  "TimeZone"
]

// Protocol constants (PostgreSQL frontend/backend protocol 3.0).
const PROTOCOL_3_0 = 196608
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const MAX_STARTUP_PACKET = 10_000
const char = (c: string) => c.charCodeAt(0)
const TYPE_QUERY = char("Q")
const TYPE_SYNC = char("S")
const TYPE_FLUSH = char("H")
const TYPE_TERMINATE = char("X")
const TYPE_PARSE = char("P")
const TYPE_CLOSE = char("C")
const TYPE_COPY_DONE = char("c")
const TYPE_COPY_FAIL = char("f")
const TYPE_READY_FOR_QUERY = char("Z")

/** A backend message: type byte, then int32 length covering itself and the body. */
const message = (type: string, body: Buffer): Buffer => {
  const header = Buffer.alloc(5)
  header.write(type, 0, "latin1")
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}
const cstring = (value: string) => Buffer.from(`${value}\0`, "utf8")
const int32 = (...values: ReadonlyArray<number>) => {
  const buffer = Buffer.alloc(values.length * 4)
  values.forEach((value, index) => buffer.writeInt32BE(value, index * 4))
  return buffer
}

const startupReply = (settings: ReadonlyArray<{ readonly name: string; readonly setting: string }>) =>
  Buffer.concat([
    message("R", int32(0)), // AuthenticationOk
    ...settings.map(({ name, setting }) => message("S", Buffer.concat([cstring(name), cstring(setting)])))
  ])

const readyForQuery = (status: "I" | "T" | "E") => message("Z", Buffer.from(status, "latin1"))

const errorResponse = (severity: string, code: string, text: string) =>
  message(
    "E",
    Buffer.concat([
      cstring(`S${severity}`),
      cstring(`V${severity}`),
      cstring(`C${code}`),
      cstring(`M${text}`),
      Buffer.from([0])
    ])
  )

const frontend = (type: string, body: Buffer) => message(type, body)
const syncMessage = frontend("S", Buffer.alloc(0))
const rollbackMessage = frontend("Q", cstring("ROLLBACK"))
const closeStatement = (name: string) => frontend("C", Buffer.concat([Buffer.from("S", "latin1"), cstring(name)]))

/**
 * The status of the last `ReadyForQuery` in a backend reply, or `undefined` when the reply has
 * none (the session is in the middle of an extended-protocol cycle or a COPY).
 */
const lastReadyStatus = (reply: Uint8Array): "I" | "T" | "E" | undefined => {
  const view = Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength)
  let status: "I" | "T" | "E" | undefined
  let offset = 0
  while (offset + 5 <= view.length) {
    const length = view.readInt32BE(offset + 1)
    if (length < 4) break
    if (view.readUInt8(offset) === TYPE_READY_FOR_QUERY && offset + 6 <= view.length) {
      const byte = String.fromCharCode(view.readUInt8(offset + 5))
      if (byte === "I" || byte === "T" || byte === "E") status = byte
    }
    offset += 1 + length
  }
  return status
}

/** Reads the NUL-terminated string at `offset`. */
const readCString = (buffer: Buffer, offset: number) => {
  const end = buffer.indexOf(0, offset)
  return buffer.toString("utf8", offset, end < 0 ? buffer.length : end)
}

type Grant = "granted" | "cancelled" | "closed"

interface Waiter {
  readonly session: Session
  /** A closing session's last turn (its rollback); cancel and close do not withdraw it. */
  readonly final: boolean
  readonly resume: (grant: Grant) => void
}

/** The shared PGlite backend and the turn-taking between its sessions. */
class Backend {
  private owner: Session | undefined
  private readonly waiters: Array<Waiter> = []
  private readonly sessions = new Map<number, Session>()
  private nextProcessId = 1
  private closing = false
  private readonly pglite: PGlite
  /** The startup reply every session sends: AuthenticationOk and the ParameterStatus messages. */
  readonly startup: Buffer

  constructor(pglite: PGlite, startup: Buffer) {
    this.pglite = pglite
    this.startup = startup
  }

  connect(): Duplex {
    const session = new Session(this, this.nextProcessId++, randomBytes(4).readInt32BE(0))
    if (this.closing) {
      session.duplex.destroy(new Error("PGlite is shutting down"))
      return session.duplex
    }
    this.sessions.set(session.processId, session)
    return session.duplex
  }

  forget(session: Session) {
    if (this.sessions.get(session.processId) === session) this.sessions.delete(session.processId)
  }

  /** Waits for exclusive use of the backend; `cancelled` / `closed` when the wait was withdrawn. */
  acquire(session: Session, final = false): Promise<Grant> {
    if (this.owner === undefined || this.owner === session) {
      this.owner = session
      return Promise.resolve("granted")
    }
    return new Promise((resume) => this.waiters.push({ session, final, resume }))
  }

  release(session: Session) {
    if (this.owner !== session) return
    const next = this.waiters.shift()
    this.owner = next?.session
    next?.resume("granted")
  }

  /** Takes a session out of the queue; reports whether it was waiting. */
  withdraw(session: Session, grant: Exclude<Grant, "granted">): boolean {
    const index = this.waiters.findIndex((waiter) => waiter.session === session && !waiter.final)
    if (index < 0) return false
    const [waiter] = this.waiters.splice(index, 1)
    waiter?.resume(grant)
    return true
  }

  /**
   * A `CancelRequest`. Statements run synchronously inside PGlite, so only a statement still waiting
   * for its turn can be cancelled.
   */
  cancel(processId: number, secret: number) {
    const session = this.sessions.get(processId)
    if (session !== undefined && session.secret === secret) this.withdraw(session, "cancelled")
  }

  /** Runs raw frontend messages; the caller owns the backend. */
  exec(session: Session, bytes: Buffer): Promise<Uint8Array> {
    if (this.owner !== session) return Promise.reject(new Error("PGlite session does not own the backend"))
    return this.pglite.execProtocolRaw(bytes, { syncToFs: true })
  }

  /** Ends every session (rolling back what they left open) and waits until they are done. */
  async shutdown() {
    this.closing = true
    const sessions = Array.from(this.sessions.values())
    for (const session of sessions) session.duplex.destroy()
    await Promise.all(sessions.map((session) => session.finished))
  }
}

/** One client connection: frames its byte stream and runs complete cycles when it has the backend. */
class Session {
  readonly duplex: Duplex
  readonly finished: Promise<void>
  private markFinished!: () => void
  private phase: "startup" | "ready" = "startup"
  private inbox: Buffer = Buffer.alloc(0)
  /** Messages of the cycle being received; moved to `cycles` at Sync, Query, Flush or CopyDone/Fail. */
  private current: Array<Buffer> = []
  /** Complete cycles waiting to run, each one concatenated message run. */
  private cycles: Array<{ readonly bytes: Buffer; readonly synced: boolean }> = []
  /** Named statements this session has parsed and not closed, to close when it ends. */
  private readonly statements = new Set<string>()
  /** Whether this session owns the backend (inside a transaction block or an unfinished cycle). */
  private holding = false
  private closing: "no" | "graceful" | "abrupt" = "no"
  private driving = false
  private done = false
  private readonly backend: Backend
  readonly processId: number
  readonly secret: number

  constructor(backend: Backend, processId: number, secret: number) {
    this.backend = backend
    this.processId = processId
    this.secret = secret
    this.finished = new Promise((resolve) => {
      this.markFinished = resolve
    })
    this.duplex = new Duplex({
      read: () => {},
      write: (chunk: Buffer, _encoding, callback) => {
        try {
          this.receive(chunk)
          callback()
        } catch (error) {
          callback(error instanceof Error ? error : new Error(String(error)))
        }
      },
      final: (callback) => {
        this.close("graceful")
        callback()
      },
      destroy: (error, callback) => {
        this.close("abrupt")
        callback(error)
      }
    })
  }

  private send(bytes: Uint8Array) {
    if (!this.duplex.destroyed && bytes.byteLength > 0) this.duplex.push(bytes)
  }

  private receive(chunk: Buffer) {
    if (this.closing !== "no") return
    this.inbox = this.inbox.length === 0 ? chunk : Buffer.concat([this.inbox, chunk])
    while (this.closing === "no") {
      if (this.phase === "startup") {
        if (this.inbox.length < 8) break
        const length = this.inbox.readInt32BE(0)
        if (length < 8 || length > MAX_STARTUP_PACKET) return this.fail("08P01", "invalid startup packet length")
        if (this.inbox.length < length) break
        const packet = this.inbox.subarray(0, length)
        this.inbox = this.inbox.subarray(length)
        const code = packet.readInt32BE(4)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.send(Buffer.from("N", "latin1"))
        } else if (code === CANCEL_REQUEST && length === 16) {
          this.backend.cancel(packet.readInt32BE(8), packet.readInt32BE(12))
          this.close("graceful")
        } else if (code === PROTOCOL_3_0) {
          // Startup parameters (application_name and the like) are not applied: every session
          // shares the one backend, whose settings a session must not change for the others.
          this.phase = "ready"
          this.send(Buffer.concat([
            this.backend.startup,
            message("K", int32(this.processId, this.secret)),
            readyForQuery("I")
          ]))
        } else {
          return this.fail("0A000", `unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`)
        }
        continue
      }
      if (this.inbox.length < 5) break
      const length = this.inbox.readInt32BE(1)
      if (length < 4) return this.fail("08P01", "invalid message length")
      if (this.inbox.length < length + 1) break
      // Copied: the writer may reuse its buffer once the write callback ran.
      const frame = Buffer.from(this.inbox.subarray(0, length + 1))
      this.inbox = this.inbox.subarray(length + 1)
      const type = frame.readUInt8(0)
      if (type === TYPE_TERMINATE) {
        this.close("graceful")
        break
      }
      this.track(type, frame)
      this.current.push(frame)
      if (
        type === TYPE_SYNC || type === TYPE_QUERY || type === TYPE_FLUSH || type === TYPE_COPY_DONE ||
        type === TYPE_COPY_FAIL
      ) {
        this.cycles.push({ bytes: Buffer.concat(this.current), synced: type === TYPE_SYNC || type === TYPE_QUERY })
        this.current = []
      }
    }
    void this.drive()
  }

  /** Remembers named statements, so the ones still open can be closed when the session ends. */
  private track(type: number, frame: Buffer) {
    if (type === TYPE_PARSE) {
      const name = readCString(frame, 5)
      if (name !== "") this.statements.add(name)
    } else if (type === TYPE_CLOSE && frame.length > 6 && frame.readUInt8(5) === char("S")) {
      this.statements.delete(readCString(frame, 6))
    }
  }

  /** A protocol violation: report it as the server would, then drop the connection. */
  private fail(code: string, text: string) {
    this.send(errorResponse("FATAL", code, text))
    this.close("graceful")
  }

  private close(how: "graceful" | "abrupt") {
    if (this.closing === "abrupt" || this.closing === how) return
    this.closing = how
    if (how === "abrupt") {
      this.cycles = []
      this.backend.withdraw(this, "closed")
    }
    void this.drive()
  }

  /**
   * Runs queued cycles in order. Only one drive loop runs per session; a loop that finds nothing
   * left to do ends, and the next `receive` or `close` starts another.
   */
  private async drive() {
    if (this.driving || this.done) return
    this.driving = true
    try {
      while (this.cycles.length > 0) {
        if (!this.holding) {
          const grant = await this.backend.acquire(this)
          if (grant === "closed") break
          if (grant === "cancelled") {
            this.answerCancelled()
            continue
          }
          this.holding = true
        }
        // Everything received so far runs as one call: the session owns the backend until the last
        // ReadyForQuery, so running its cycles back to back changes nothing for other sessions.
        const batch = this.cycles
        this.cycles = []
        const reply = await this.backend.exec(this, Buffer.concat(batch.map((cycle) => cycle.bytes)))
        this.send(reply)
        const status = lastReadyStatus(reply)
        if (status === "I" && batch[batch.length - 1]?.synced === true) {
          this.holding = false
          this.backend.release(this)
        }
      }
    } catch (error) {
      this.closing = "abrupt"
      this.cycles = []
      this.duplex.destroy(error instanceof Error ? error : new Error(String(error)))
    } finally {
      this.driving = false
    }
    if (this.closing !== "no" && !this.done) await this.finish()
  }

  /** A cancelled wait: the first cycle fails as PostgreSQL's cancel would, the rest stay queued. */
  private answerCancelled() {
    const [first, ...rest] = this.cycles
    if (first === undefined || !first.synced) return
    this.cycles = rest
    this.send(Buffer.concat([
      errorResponse("ERROR", "57014", "canceling statement due to user request"),
      readyForQuery("I")
    ]))
  }

  /**
   * Ends the session. An open transaction is rolled back and the session's named statements are
   * closed, so the next session never inherits either.
   */
  private async finish() {
    if (this.done || this.driving) return
    this.done = true
    this.cycles = []
    try {
      const rollback = this.holding
      if (rollback || this.statements.size > 0) {
        if (!this.holding) {
          await this.backend.acquire(this, true)
          this.holding = true
        }
        // Sync first ends an unfinished or failed extended-protocol cycle, so the ROLLBACK runs.
        await this.backend.exec(
          this,
          Buffer.concat([
            syncMessage,
            ...(rollback ? [rollbackMessage] : []),
            ...Array.from(this.statements, closeStatement),
            syncMessage
          ])
        )
      }
    } catch {
      // The backend is gone; there is nothing left to roll back.
    } finally {
      this.statements.clear()
      if (this.holding) {
        this.holding = false
        this.backend.release(this)
      }
      this.backend.forget(this)
      if (!this.duplex.destroyed) {
        // End both directions; the stream closes once the client has read what was sent.
        this.duplex.push(null)
        if (!this.duplex.writableEnded) this.duplex.end()
      }
      this.markFinished()
    }
  }
}
