// Driven by tests/benchmarks/bench_vscode.py (config file in argv[2], written by it): in one
// code-server run, (1) the workbench's own start beside the extension's activation-to-server-
// ready, over several reloads; (2) keystroke latency in a window with the extension active and
// in a window with extensions disabled, in alternating blocks.
'use strict';
const path = require('path');
const w = require(path.join(__dirname, '..', 'vscode', 'workbench.js'));
const { config, log } = w;

async function lineTextLength(page) {
  return page.evaluate(() => {
    const lines = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    return lines ? lines.textContent.length : -1;
  });
}

async function typeBlock(page, n) {
  const samples = [];
  await page.bringToFront();
  let expected = await lineTextLength(page);
  for (let i = 0; i < n; i++) {
    expected += 1;
    const t = performance.now();
    await page.keyboard.press('KeyA');
    await page.waitForFunction(
      (want) => {
        const lines = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
        return lines && lines.textContent.length >= want;
      },
      { polling: 'mutation', timeout: 10000 },
      expected,
    );
    samples.push(performance.now() - t);
  }
  await page.keyboard.press('Enter');
  return samples;
}

w.run(async (browser) => {
  const starts = [];
  const seenHosts = new Set();
  let page;
  for (let i = 0; i < config.reloads; i++) {
    const t = Date.now();
    if (!page) ({ page } = await w.openWorkbench(browser, config.folder));
    else {
      await page.reload({ waitUntil: 'domcontentloaded' });
      await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
    }
    const workbenchMs = Date.now() - t;
    const ready = await w.waitFor(
      () => w.traceEvents().find((e) => e.event === 'ready' && !seenHosts.has(e.hostPid)),
      90000,
      'the server ready',
    );
    seenHosts.add(ready.hostPid);
    const activate = w.traceEvents().find((e) => e.event === 'activate' && e.hostPid === ready.hostPid);
    starts.push({ workbenchMs, activationToReadyMs: ready.sinceActivationMs, navigationToActivationMs: activate.t - t });
    log('start ' + JSON.stringify(starts[starts.length - 1]));
  }
  await w.waitFor(() => w.statusBarText(page), 60000, 'the status bar item');
  await w.openFile(page, config.activeFile);

  const disabledPage = await browser.newPage();
  const payload = encodeURIComponent(JSON.stringify([['disableExtensions', 'true']]));
  await disabledPage.goto(`${config.url}/?folder=${encodeURIComponent(config.folder)}&payload=${payload}`, { waitUntil: 'domcontentloaded' });
  await disabledPage.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
  await w.sleep(3000);
  if (await w.statusBarText(disabledPage)) throw new Error('the extension is active in the window meant to have it disabled');
  await disabledPage.bringToFront();
  await w.openFile(disabledPage, config.disabledFile);

  const typing = { active: [], disabled: [] };
  // warm-up, then alternating blocks so that drift in the machine's load hits both alike
  await typeBlock(page, 20);
  await typeBlock(disabledPage, 20);
  for (let b = 0; b < config.blocks; b++) {
    // which side goes first alternates too
    const order = b % 2 === 0 ? ['active', 'disabled'] : ['disabled', 'active'];
    for (const side of order) typing[side].push(...(await typeBlock(side === 'active' ? page : disabledPage, config.keys)));
    log(`block ${b + 1}/${config.blocks}`);
  }
  return { starts, typing };
});
