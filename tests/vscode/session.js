// The scenario of tests/vscode/test_session.py, as a user lives it: the workspace is open in
// VS Code with three files in editors; the agent (Claude Code: its Edit tool writes the file,
// then its PostToolUse hook runs `capture hook claude-code`) edits all three; the user rewrites
// the agent's line in one without saving, undoes the edit in another (Ctrl+Z), and undoes then
// redoes it in the third (Ctrl+Z, Ctrl+Shift+Z). The script waits until the extension's
// status bar reports every proposal settled and hands back what the user saw.
'use strict';
const fs = require('fs');
const { spawnSync } = require('child_process');
const w = require('./workbench');
const { config, log } = w;

async function agentEdits() {
  for (const edit of config.edits) {
    fs.writeFileSync(edit.path, edit.after);
    const hook = spawnSync(config.python, ['-m', 'capture', 'hook', 'claude-code'], {
      input: fs.readFileSync(edit.payload),
      cwd: config.folder,
      env: process.env,
      timeout: 60000,
    });
    if (hook.status !== 0) throw new Error(`capture hook exited ${hook.status}: ${hook.stderr}`);
  }
  log('agent edited ' + config.edits.length + ' files');
}

async function showsAgentText(page, name) {
  await w.openFile(page, name);
  await w.waitFor(async () => (await w.editorText(page)).includes(config.agentLine.trim()), 30000, `${name} reloaded with the agent's edit`);
}

w.run(async (browser) => {
  const { page } = await w.openWorkbench(browser, config.folder);
  const first = await w.waitFor(() => w.statusBarText(page), 90000, 'the agent-capture status bar item');
  log('status bar: ' + first);
  for (const name of config.open) await w.openFile(page, name);
  await w.sleep(500); // the didOpen of the last editor
  await agentEdits();
  await w.waitFor(async () => /3 proposals/.test((await w.statusBarText(page)) || ''), 60000, 'the status bar counting 3 proposals');
  log('status bar: ' + (await w.statusBarText(page)));

  // edited: the user selects the agent's statement (Shift+Home from the line's end, which
  // stops at the indentation), types a new one over it key by key, and does not save.
  await showsAgentText(page, config.roles.edited);
  await w.gotoLineEnd(page, config.agentLineNumber);
  await w.chord(page, ['Shift'], 'Home');
  await page.keyboard.type(config.typed);
  await w.waitFor(async () => (await w.editorText(page)).includes(config.userLine.trim()), 10000, 'the typed line');
  log('rewrote the agent line');

  // undone: Ctrl+Z takes the agent's edit back.
  await showsAgentText(page, config.roles.undone);
  await w.chord(page, ['Control'], 'KeyZ');
  await w.waitFor(async () => (await w.editorText(page)).includes(config.oldLine.trim()), 10000, 'the old line back after Ctrl+Z');
  log('undid the agent edit');

  // kept: Ctrl+Z then Ctrl+Shift+Z.
  await showsAgentText(page, config.roles.redone);
  await w.chord(page, ['Control'], 'KeyZ');
  await w.waitFor(async () => (await w.editorText(page)).includes(config.oldLine.trim()), 10000, 'the old line back after Ctrl+Z');
  await w.chord(page, ['Control', 'Shift'], 'KeyZ');
  await w.waitFor(async () => (await w.editorText(page)).includes(config.agentLine.trim()), 10000, 'the agent line back after Ctrl+Shift+Z');
  log('undid and redid the agent edit');

  const settled = await w.waitFor(
    () => w.traceEvents().filter((e) => e.event === 'stats' && e.proposals >= 3 && e.pending === 0).pop(),
    120000,
    'every proposal settled',
  );
  // the status bar shows what the last answer said
  await w.waitFor(async () => (await w.statusBarText(page)) === settled.text.replace(/^\$\([a-z-]+\)\s*/, ''), 30000, 'the status bar showing the settled figures');
  // The status bar item opens the report (`capture report --html`) in a webview.
  await page.click('.statusbar-item[id*="agentCapture.status"] a, .statusbar-item[id*="agentCapture.status"]');
  await w.waitFor(
    () => page.evaluate(() => [...document.querySelectorAll('.tabs-container .tab')].some((t) => t.textContent.includes('agent-capture report'))),
    60000,
    'the report tab',
  );
  const reportFrames = await w.waitFor(async () => {
    for (const frame of page.frames()) {
      const text = await frame.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '');
      if (/claude-code/.test(text) && /kept/i.test(text)) return text.slice(0, 2000);
    }
    return null;
  }, 60000, 'the report page showing the agent');
  const dirty = await page.evaluate(() => [...document.querySelectorAll('.tabs-container .tab.dirty')].map((t) => t.textContent.trim()));
  await w.screenshot(page, 'settled');
  return { statusBar: await w.statusBarText(page), dirty, settled, report: reportFrames };
});
