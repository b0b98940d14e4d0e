// The scenario of tests/vscode/test_vscode_bundled.py: the per-platform package's own server.
// The workbench opens with no `capture` anywhere; the status bar item appears (the bundled
// server answered); "Install Agent Hooks" installs Claude Code's; the hook command written into
// the settings is run as the agent runs it (a shell, the terminal's PATH); the status bar
// counts the edit.
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

w.run(async (browser) => {
  const { page } = await w.openWorkbench(browser, config.folder);
  const out = {};
  out.first = await w.waitFor(() => w.statusBarText(page), 120000, 'the agent-capture status bar item');
  log('status bar: ' + out.first);

  await palette(page, 'agent-capture: Install Agent Hooks');
  await w.waitFor(
    () => page.evaluate(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes('claude-code'))),
    20000,
    'the agents to pick',
  );
  await page.keyboard.press('Enter');
  const settings = path.join(config.folder, '.claude', 'settings.local.json');
  await w.waitFor(() => fs.existsSync(settings) && fs.readFileSync(settings, 'utf8').includes('capture hook'), 60000, 'the claude-code hooks installed');
  out.installed = fs.readFileSync(settings, 'utf8');
  const hooks = JSON.parse(out.installed).hooks.PostToolUse[0].hooks;
  out.command = hooks[0].command;

  // The agent runs the command by a shell, with the PATH the integrated terminal gives it.
  const run = spawnSync('sh', ['-c', out.command], {
    cwd: config.folder,
    input: config.payload,
    env: { ...process.env, PATH: config.agentPath, CLAUDE_PROJECT_DIR: config.folder },
    timeout: 60000,
  });
  out.hook = { status: run.status, stdout: String(run.stdout), stderr: String(run.stderr) };
  await w.waitFor(async () => /1 proposal/.test((await w.statusBarText(page)) || ''), 90000, 'the status bar counting the edit');
  out.after = await w.statusBarText(page);
  out.notifications = await w.notifications(page);
  return out;
});
