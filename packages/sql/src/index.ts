/**
 * @modelgate/sql: modelgate's storage on PostgreSQL, on a server through
 * @effect/sql-pg or embedded with PGlite, with secrets sealed at rest.
 */
export * as Migrations from "./Migrations.ts"
export * as OutboxMailer from "./OutboxMailer.ts"
export * as Pglite from "./Pglite.ts"
export * as Reencrypt from "./Reencrypt.ts"
export * as ScratchDatabase from "./ScratchDatabase.ts"
export * as SqlConnectionRepo from "./SqlConnectionRepo.ts"
export * as SqlNotifier from "./SqlNotifier.ts"
export * as SqlOrganizationRepo from "./SqlOrganizationRepo.ts"
export * as SqlPackageStore from "./SqlPackageStore.ts"
export * as SqlPackageRepo from "./SqlPackageRepo.ts"
export * as SqlPermissionRepo from "./SqlPermissionRepo.ts"
export * as SqlRateLimiter from "./SqlRateLimiter.ts"
export * as SqlUserRepo from "./SqlUserRepo.ts"
export * as SqlVersionRepo from "./SqlVersionRepo.ts"
export * as Storage from "./Storage.ts"
