#!/usr/bin/env node
/**
 * `modelgate`: the operator CLI (see docs/cli.md). Results on stdout, notes and
 * errors on stderr, exit code 1 on any failure. Logs below warnings stay quiet and
 * go to stderr, so a captured token or key is alone on stdout.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect, Logger, References } from "effect"
import { readFileSync } from "node:fs"
import * as Commands from "../Commands.ts"

// src/bin and dist/bin both sit two folders below the package's root.
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { readonly version: string }

Commands.run(version).pipe(
  Effect.provide(NodeServices.layer),
  Effect.provideService(References.MinimumLogLevel, "Warn"),
  Effect.provideService(Logger.LogToStderr, true),
  NodeRuntime.runMain
)
