import { assert, describe, it, layer } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Predicate, Queue } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Buffer } from "node:buffer"
import { spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Duplex } from "node:stream"
import { fileURLToPath } from "node:url"
import { Pglite } from "@modelgate/sql"

/** A fresh temporary directory, removed when the scope closes. */
const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "modelgate-pglite-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** A SAVEPOINT outside a transaction block fails, so this tells whether a session is inside one. */
const insideTransaction = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exit = yield* Effect.exit(sql`savepoint probe`)
  return Exit.isSuccess(exit)
})

layer(Pglite.layer({ maxConnections: 4 }))("Pglite.layer (in memory, pool of 4)", (it) => {
  it.effect("runs plain queries", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly n: number }>`select 1 as n`
      assert.deepStrictEqual(rows, [{ n: 1 }])
    }))

  it.effect("binds parameters", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly total: number; readonly label: string; readonly missing: null }>`
        select ${40}::int + ${2}::int as total, ${"héllo"}::text as label, ${null}::text as missing`
      assert.deepStrictEqual(rows, [{ total: 42, label: "héllo", missing: null }])
    }))

  it.effect("round-trips json and jsonb", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      yield* sql`create table docs (id int primary key, body jsonb not null, raw json not null)`
      const body = { name: "sales", tags: ["a", "b"], nested: { n: 1.5, ok: true, none: null } }
      yield* sql`insert into docs (id, body, raw) values (1, ${sql.json(body)}, ${JSON.stringify(body)}::json)`
      const rows = yield* sql<{ readonly body: unknown; readonly raw: unknown; readonly name: string }>`
        select body, raw, body->>'name' as name from docs where id = 1`
      assert.deepStrictEqual(rows, [{ body, raw: body, name: "sales" }])
    }))

  it.effect("round-trips timestamptz", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table stamps (id int primary key, at timestamptz not null)`
      const at = new Date("2026-03-04T05:06:07.089Z")
      yield* sql`insert into stamps (id, at) values (1, ${at})`
      const rows = yield* sql<{ readonly at: Date; readonly iso: string }>`
        select at, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as iso from stamps where id = 1`
      const row = rows[0]
      assert.isDefined(row)
      assert.instanceOf(row.at, Date)
      assert.strictEqual(row.at.getTime(), at.getTime())
      assert.strictEqual(row.iso, "2026-03-04T05:06:07.089")
    }))

  it.effect("withTransaction commits on success and rolls back on failure", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table ledger (id int primary key)`
      yield* sql.withTransaction(Effect.all([sql`insert into ledger values (1)`, sql`insert into ledger values (2)`]))
      const failure = yield* sql.withTransaction(
        sql`insert into ledger values (3)`.pipe(Effect.andThen(Effect.fail("boom" as const)))
      ).pipe(Effect.flip)
      assert.strictEqual(failure, "boom")
      const rows = yield* sql<{ readonly id: number }>`select id from ledger order by id`
      assert.deepStrictEqual(rows.map((row) => row.id), [1, 2])
      assert.isFalse(yield* insideTransaction)
    }))

  it.effect("20 concurrent read-increment-write transactions count exactly, a concurrent rollback leaves no trace", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table counter (id int primary key, n int not null)`
      yield* sql`create table marks (label text primary key)`
      yield* sql`insert into counter values (1, 0)`
      const increment = sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<{ readonly n: number }>`select n from counter where id = 1 for update`
        assert.isDefined(row)
        // Hand the turn to the other fibers, so their transactions start while this one is open.
        yield* Effect.yieldNow
        yield* sql`update counter set n = ${row.n + 1} where id = 1`
      }))
      const doomed = sql.withTransaction(Effect.gen(function*() {
        yield* sql`update counter set n = n + 1000 where id = 1`
        yield* Effect.yieldNow
        yield* sql`insert into marks values ('doomed')`
        return yield* Effect.fail("rolled back" as const)
      })).pipe(Effect.flip)
      const results = yield* Effect.all(
        [...Array.from({ length: 10 }, () => increment), doomed, ...Array.from({ length: 10 }, () => increment)],
        { concurrency: "unbounded" }
      )
      assert.include(results, "rolled back")
      const [counter] = yield* sql<{ readonly n: number }>`select n from counter where id = 1`
      assert.deepStrictEqual(counter, { n: 20 })
      const marks = yield* sql`select * from marks`
      assert.deepStrictEqual(marks, [])
    }))

  it.effect("an interrupted transaction is rolled back and leaves no session inside a transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table interrupted (id int primary key)`
      const started = yield* Deferred.make<void>()
      const fiber = yield* sql.withTransaction(
        sql`insert into interrupted values (1)`.pipe(
          Effect.andThen(Deferred.succeed(started, undefined)),
          Effect.andThen(Effect.never)
        )
      ).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      // Every pooled session at once: none of them may still be inside the interrupted transaction.
      const probes = yield* Effect.all(Array.from({ length: 4 }, () => insideTransaction), { concurrency: 4 })
      assert.deepStrictEqual(probes, [false, false, false, false])
      const rows = yield* sql`select * from interrupted`
      assert.deepStrictEqual(rows, [])
      yield* sql.withTransaction(sql`insert into interrupted values (2)`)
      const after = yield* sql<{ readonly id: number }>`select id from interrupted`
      assert.deepStrictEqual(after, [{ id: 2 }])
    }))

  it.effect("a unique violation is a SqlError with a UniqueViolation reason and SQLSTATE 23505", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table names (name text constraint names_name_key primary key)`
      yield* sql`insert into names values ('a')`
      const error = yield* sql`insert into names values ('a')`.pipe(Effect.flip)
      assert.strictEqual(error._tag, "SqlError")
      assert.strictEqual(error.reason._tag, "UniqueViolation")
      assert.strictEqual(error.reason._tag === "UniqueViolation" ? error.reason.constraint : "", "names_name_key")
      const cause = error.reason.cause
      assert.isTrue(Predicate.hasProperty(cause, "code") && cause.code === "23505")
      // The failed statement left nothing behind: the same session serves the next query.
      assert.isFalse(yield* insideTransaction)
    }))
})

describe("Pglite.layer (data directory)", () => {
  const countRows = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly id: number }>`select id from kept order by id`
  })

  it.effect("survives closing and reopening the layer, creating a missing directory", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = join(yield* tempDir, "nested", "db")
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table kept (id int primary key)`
        yield* sql`insert into kept values (1)`
        yield* sql.withTransaction(sql`insert into kept values (2)`)
      }).pipe(Effect.provide(Pglite.layer({ dataDir })))
      const rows = yield* countRows.pipe(Effect.provide(Pglite.layer({ dataDir })))
      assert.deepStrictEqual(rows.map((row) => row.id), [1, 2])
    })))

  it.effect("refuses a data directory that is already open, and frees it on close", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = join(yield* tempDir, "locked")
      const second = yield* Effect.gen(function*() {
        yield* (yield* SqlClient.SqlClient)`select 1`
        return yield* Effect.exit(Effect.scoped(Layer.build(Pglite.layer({ dataDir }))))
      }).pipe(Effect.provide(Pglite.layer({ dataDir })))
      assert.isTrue(Exit.isFailure(second))
      if (Exit.isFailure(second)) assert.match(String(second.cause), /is in use by process \d+/)
      // Closed: it opens again.
      const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select 1 as n`).pipe(Effect.provide(Pglite.layer({ dataDir })))
      assert.strictEqual(rows.length, 1)
    })))

  it.effect("keeps acknowledged statements when the process is killed with SIGKILL", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = join(yield* tempDir, "db")
      const module = fileURLToPath(new URL("../src/Pglite.ts", import.meta.url))
      // The child acknowledges its writes on stdout, then idles until it is killed.
      const script = `
        import { Effect } from "effect"
        import * as SqlClient from "effect/sql/SqlClient"
        import * as Pglite from ${JSON.stringify(module)}
        const program = Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql\`create table kept (id int primary key)\`
          yield* sql\`insert into kept values (1)\`
          yield* sql.withTransaction(sql\`insert into kept values (2)\`)
          process.stdout.write("acknowledged\\n")
          return yield* Effect.never
        })
        Effect.runFork(program.pipe(Effect.provide(Pglite.layer({ dataDir: ${JSON.stringify(dataDir)} }))))
      `
      const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
        cwd: fileURLToPath(new URL("../../..", import.meta.url)),
        stdio: ["ignore", "pipe", "pipe"]
      })
      const output = yield* Effect.callback<string>((resume) => {
        let stdout = ""
        let stderr = ""
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString()
        })
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString()
          if (stdout.includes("acknowledged")) resume(Effect.succeed(stdout))
        })
        child.on("exit", (code) => resume(Effect.succeed(`exited ${code}: ${stdout}${stderr}`)))
      })
      assert.strictEqual(output, "acknowledged\n")
      yield* Effect.callback<void>((resume) => {
        child.on("exit", () => resume(Effect.void))
        child.kill("SIGKILL")
      })
      assert.strictEqual(child.signalCode, "SIGKILL")
      const rows = yield* countRows.pipe(Effect.provide(Pglite.layer({ dataDir })))
      assert.deepStrictEqual(rows.map((row) => row.id), [1, 2])
    })))
})

