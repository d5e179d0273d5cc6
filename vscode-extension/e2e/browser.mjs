// Opens code-server in headless Chromium (Debian's /usr/bin/chromium via playwright-core; no
// browser download) so that the extension host starts, serves screenshot requests from the test
// driver (files shot-NAME.request in the result folder), and exits when result.json appears.
//
//   node e2e/browser.mjs URL RESULT_DIR [TIMEOUT_SECONDS]
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, outDir, timeoutArg] = process.argv.slice(2);
const deadline = Date.now() + Number(timeoutArg ?? 300) * 1000;
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
let status = 1;
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  const taken = new Set();
  while (Date.now() < deadline) {
    for (const f of readdirSync(outDir)) {
      const m = /^shot-(.+)\.request$/.exec(f);
      if (m && !taken.has(m[1])) {
        taken.add(m[1]);
        await sleep(1200); // let the editor paint
        await page.screenshot({ path: join(outDir, `shot-${m[1]}.png`) });
        console.log(`screenshot ${m[1]}`);
      }
    }
    for (const f of readdirSync(outDir)) {
      const m = /^query-(.+)\.request$/.exec(f);
      if (m && !taken.has(`query-${m[1]}`)) {
        taken.add(`query-${m[1]}`);
        await sleep(1500);
        // The notification toasts currently shown (VS Code's DOM: .notification-toast).
        const toasts = await page.$$eval('.notification-toast', (els) => els.map((e) => e.innerText)).catch((err) => [`error: ${err}`]);
        await page.screenshot({ path: join(outDir, `query-${m[1]}.png`) });
        writeFileSync(join(outDir, `query-${m[1]}.json`), JSON.stringify(toasts));
        console.log(`query ${m[1]}: ${toasts.length} toasts`);
      }
    }
    if (existsSync(join(outDir, 'result.json'))) {
      status = 0;
      break;
    }
    await sleep(250);
  }
  await page.screenshot({ path: join(outDir, 'final.png') }).catch(() => undefined);
  writeFileSync(join(outDir, 'browser-console.log'), consoleLines.join('\n'));
  if (status !== 0) {
    console.error('timed out waiting for result.json');
  }
} finally {
  await browser.close();
}
process.exit(status);
