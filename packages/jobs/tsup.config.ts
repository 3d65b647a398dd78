import { config } from "../../tsup.shared.ts"

export default config()
