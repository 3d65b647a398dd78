import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  target: "node22",
  dts: { compilerOptions: { composite: false, emitDeclarationOnly: false, incremental: false } },
  sourcemap: true,
  clean: true,
  treeshake: true
})
