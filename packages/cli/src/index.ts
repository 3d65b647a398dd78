/**
 * @modelgate/cli: the `modelgate` operator CLI (migrate, seed, publish, token,
 * api-key, reencrypt) and the modules it is made of, for host applications that
 * embed the commands or load seeds themselves.
 */
export * as Commands from "./Commands.ts"
export * as DataDir from "./DataDir.ts"
export * as OperatorError from "./OperatorError.ts"
export * as Seed from "./Seed.ts"
export * as Store from "./Store.ts"
