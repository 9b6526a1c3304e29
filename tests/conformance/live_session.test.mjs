// The official TypeScript client (@durable-streams/client) follows a live agent session
// (scripted provider) at /v1/agents/{id}/events from an offset, over SSE and over long-poll,
// and sees every event after that offset exactly once. The daemon's URL: AGENTSTREAM_URL.
import { stream } from "@durable-streams/client"
import { expect, test } from "vitest"

const base = process.env.AGENTSTREAM_URL
if (!base) throw new Error("AGENTSTREAM_URL is required")

async function api(method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  expect(res.ok).toBe(true)
  return res.json()
}

async function waitIdle(id) {
  const deadline = Date.now() + 60000
  for (;;) {
    const agent = await api("GET", `/v1/agents/${id}`)
    if (agent.status === "idle" && agent.activeTurn === null && agent.queue.length === 0) return
    if (Date.now() > deadline) throw new Error(`agent ${id} did not become idle`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// Every event after `offset`, read page by page with plain catch-up reads.
async function catchUp(id, offset) {
  const events = []
  for (;;) {
    const res = await fetch(`${base}/v1/agents/${id}/events?offset=${encodeURIComponent(offset)}`)
    expect(res.status).toBe(200)
    const page = await res.json()
    events.push(...page)
    offset = res.headers.get("stream-next-offset")
    if (res.headers.get("stream-up-to-date") === "true" && page.length === 0) return events
    if (page.length === 0) return events
  }
}

for (const live of ["sse", "long-poll"]) {
  test(`the client follows a live session over ${live} and sees every event once`, async () => {
    const agent = await api("POST", "/v1/agents", { provider: "scripted", cwd: "/tmp" })
    await api("POST", `/v1/agents/${agent.id}/messages`, { text: "first", clientMessageId: "c1" })
    await waitIdle(agent.id)
    const head = await fetch(`${base}/v1/agents/${agent.id}/events?offset=-1`)
    const start = head.headers.get("stream-next-offset")
    expect(start).toBeTruthy()

    const seen = []
    const controller = new AbortController()
    const res = await stream({
      url: `${base}/v1/agents/${agent.id}/events`,
      offset: start,
      live,
      json: true,
      signal: controller.signal,
    })
    res.subscribeJson((batch) => {
      seen.push(...batch.items)
    })
    await api("POST", `/v1/agents/${agent.id}/messages`, { text: "second", clientMessageId: "c2" })
    await waitIdle(agent.id)
    const expected = await catchUp(agent.id, start)
    expect(expected.length).toBeGreaterThan(0)
    const deadline = Date.now() + 30000
    while (seen.length < expected.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50))
    await new Promise((r) => setTimeout(r, 300))  // no late duplicates either
    controller.abort()
    const key = (e) => `${e.epoch}:${e.seq}`
    expect(seen.map(key)).toEqual(expected.map(key))
    expect(new Set(seen.map(key)).size).toBe(seen.length)
  }, 120000)
}
