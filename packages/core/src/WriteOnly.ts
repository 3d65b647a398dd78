/**
 * Write-only fields, marked once in the resource schemas and honoured everywhere:
 * the read view drops them, an update keeps a stored secret when the submitted one
 * is blank, and storage finds every secret to encrypt it. The marks are schema
 * annotations, so a new secret field needs no code beyond its declaration.
 */
import { Predicate, Schema, SchemaAST } from "effect"

declare module "effect/Schema" {
  namespace Annotations {
    interface Annotations {
      /** A credential: never returned, kept when blank on update, encrypted at rest. */
      readonly secret?: boolean | undefined
      /** For a secret: the sibling secret it is kept with (a passphrase is kept only with its key). */
      readonly secretKeptWith?: string | undefined
      /** For a secret: a sibling field whose presence in the request means the stored secret is not kept. */
      readonly secretReplacedBy?: string | undefined
      /** For an array of objects: the property that identifies an element across updates. */
      readonly elementKey?: string | undefined
    }
  }
}

/** Marks a string field as a write-only secret. */
export const secret = (options?: { readonly keptWith?: string; readonly replacedBy?: string; readonly description?: string }) =>
  Schema.String.annotate({
    writeOnly: true,
    secret: true,
    ...(options?.keptWith === undefined ? {} : { secretKeptWith: options.keptWith }),
    ...(options?.replacedBy === undefined ? {} : { secretReplacedBy: options.replacedBy }),
    ...(options?.description === undefined ? {} : { description: options.description })
  })

/** Marks a field as write-only without being a secret (it is dropped from reads only). */
export const writeOnly = <S extends Schema.Top>(schema: S): S["Rebuild"] => schema.pipe(Schema.annotate({ writeOnly: true }))

/** A secret found in a value: its path (array elements by index) and its plaintext. */
export interface SecretAt {
  readonly path: ReadonlyArray<string | number>
  readonly value: string
}

const resolve = (ast: SchemaAST.AST): SchemaAST.AST => (SchemaAST.isSuspend(ast) ? resolve(ast.thunk()) : ast)

const annotationsOf = (ast: SchemaAST.AST) => resolve(ast).annotations

const isSecretAst = (ast: SchemaAST.AST): boolean => annotationsOf(ast)?.secret === true

const isWriteOnlyAst = (ast: SchemaAST.AST): boolean => annotationsOf(ast)?.writeOnly === true

// The member of a union (NullOr, optional) that describes a non-null object or array value.
const shapeFor = (ast: SchemaAST.AST, value: unknown): SchemaAST.Objects | SchemaAST.Arrays | undefined => {
  const node = resolve(ast)
  if (SchemaAST.isObjects(node)) return isPlainObject(value) ? node : undefined
  if (SchemaAST.isArrays(node)) return Array.isArray(value) ? node : undefined
  if (SchemaAST.isUnion(node)) {
    for (const member of node.types) {
      const found = shapeFor(member, value)
      if (found !== undefined) return found
    }
  }
  return undefined
}

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  Predicate.isObject(value) && !Array.isArray(value)

const elementAst = (arrays: SchemaAST.Arrays): SchemaAST.AST | undefined => arrays.rest[0] ?? arrays.elements[0]

/** A blank secret ("" or only whitespace, or absent) keeps the stored value on update. */
export const isBlank = (value: unknown): boolean =>
  value === undefined || value === null || (Predicate.isString(value) && value.trim() === "")

/** The read view of a value: every write-only field removed, at any depth. */
export const readView = <S extends Schema.Top>(schema: S, value: S["Type"]): S["Type"] => {
  const strip = (ast: SchemaAST.AST, input: unknown): unknown => {
    const shape = shapeFor(ast, input)
    if (shape === undefined) return input
    if (SchemaAST.isArrays(shape)) {
      const element = elementAst(shape)
      return Array.isArray(input) && element !== undefined ? input.map((item) => strip(element, item)) : input
    }
    if (!isPlainObject(input)) return input
    const out: Record<string, unknown> = {}
    const known = new Map(shape.propertySignatures.map((p) => [String(p.name), p.type]))
    for (const [key, field] of Object.entries(input)) {
      const fieldAst = known.get(key)
      if (fieldAst !== undefined && isWriteOnlyAst(fieldAst)) continue
      out[key] = fieldAst === undefined ? field : strip(fieldAst, field)
    }
    return out
  }
  return strip(schema.ast, value) as S["Type"]
}

