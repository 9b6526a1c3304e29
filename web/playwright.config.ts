import { defineConfig } from '@playwright/test';

// Drives Debian's Chromium (CHROMIUM, default /usr/bin/chromium) against real daemons started
// by the tests themselves (AGENTSTREAM_BIN). One worker: the machine has two cores.
export default defineConfig({
  testDir: './e2e',
  testMatch: /.*\.spec\.ts/,
  timeout: 60000,
  expect: { timeout: 15000 },
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    },
    viewport: { width: 1400, height: 860 },
  },
});
