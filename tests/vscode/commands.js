// The scenario of tests/vscode/test_commands.py: from the Command Palette the user enables
// sync for the workspace (collector URL from the settings, the token typed in, the
// confirmation read and accepted), disables it again (confirmed), and installs the hooks of
// the agent found in the workspace. After each step the script asks `capture sync status`.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const w = require('./workbench');
const { config, log } = w;

async function palette(page, title) {
  await w.chord(page, ['Control', 'Shift'], 'KeyP');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 20000 });
  await page.keyboard.type(title);
  await page.waitForFunction(
    (t) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(t)),
    { timeout: 20000 },
    title,
  );
  await w.sleep(300);
  await page.keyboard.press('Enter');
}

async function dialog(page, button) {
  const text = await w.waitFor(
    () => page.evaluate(() => {
      const box = document.querySelector('.monaco-dialog-box');
      return box ? box.innerText : null;
    }),
    20000,
    'the confirmation dialog',
  );
  const clicked = await page.evaluate((label) => {
    const b = [...document.querySelectorAll('.monaco-dialog-box .monaco-button')].find((x) => x.textContent.trim() === label);
    if (b) b.click();
    return !!b;
  }, button);
  if (!clicked) throw new Error(`no "${button}" button in: ${text}`);
  return text;
}

async function notification(page, pattern) {
  return w.waitFor(async () => (await w.notifications(page)).find((m) => new RegExp(pattern).test(m)), 30000, `a notification matching ${pattern}`);
}

function syncStatus() {
  const r = spawnSync(config.python, ['-m', 'capture', 'sync', 'status', '--json'], { cwd: config.folder, env: process.env });
  return JSON.parse(r.stdout.toString());
}

w.run(async (browser) => {
  const { page } = await w.openWorkbench(browser, config.folder);
  await w.waitFor(() => w.statusBarText(page), 90000, 'the agent-capture status bar item');
  const out = {};

  await palette(page, 'agent-capture: Enable Sync for This Workspace');
  await page.waitForSelector('.quick-input-widget input[type="password"]', { visible: true, timeout: 20000 });
  await page.keyboard.type(config.token);
  await page.keyboard.press('Enter');
  out.enableDialog = await dialog(page, 'Enable Sync');
  out.enabled = await notification(page, 'sync enabled for');
  out.afterEnable = syncStatus();
  log('enabled: ' + out.enabled);

  await palette(page, 'agent-capture: Disable Sync for This Workspace');
  out.disableDialog = await dialog(page, 'Disable Sync');
  out.disabled = await notification(page, 'sync disabled for');
  out.afterDisable = syncStatus();
  log('disabled: ' + out.disabled);

  await palette(page, 'agent-capture: Install Agent Hooks');
  out.picks = await w.waitFor(
    () => page.evaluate(() => {
      const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
      return rows.some((r) => r.textContent.includes('claude-code')) ? rows.map((r) => ({ text: r.innerText.replace(/\s+/g, ' ').trim(), checked: r.getAttribute('aria-checked') === 'true' || !!r.querySelector('input[type="checkbox"]:checked') })) : null;
    }),
    20000,
    'the agents to pick',
  );
  await page.keyboard.press('Enter');
  const settings = path.join(config.folder, '.claude', 'settings.local.json');
  await w.waitFor(() => fs.existsSync(settings) && fs.readFileSync(settings, 'utf8').includes('capture'), 30000, 'the claude-code hooks installed');
  out.installed = fs.readFileSync(settings, 'utf8');
  out.notifications = await w.notifications(page);
  return out;
});
