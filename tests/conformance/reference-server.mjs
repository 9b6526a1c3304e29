// The reference Durable Streams server (npm @durable-streams/server), file-backed, for side-by-
// side benchmarks and for checking the conformance harness itself.
// Usage: node reference-server.mjs PORT DATA_DIR [LONG_POLL_MS]
import { DurableStreamTestServer } from "@durable-streams/server"

const [port, dataDir, longPoll] = process.argv.slice(2)
// PORT 0 picks a free port (printed).
const server = new DurableStreamTestServer({
  port: Number(port),
  host: "127.0.0.1",
  dataDir,
  longPollTimeout: Number(longPoll ?? "1000"),
  webhooks: true,
})
const url = await server.start()
console.log(`reference server on ${url}`)
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    await server.stop()
    process.exit(0)
  })
}
