import { defineConfig } from "tsup"

/** The build of every package: ESM and declarations from its entry points. */
export const config = (entry: ReadonlyArray<string> = ["src/index.ts"]) =>
  defineConfig({
    entry: [...entry],
    format: ["esm"],
    target: "node22",
    dts: { compilerOptions: { composite: false, emitDeclarationOnly: false, incremental: false } },
    sourcemap: true,
    clean: true,
    treeshake: true
  })
