// Copyright 2026 The Flotilla Authors. Licensed under the Apache License 2.0.
//
// A small browser driver for the console's end-to-end test (e2e/console_test.go):
// it starts headless Chromium through playwright-core and runs the operations the
// Go test sends, one JSON object per line on standard input, answering each with
// one JSON line on standard output: {"ok":true,"text":...} or {"ok":false,"error":...}.
// The scenario lives in the Go test; this file only knows how to drive a page.
//
// Environment: FLOTILLA_PLAYWRIGHT (folder holding node_modules/playwright-core),
// FLOTILLA_CHROMIUM (the browser binary), SHOTS (folder for screenshots).
'use strict';
const path = require('path');
const readline = require('readline');
const { chromium } = require(path.join(process.env.FLOTILLA_PLAYWRIGHT, 'node_modules', 'playwright-core'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.FLOTILLA_CHROMIUM,
    // No sandbox as root; no background traffic on a machine without a network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // Errors the pages met: responses of 400 and above (by status and URL), and
  // what scripts logged as errors (but the browser's own line for such a
  // response, which says less).
  const consoleErrors = [];
  page.on('response', (r) => { if (r.status() >= 400) consoleErrors.push(`${r.status()} ${r.url()}`); });
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
  });

  // match finds the elements of a selector that contain text (any when no text).
  const match = (op) => page.locator(op.selector, op.text ? { hasText: op.text } : undefined);

  const ops = {
    async goto(op) {
      const resp = await page.goto(op.url);
      // A mark that only a navigation removes: expectSamePage checks it.
      await page.evaluate(() => { window.flotillaMark = true; });
      return String(resp ? resp.status() : 0);
    },
    async waitFor(op) {
      const want = op.count || 1;
      const deadline = Date.now() + (op.timeoutMs || 30000);
      let n = 0;
      while (Date.now() < deadline) {
        n = await match(op).count();
        if ((op.exactly ? n === want : n >= want)) return String(n);
        await sleep(200);
      }
      throw new Error(`${op.selector}${op.text ? ` with "${op.text}"` : ''}: ${n} found, want ${op.exactly ? '' : 'at least '}${want} within ${op.timeoutMs || 30000} ms`);
    },
    async click(op) {
      await Promise.all([page.waitForLoadState('load'), match(op).first().click()]);
      await page.waitForLoadState('load');
      return page.url();
    },
    async text(op) {
      return match(op).first().innerText();
    },
    async expectSamePage() {
      if (!(await page.evaluate(() => window.flotillaMark === true))) {
        throw new Error('the page was reloaded or left');
      }
      return '';
    },
    async shot(op) {
      await page.screenshot({ path: path.join(process.env.SHOTS, `${op.name}.png`), fullPage: !!op.fullPage });
      return '';
    },
    async errors() {
      return consoleErrors.join('\n');
    },
  };

  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    let op;
    try {
      op = JSON.parse(line);
      const f = ops[op.op];
      if (!f) throw new Error(`unknown op ${op.op}`);
      const text = await f(op);
      process.stdout.write(JSON.stringify({ ok: true, text }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ ok: false, error: String(e && e.message || e) }) + '\n');
    }
  }
  await browser.close();
}

main().catch((e) => {
  process.stderr.write(`driver: ${e && e.stack || e}\n`);
  process.exit(1);
});
