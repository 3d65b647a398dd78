import { defineConfig } from "vitest/config"

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources, as under `tsc -b`.
  resolve: { conditions: ["@modelgate/source", "import", "module", "node", "default"] },
  ssr: { resolve: { conditions: ["@modelgate/source", "import", "module", "node", "default"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    // Most files wait on servers, child processes and databases rather than on the CPU: three at a
    // time keep a 2-core machine busy (vitest's default there is one).
    maxWorkers: 3,
    hookTimeout: 120_000
  }
})
