// What the puppeteer-core scripts of tests/vscode share: a headless Debian chromium on a
// code-server workbench, and the few gestures a user makes (Quick Open, keys, reading the
// status bar, the notifications and the editor's text). The config file (argv[2]) is written
// by tests/vscode/codeserver.py.
'use strict';
const fs = require('fs');
const path = require('path');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const puppeteer = require(config.puppeteer);
const t0 = Date.now();

function log(message) {
  console.log(`[+${((Date.now() - t0) / 1000).toFixed(2)}s] ${message}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    // a page.evaluate can hang while the workbench is busy: never wait past the deadline
    const value = await Promise.race([predicate(), sleep(Math.max(100, end - Date.now()))]);
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

function traceEvents() {
  try {
    return fs.readFileSync(config.trace, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

async function launch() {
  return puppeteer.launch({
    executablePath: config.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    defaultViewport: { width: 1400, height: 900 },
  });
}

/** Open the workbench on `folder`; resolves once the explorer lists it. */
async function openWorkbench(browser, folder) {
  const page = await browser.newPage();
  const started = Date.now();
  await page.goto(`${config.url}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
  log('workbench ready');
  return { page, started, ready: Date.now() };
}

async function chord(page, mods, key) {
  for (const m of mods) await page.keyboard.down(m);
  await page.keyboard.press(key);
  for (const m of mods.slice().reverse()) await page.keyboard.up(m);
}

/** Quick Open (Ctrl+P) a file by name; resolves once its tab is the active one.
 * On a loaded machine Quick Open can swallow keys typed before its list is ready, or take the
 * Enter before the filter settles on the file, so a try that does not end in the file's tab is
 * dismissed (Escape) and made again. */
async function openFile(page, name, tries = 4) {
  for (let attempt = 1; ; attempt++) {
    try {
      await openFileOnce(page, name);
      return;
    } catch (err) {
      if (attempt >= tries) throw err;
      log(`quick open of ${name} did not take (try ${attempt}): ${String(err.message || err).split('\n')[0]}`);
      await page.keyboard.press('Escape');
      await sleep(1000);
    }
  }
}

async function openFileOnce(page, name) {
  await chord(page, ['Control'], 'KeyP');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 20000 });
  await sleep(200);
  await page.keyboard.type(name);
  await page.waitForFunction(
    (n) => {
      // Enter opens the focused row, so wait until the filter has put the file there
      const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
      return row && row.textContent.includes(n);
    },
    { timeout: 20000 },
    name,
  );
  await sleep(300);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    (n) => {
      const tab = document.querySelector('.tabs-container .tab.active');
      return tab && tab.textContent.includes(n) && document.activeElement && document.activeElement.closest('.monaco-editor');
    },
    { timeout: 20000 },
    name,
  );
  await sleep(200);
}

/** Go to a 1-based line, cursor at its end (Ctrl+G). */
async function gotoLineEnd(page, line) {
  await chord(page, ['Control'], 'KeyG');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 20000 });
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
  await sleep(200);
  await page.keyboard.press('End');
}

/** The active editor's visible lines, as text (Monaco renders spaces as no-break spaces). */
async function editorText(page) {
  return page.evaluate(() => {
    const editor = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    if (!editor) return '';
    const lines = [...editor.querySelectorAll('.view-line')]
      .map((l) => ({ top: parseFloat(l.style.top || '0'), text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top);
    return lines.map((l) => l.text).join('\n');
  });
}

/** The agent-capture status bar item's text, or null when it is not shown. */
async function statusBarText(page) {
  return page.evaluate(() => {
    const items = [...document.querySelectorAll('.statusbar-item')];
    const ours = items.find((i) => (i.id || '').includes('agentCapture.status') || i.textContent.includes('capture:'));
    return ours ? ours.textContent.trim() : null;
  });
}

/** The messages of the notification toasts and of the notification center. */
async function notifications(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notification-list-item-message')].map((m) => m.textContent.trim()),
  );
}

async function screenshot(page, name) {
  fs.mkdirSync(config.shots, { recursive: true });
  await page.screenshot({ path: path.join(config.shots, `${name}.png`) });
}

/** Run `main(browser)`, write what it returns to config.out, exit non-zero on failure. */
function run(main) {
  (async () => {
    const browser = await launch();
    let pages = [];
    try {
      const result = await main(browser);
      fs.writeFileSync(config.out, JSON.stringify(result, null, 2));
      log('done');
    } catch (err) {
      console.error(err && err.stack ? err.stack : String(err));
      pages = await Promise.race([browser.pages(), sleep(5000).then(() => [])]);
      for (const [i, p] of pages.entries()) {
        await Promise.race([screenshot(p, `failure-${i}`).catch(() => {}), sleep(5000)]);
      }
      process.exitCode = 1;
    } finally {
      // closing a page the workbench holds can hang; the exit code is what matters
      await Promise.race([browser.close(), sleep(5000)]);
      process.exit(process.exitCode || 0);
    }
  })();
}

module.exports = {
  config, log, sleep, waitFor, traceEvents, openWorkbench, chord, openFile, gotoLineEnd,
  editorText, statusBarText, notifications, screenshot, run,
};

/** The live `capture serve` processes writing into this test's CAPTURE_HOME (from /proc). */
function liveServers() {
  const home = `CAPTURE_HOME=${process.env.CAPTURE_HOME}`;
  const pids = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0');
      if (!argv.includes('serve') || !argv.some((a) => a.endsWith('capture'))) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (fs.readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(home)) pids.push(Number(name));
    } catch {}
  }
  return pids.sort((a, b) => a - b);
}
module.exports.liveServers = liveServers;
