// Load tool for generic Durable Streams servers, the same for every server measured:
//   node bench.mjs URL [SECONDS]
// 1. Appends per second with 1 and 32 concurrent HTTP clients (keep-alive connections) over 100
//    JSON streams, 256-byte messages; every append is acknowledged before the client sends the
//    next one.
// 2. SSE delivery latency (append sent -> data event parsed by the subscriber) with 1 and 100
//    subscribers on one JSON stream, 20 appends per second.
// Prints one JSON object. Appends answered other than 200/204 are not counted, and reported.
import http from "node:http"

const base = process.argv[2]
const seconds = Number(process.argv[3] ?? "5")
const run = `${Date.now()}`
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
const url = new URL(base)

function request(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers, agent },
      (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode))
      },
    )
    req.on("error", reject)
    if (body !== undefined) req.end(body)
    else req.end()
  })
}

const message = (i) => {
  const head = JSON.stringify({ i, t: 0, pad: "" })
  return JSON.stringify({ i, t: 0, pad: "x".repeat(256 - head.length) })
}

async function appends(concurrency, streams) {
  const body = message(1)
  if (Buffer.byteLength(body) !== 256) throw new Error("message is not 256 bytes")
  let done = 0
  let next = 0
  const failed = {}
  const end = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < end) {
      const path = streams[next++ % streams.length]
      const status = await request("POST", path, { "content-type": "application/json" }, body)
      if (status === 204 || status === 200) done++
      else failed[status] = (failed[status] ?? 0) + 1
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  const perSecond = Math.round(done / ((performance.now() - start) / 1000))
  return Object.keys(failed).length ? { per_s: perSecond, failed_by_status: failed } : perSecond
}

function subscribe(path, latencies, ready) {
  return new Promise((resolve) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: "GET", path: `${path}?offset=now&live=sse` },
      (res) => {
        let buffer = ""
        let signalled = false
        res.setEncoding("utf8")
        res.on("data", (chunk) => {
          buffer += chunk
          let cut
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut)
            buffer = buffer.slice(cut + 2)
            if (!signalled && block.startsWith("event: control")) {
              signalled = true
              ready()
            }
            if (!block.startsWith("event: data")) continue
            const data = block
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5))
              .join("\n")
            const now = performance.timeOrigin + performance.now()
            for (const item of JSON.parse(data)) latencies.push(now - item.t)
          }
        })
        res.on("close", resolve)
      },
    )
    req.on("error", resolve)
    req.end()
    subscribe.requests.push(req)
  })
}
subscribe.requests = []

async function sseLatency(subscribers) {
  const path = `/v1/stream/bench-${run}-sse-${subscribers}`
  await request("PUT", path, { "content-type": "application/json" })
  const latencies = []
  let readyCount = 0
  let allReady
  const ready = new Promise((r) => (allReady = r))
  const closed = Array.from({ length: subscribers }, () =>
    subscribe(path, latencies, () => {
      if (++readyCount === subscribers) allReady()
    }),
  )
  await ready
  const count = seconds * 20
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ i, t: performance.timeOrigin + performance.now() })
    await request("POST", path, { "content-type": "application/json" }, body)
    await new Promise((r) => setTimeout(r, 50))
  }
  await new Promise((r) => setTimeout(r, 500))
  for (const req of subscribe.requests) req.destroy()
  subscribe.requests = []
  await Promise.all(closed)
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  return {
    deliveries: latencies.length,
    expected: count * subscribers,
    p50_ms: Number(at(0.5).toFixed(2)),
    p99_ms: Number(at(0.99).toFixed(2)),
  }
}

const streams = []
for (let i = 0; i < 100; i++) {
  const path = `/v1/stream/bench-${run}-${i}`
  const status = await request("PUT", path, { "content-type": "application/json" })
  if (status !== 201) throw new Error(`create answered ${status}`)
  streams.push(path)
}
const result = {
  url: base,
  appends_per_s_1_client: await appends(1, streams),
  appends_per_s_32_clients: await appends(32, streams),
  sse_1_subscriber: await sseLatency(1),
  sse_100_subscribers: await sseLatency(100),
}
console.log(JSON.stringify(result))
agent.destroy()
