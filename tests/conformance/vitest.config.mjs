import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: [process.env.VITEST_INCLUDE ?? "conformance.test.mjs"],
    testTimeout: 60000,
    hookTimeout: 60000,
  },
})