/** The session factory over one in-memory PGlite, for tests that speak the wire protocol directly. */
class Sessions extends Context.Service<Sessions, () => Duplex>()("@modelgate/sql/test/Pglite/Sessions") {}

const sessionsLayer = Layer.effect(Sessions, Effect.flatMap(Pglite.makePglite(), Pglite.makeStream))

const queryMessage = (text: string) => {
  const body = Buffer.from(`${text}\0`, "utf8")
  const header = Buffer.alloc(5)
  header.write("Q", 0, "latin1")
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

/** A minimal wire-protocol client over one session. */
const openSession = Effect.fnUntraced(function*(options: { readonly ssl?: boolean } = {}) {
  const duplex = (yield* Sessions)()
  yield* Effect.addFinalizer(() => Effect.sync(() => duplex.destroy()))
  duplex.on("error", () => {})
  if (options.ssl === true) {
    const answer = yield* Effect.callback<string>((resume) => {
      duplex.once("data", (chunk: Buffer) => resume(Effect.succeed(chunk.toString("latin1"))))
      duplex.write(PgProtocol.encodeSslRequest())
    })
    assert.strictEqual(answer, "N")
  }
  const parser = PgProtocol.makeParser()
  const messages = yield* Queue.unbounded<PgProtocol.BackendMessage>()
  duplex.on("data", (chunk: Buffer) => {
    for (const message of parser.push(chunk)) Queue.offerUnsafe(messages, message)
  })
  const untilReady = Effect.gen(function*() {
    const received: Array<PgProtocol.BackendMessage> = []
    while (true) {
      const message = yield* Queue.take(messages)
      received.push(message)
      if (message._tag === "ReadyForQuery") return received
    }
  })
  duplex.write(PgProtocol.encodeStartupMessage({ user: "postgres", database: "postgres" }))
  const startup = yield* untilReady
  const key = startup.find((message) => message._tag === "BackendKeyData")
  assert.isDefined(key)
  const send = (bytes: Uint8Array) => Effect.sync(() => duplex.write(bytes))
  return {
    duplex,
    startup,
    key: key._tag === "BackendKeyData" ? key : undefined,
    send,
    untilReady,
    query: (text: string) => send(queryMessage(text)).pipe(Effect.andThen(untilReady))
  }
})

const lastStatus = (messages: ReadonlyArray<PgProtocol.BackendMessage>) => {
  const last = messages[messages.length - 1]
  return last?._tag === "ReadyForQuery" ? last.status : undefined
}

const firstValue = (messages: ReadonlyArray<PgProtocol.BackendMessage>) => {
  const row = messages.find((message) => message._tag === "DataRow")
  const value = row?._tag === "DataRow" ? row.values[0] : undefined
  return value === null || value === undefined ? value : Buffer.from(value).toString("utf8")
}

const errorCode = (messages: ReadonlyArray<PgProtocol.BackendMessage>) => {
  const error = messages.find((message) => message._tag === "ErrorResponse")
  return error?._tag === "ErrorResponse" ? error.fields.code : undefined
}

layer(sessionsLayer)("Pglite.makeStream (wire protocol)", (it) => {
  it.effect("answers startup with server parameters, key data and ReadyForQuery", () =>
    Effect.scoped(Effect.gen(function*() {
      const session = yield* openSession({ ssl: true })
      const parameters = new Map(
        session.startup.flatMap((message) => message._tag === "ParameterStatus" ? [[message.name, message.value]] : [])
      )
      assert.strictEqual(session.startup[0]?._tag, "AuthenticationOk")
      assert.strictEqual(parameters.get("server_encoding"), "UTF8")
      assert.strictEqual(parameters.get("client_encoding"), "UTF8")
      assert.strictEqual(parameters.get("integer_datetimes"), "on")
      assert.strictEqual(parameters.get("standard_conforming_strings"), "on")
      assert.strictEqual(parameters.get("TimeZone"), "UTC")
      assert.match(parameters.get("DateStyle") ?? "", /^ISO/)
      assert.match(parameters.get("server_version") ?? "", /^\d+/)
      assert.strictEqual(lastStatus(session.startup), "I")
      assert.strictEqual(firstValue(yield* session.query("select 41 + 1")), "42")
    })))

  it.effect("a session keeps the backend through a transaction; closing it rolls back before the next runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const a = yield* openSession()
      const b = yield* openSession()
      yield* a.query("create table handover (id int)")
      assert.strictEqual(lastStatus(yield* a.query("begin; insert into handover values (1)")), "T")
      // b's statement waits for a's transaction to end; a never commits, its connection just drops.
      yield* b.send(queryMessage("select count(*) from handover"))
      a.duplex.destroy()
      const reply = yield* b.untilReady
      assert.strictEqual(firstValue(reply), "0")
      assert.strictEqual(lastStatus(reply), "I")
    })))

  it.effect("a failed transaction block ('E') also keeps the backend until it ends", () =>
    Effect.scoped(Effect.gen(function*() {
      const a = yield* openSession()
      const b = yield* openSession()
      yield* a.query("create table failing (id int primary key)")
      assert.strictEqual(lastStatus(yield* a.query("begin; insert into failing values (1)")), "T")
      const failed = yield* a.query("insert into failing values (1)")
      assert.strictEqual(errorCode(failed), "23505")
      assert.strictEqual(lastStatus(failed), "E")
      yield* b.send(queryMessage("select count(*) from failing"))
      assert.strictEqual(lastStatus(yield* a.query("rollback")), "I")
      const reply = yield* b.untilReady
      assert.strictEqual(firstValue(reply), "0")
      assert.strictEqual(lastStatus(reply), "I")
    })))

  it.effect("a CancelRequest fails a statement still waiting for its turn", () =>
    Effect.scoped(Effect.gen(function*() {
      const a = yield* openSession()
      const b = yield* openSession()
      assert.strictEqual(lastStatus(yield* a.query("begin")), "T")
      yield* b.send(queryMessage("select 1"))
      const canceller = (yield* Sessions)()
      const key = b.key
      assert.isDefined(key)
      yield* Effect.callback<void>((resume) => {
        canceller.on("close", () => resume(Effect.void))
        canceller.resume()
        canceller.write(PgProtocol.encodeCancelRequest({ pid: key.pid, secret: key.secret }))
      })
      const cancelled = yield* b.untilReady
      assert.strictEqual(errorCode(cancelled), "57014")
      assert.strictEqual(lastStatus(cancelled), "I")
      assert.strictEqual(lastStatus(yield* a.query("commit")), "I")
      assert.strictEqual(firstValue(yield* b.query("select 2")), "2")
    })))

  it.effect("named statements are closed when their session ends", () =>
    Effect.scoped(Effect.gen(function*() {
      const parse = (name: string) =>
        Buffer.concat([
          PgProtocol.encodeParse({ name, query: "select 1", parameterTypes: [] }).pipe((result) =>
            result._tag === "Success" ? result.success : new Uint8Array()
          ),
          PgProtocol.encodeSync()
        ])
      const a = yield* openSession()
      yield* a.send(parse("shared_name"))
      assert.isUndefined(errorCode(yield* a.untilReady))
      yield* Effect.callback<void>((resume) => {
        a.duplex.on("close", () => resume(Effect.void))
        a.duplex.end(PgProtocol.encodeTerminate())
      })
      const b = yield* openSession()
      yield* b.send(parse("shared_name"))
      // 42P05 (duplicate_prepared_statement) would mean a's statement outlived its session.
      assert.isUndefined(errorCode(yield* b.untilReady))
    })))
})
