// The scenario of tests/vscode/test_missing.py: no `capture` anywhere. The user opens the
// workspace, sees the notification, then edits and saves a file as usual.
'use strict';
const w = require('./workbench');
const { config, log } = w;

w.run(async (browser) => {
  const { page } = await w.openWorkbench(browser, config.folder);
  await w.waitFor(() => w.traceEvents().some((e) => e.event === 'missing'), 90000, 'the extension noticing capture is missing');
  const shown = await w.waitFor(async () => {
    const messages = await w.notifications(page);
    return messages.some((m) => m.includes('agent-capture')) && messages;
  }, 30000, 'the notification');
  log('notifications: ' + JSON.stringify(shown));
  // The rest of the editor works: open a file, type, save.
  await w.openFile(page, config.file);
  await w.chord(page, ['Control'], 'End');
  await page.keyboard.type(config.typed);
  await w.chord(page, ['Control'], 'KeyS');
  await w.waitFor(
    () => require('fs').readFileSync(`${config.folder}/${config.file}`, 'utf8').includes(config.typed),
    20000,
    'the file saved',
  );
  await w.sleep(2000); // anything else the extension would show has had time to appear
  return {
    notifications: await w.notifications(page),
    statusBar: await w.statusBarText(page),
    servers: w.liveServers(),
  };
});
