import { config } from "../../tsup.shared.ts"

export default config(["src/index.ts", "src/bin/modelgate.ts"])
