/** Helpers shared by the benchmark scripts. */
import { createServer } from "node:net"

/** A free loopback port (for a server a script starts). */
export const freePort = (): Promise<number> =>
  new Promise<number>((done) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      const port = typeof a === "object" && a !== null ? a.port : 0
      s.close(() => done(port))
    })
  })
