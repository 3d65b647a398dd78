/**
 * Turns a compiled Malloy model into the port's plain `ModelEntity` list: sources, their fields,
 * views and joins, the fields reachable through joins (with the join path), and the model's named
 * queries, each with its `#(doc)` text and annotation tags.
 */
import type { Explore, Model } from "@malloydata/malloy"
import { Annotations, isJoinedSource } from "@malloydata/malloy"
import type { SemanticRuntime } from "@modelgate/core"

type ModelEntity = SemanticRuntime.ModelEntity

/** Joins are followed this deep; Malloy join trees are finite, the bound only keeps lists small. */
const maxJoinDepth = 4

/**
 * The text of the `#(doc)` notes. Malloy 0.0.431 returns the doc of a renamed primary key twice
 * (its own note plus an inherited copy), so equal notes are kept once.
 */
export const docOf = (annotations: Annotations): string | undefined => {
  const notes = [...new Set(annotations.forRoute("doc").map((note) => note.content.trim()).filter((text) => text !== ""))]
  return notes.length === 0 ? undefined : notes.join("\n")
}

/** Routed annotations other than `doc` (`#(index_values)`) and the properties of `# tag` lines. */
export const tagsOf = (annotations: Annotations): ReadonlyArray<string> => {
  const tags = new Set<string>()
  for (const note of annotations.forRoute()) {
    if (note.route !== "" && note.route !== "doc") tags.add(note.route)
  }
  for (const key of annotations.parseAsTag("").tag.keys()) tags.add(key)
  return [...tags]
}

/** A stage's fields as Malloy's IR keeps them: references by path, computed and nested fields by name. */
interface StageField {
  readonly type?: unknown
  readonly path?: unknown
  readonly name?: unknown
  readonly as?: unknown
  readonly pipeline?: unknown
}

/**
 * The fields a view or query groups by, aggregates and nests, as dotted paths (`carriers.carrier_name`,
 * `flight_count`), read from its pipeline: what it shows, which a question about it often names.
 */
export const pipelineFields = (pipeline: unknown, depth = 0): ReadonlyArray<string> => {
  if (!Array.isArray(pipeline) || depth > 3) return []
  const names: Array<string> = []
  for (const stage of pipeline as ReadonlyArray<{ readonly queryFields?: unknown }>) {
    if (!Array.isArray(stage?.queryFields)) continue
    for (const item of stage.queryFields as ReadonlyArray<StageField>) {
      if (item.type === "fieldref" && Array.isArray(item.path)) {
        names.push(item.path.filter((part): part is string => typeof part === "string").join("."))
      } else {
        const name = typeof item.as === "string" ? item.as : typeof item.name === "string" ? item.name : undefined
        if (name !== undefined) names.push(name)
        if (item.pipeline !== undefined) names.push(...pipelineFields(item.pipeline, depth + 1))
      }
    }
  }
  return [...new Set(names.filter((name) => name !== ""))]
}

const viewFields = (field: unknown): ReadonlyArray<string> =>
  typeof field === "object" && field !== null && "turtleDef" in field && typeof field.turtleDef === "object" && field.turtleDef !== null &&
    "pipeline" in field.turtleDef
    ? pipelineFields(field.turtleDef.pipeline)
    : []

const fieldsOf = (source: string, explore: Explore, path: ReadonlyArray<string>): Array<ModelEntity> => {
  const entities: Array<ModelEntity> = []
  for (const field of explore.allFields) {
    const common = { source, name: field.name, path, doc: docOf(field.annotations), tags: tagsOf(field.annotations) }
    if (field.isAtomicField()) {
      entities.push({ ...common, kind: field.isCalculation() ? "measure" : "dimension", dataType: field.type })
    } else if (field.isQueryField()) {
      // A view of a joined source cannot be run through the join, so only the source's own views count.
      if (path.length === 0) entities.push({ ...common, kind: "view", dataType: "", fields: viewFields(field) })
    } else if (!isJoinedSource(field.structDef)) {
      // A record or array column: one dimension (Malloy's `isRecord` is true for any join_one).
      entities.push({ ...common, kind: "dimension", dataType: field.structDef.type })
    } else {
      entities.push({ ...common, kind: "join", dataType: "" })
      if (path.length < maxJoinDepth) entities.push(...fieldsOf(source, field, [...path, field.name]))
    }
  }
  return entities
}

/** Every entity of a compiled model. */
export const entitiesOf = (model: Model): ReadonlyArray<ModelEntity> => {
  const entities: Array<ModelEntity> = []
  for (const explore of model.explores) {
    entities.push({
      kind: "source",
      source: explore.name,
      name: explore.name,
      path: [],
      dataType: "",
      doc: docOf(explore.annotations),
      tags: tagsOf(explore.annotations)
    })
    entities.push(...fieldsOf(explore.name, explore, []))
  }
  for (const query of model.namedQueries) {
    const annotations = new Annotations(query.annotations)
    // A query refining a view (`order_items -> by_category + {...}`) inherits the view's notes;
    // its own doc, when it has one, is the one that describes it.
    const { inherits: _inherited, ...own } = query.annotations ?? {}
    entities.push({
      kind: "query",
      source: "",
      name: query.name,
      path: [],
      dataType: "",
      doc: docOf(new Annotations(own)) ?? docOf(annotations),
      tags: tagsOf(annotations),
      fields: pipelineFields(query.pipeline)
    })
  }
  return entities
}