/** Every non-blank secret in a value, with its path. */
export const collectSecrets = <S extends Schema.Top>(schema: S, value: S["Type"]): ReadonlyArray<SecretAt> => {
  const found: Array<SecretAt> = []
  const visit = (ast: SchemaAST.AST, input: unknown, path: ReadonlyArray<string | number>): void => {
    const shape = shapeFor(ast, input)
    if (shape === undefined) return
    if (SchemaAST.isArrays(shape)) {
      const element = elementAst(shape)
      if (Array.isArray(input) && element !== undefined) input.forEach((item, i) => visit(element, item, [...path, i]))
      return
    }
    if (!isPlainObject(input)) return
    for (const p of shape.propertySignatures) {
      const key = String(p.name)
      const field = input[key]
      if (field === undefined) continue
      if (isSecretAst(p.type)) {
        if (Predicate.isString(field) && !isBlank(field)) found.push({ path: [...path, key], value: field })
      } else visit(p.type, field, [...path, key])
    }
  }
  visit(schema.ast, value, [])
  return found
}

/** A copy of a value with every non-blank secret replaced by `f(secret, path)`. */
export const mapSecrets = <S extends Schema.Top>(
  schema: S,
  value: S["Type"],
  f: (secret: string, path: ReadonlyArray<string | number>) => string
): S["Type"] => {
  const map = (ast: SchemaAST.AST, input: unknown, path: ReadonlyArray<string | number>): unknown => {
    const shape = shapeFor(ast, input)
    if (shape === undefined) return input
    if (SchemaAST.isArrays(shape)) {
      const element = elementAst(shape)
      return Array.isArray(input) && element !== undefined
        ? input.map((item, i) => map(element, item, [...path, i]))
        : input
    }
    if (!isPlainObject(input)) return input
    const out: Record<string, unknown> = { ...input }
    for (const p of shape.propertySignatures) {
      const key = String(p.name)
      const field = input[key]
      if (field === undefined) continue
      if (isSecretAst(p.type)) {
        if (Predicate.isString(field) && !isBlank(field)) out[key] = f(field, [...path, key])
      } else out[key] = map(p.type, field, [...path, key])
    }
    return out
  }
  return map(schema.ast, value, []) as S["Type"]
}

/**
 * The update rule for secrets: `submitted` replaces `stored` wholesale, except that a
 * blank secret keeps the stored secret at the same place, and a secret marked
 * `secretKeptWith` (a key's passphrase) is kept only when that sibling is kept too:
 * a rotated key never inherits the old passphrase. Array elements are matched by the
 * array's `elementKey` annotation (by position without one). A secret marked
 * `secretReplacedBy` is not kept when the request gives that sibling (a connection
 * string gives way to individual parameters). Nothing else of
 * `stored` survives: omitted optional fields stay cleared.
 */
export const mergeSecrets = <S extends Schema.Top>(schema: S, stored: S["Type"] | undefined, submitted: S["Type"]): S["Type"] => {
  const merge = (ast: SchemaAST.AST, old: unknown, next: unknown): unknown => {
    const shape = shapeFor(ast, next)
    if (shape === undefined) return next
    if (SchemaAST.isArrays(shape)) {
      const element = elementAst(shape)
      if (!Array.isArray(next) || element === undefined) return next
      const oldItems: ReadonlyArray<unknown> = Array.isArray(old) ? old : []
      const key = annotationsOf(shape)?.elementKey
      return next.map((item, i) => {
        const match = key === undefined
          ? oldItems[i]
          : oldItems.find((o) => isPlainObject(o) && isPlainObject(item) && o[key] !== undefined && o[key] === item[key])
        return merge(element, match, item)
      })
    }
    if (!isPlainObject(next)) return next
    const previous = isPlainObject(old) ? old : undefined
    const out: Record<string, unknown> = { ...next }
    const kept = new Set<string>()
    const secrets = shape.propertySignatures.filter((p) => isSecretAst(p.type))
    // Independent secrets first, so that a dependent one can ask whether its sibling was kept.
    const ordered = [
      ...secrets.filter((p) => annotationsOf(p.type)?.secretKeptWith === undefined),
      ...secrets.filter((p) => annotationsOf(p.type)?.secretKeptWith !== undefined)
    ]
    for (const p of ordered) {
      const key = String(p.name)
      const sibling = annotationsOf(p.type)?.secretKeptWith
      const replacedBy = annotationsOf(p.type)?.secretReplacedBy
      const mayKeep = (sibling === undefined || kept.has(sibling)) && (replacedBy === undefined || next[replacedBy] === undefined)
      if (isBlank(next[key]) && previous !== undefined && !isBlank(previous[key]) && mayKeep) {
        out[key] = previous[key]
        kept.add(key)
      } else if (isBlank(next[key])) {
        delete out[key]
      }
    }
    for (const p of shape.propertySignatures) {
      const key = String(p.name)
      if (isSecretAst(p.type) || next[key] === undefined) continue
      out[key] = merge(p.type, previous?.[key], next[key])
    }
    return out
  }
  return merge(schema.ast, stored, submitted) as S["Type"]
}
