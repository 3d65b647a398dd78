/**
 * @modelgate/connections: the connection drivers of modelgate. The pre-save
 * connection tester of every connection type (the `ConnectionTester` port of
 * core, in `Testers`) and the SSH tunnel that sits below every driver.
 */
export * as CloudTesters from "./CloudTesters.ts"
export * as DuckdbTester from "./DuckdbTester.ts"
export * as MysqlTester from "./MysqlTester.ts"
export * as PostgresTester from "./PostgresTester.ts"
export * as PublisherTester from "./PublisherTester.ts"
export * as Route from "./Route.ts"
export * as SshTunnel from "./SshTunnel.ts"
export * as Testers from "./Testers.ts"
