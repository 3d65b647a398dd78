/**
 * The in-memory storage behind every port's `layerMemory`: a keyed table in a Ref
 * with the same semantics the SQL adapters give (insert conflicts on a duplicate,
 * save checks the revision it read). Core's tests and quick embeddings use it.
 */
import { Effect, Ref } from "effect"
import { Conflict, ResourceNotFound } from "../Errors.ts"

/** A keyed table of records. */
export interface MemoryTable<V> {
  readonly insert: (value: V) => Effect.Effect<V, Conflict>
  readonly upsert: (value: V) => Effect.Effect<V>
  readonly get: (key: string) => Effect.Effect<V, ResourceNotFound>
  readonly find: (key: string) => Effect.Effect<V | undefined>
  readonly list: (predicate?: (value: V) => boolean) => Effect.Effect<ReadonlyArray<V>>
  readonly remove: (key: string) => Effect.Effect<void, ResourceNotFound>
  readonly modify: <A>(f: (rows: Map<string, V>) => readonly [A, Map<string, V>]) => Effect.Effect<A>
}

/** A table whose records carry a revision for optimistic concurrency. */
export interface RevisionedTable<V extends { readonly revision: number }> extends MemoryTable<V> {
  /** Stores `value` with revision + 1 if the stored revision is still `value.revision`. */
  readonly save: (value: V) => Effect.Effect<V, Conflict | ResourceNotFound>
}

/** A new empty table; `describe` names a key in error messages. */
export const make = <V>(key: (value: V) => string, describe: (key: string) => string): Effect.Effect<MemoryTable<V>> =>
  Effect.map(Ref.make(new Map<string, V>()), (ref) => table(ref, key, describe))

/** A new empty revisioned table. */
export const makeRevisioned = <V extends { readonly revision: number }>(
  key: (value: V) => string,
  describe: (key: string) => string
): Effect.Effect<RevisionedTable<V>> =>
  Effect.map(Ref.make(new Map<string, V>()), (ref) => {
    const base = table(ref, key, describe)
    const save = (value: V): Effect.Effect<V, Conflict | ResourceNotFound> =>
      Ref.modify(ref, (rows): readonly [Effect.Effect<V, Conflict | ResourceNotFound>, Map<string, V>] => {
        const k = key(value)
        const stored = rows.get(k)
        if (stored === undefined) return [Effect.fail(new ResourceNotFound({ message: `${describe(k)} not found` })), rows]
        if (stored.revision !== value.revision) {
          return [Effect.fail(new Conflict({ message: `${describe(k)} was changed by another request; read it again and retry` })), rows]
        }
        const next = { ...value, revision: value.revision + 1 }
        return [Effect.succeed(next), new Map(rows).set(k, next)]
      }).pipe(Effect.flatten)
    return { ...base, save }
  })

const table = <V>(ref: Ref.Ref<Map<string, V>>, key: (value: V) => string, describe: (key: string) => string): MemoryTable<V> => ({
  insert: (value) =>
    Ref.modify(ref, (rows): readonly [Effect.Effect<V, Conflict>, Map<string, V>] => {
      const k = key(value)
      if (rows.has(k)) return [Effect.fail(new Conflict({ message: `${describe(k)} already exists` })), rows]
      return [Effect.succeed(value), new Map(rows).set(k, value)]
    }).pipe(Effect.flatten),
  upsert: (value) => Ref.update(ref, (rows) => new Map(rows).set(key(value), value)).pipe(Effect.as(value)),
  get: (k) =>
    Ref.get(ref).pipe(
      Effect.flatMap((rows) => {
        const value = rows.get(k)
        return value === undefined ? Effect.fail(new ResourceNotFound({ message: `${describe(k)} not found` })) : Effect.succeed(value)
      })
    ),
  find: (k) => Effect.map(Ref.get(ref), (rows) => rows.get(k)),
  list: (predicate) =>
    Effect.map(Ref.get(ref), (rows) => {
      const all = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
      return predicate === undefined ? all : all.filter(predicate)
    }),
  remove: (k) =>
    Ref.modify(ref, (rows): readonly [Effect.Effect<void, ResourceNotFound>, Map<string, V>] => {
      if (!rows.has(k)) return [Effect.fail(new ResourceNotFound({ message: `${describe(k)} not found` })), rows]
      const next = new Map(rows)
      next.delete(k)
      return [Effect.void, next]
    }).pipe(Effect.flatten),
  modify: (f) => Ref.modify(ref, f)
})

/** A composite key of path segments; names never contain "/", so it is unambiguous and readable in messages. */
export const keyOf = (...parts: ReadonlyArray<string>): string => parts.join("/")
