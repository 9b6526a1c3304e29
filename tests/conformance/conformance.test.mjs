// The official Durable Streams server conformance suite against the server at
// CONFORMANCE_TEST_URL (tools/test_conformance.sh starts the daemon and sets it).
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.CONFORMANCE_TEST_URL
if (!baseUrl) throw new Error("CONFORMANCE_TEST_URL is required")

runConformanceTests({
  baseUrl,
  longPollTimeoutMs: Number(process.env.CONFORMANCE_LONG_POLL_MS ?? "1000"),
  subscriptions: process.env.CONFORMANCE_SUBSCRIPTIONS !== "0",
})
