/**
 * @modelgate/core: the pure domain of modelgate. Schemas, naming rules, roles
 * and policies, state machines, and the ports that adapters implement.
 */
export * as Errors from "./Errors.ts"
export * as Naming from "./Naming.ts"
