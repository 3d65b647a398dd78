/**
 * @modelgate/jobs: background pipelines on effect/cluster and effect/workflow:
 * version builds with auto-promote, connection indexing, schedules and freshness.
 */
export * as AutoPromoter from "./AutoPromoter.ts"
export * as BuildPlan from "./BuildPlan.ts"
export * as ConnectionIndexing from "./ConnectionIndexing.ts"
export * as JobsCluster from "./JobsCluster.ts"
export * as JobsMigrations from "./JobsMigrations.ts"
export * as JobsPipelines from "./JobsPipelines.ts"
export * as ModelSuggestions from "./ModelSuggestions.ts"
export * as Schedules from "./Schedules.ts"
export * as SchemaReader from "./SchemaReader.ts"
export * as VersionBuild from "./VersionBuild.ts"
