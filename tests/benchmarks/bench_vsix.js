// tests/benchmarks/bench_vsix.py's driver: open the folder, wait for the agent-capture status
// bar item (the server answered). The timing comes from the extension's trace.
'use strict';
const w = require('../vscode/workbench');
const { config } = w;

w.run(async (browser) => {
  const { page } = await w.openWorkbench(browser, config.folder);
  const text = await w.waitFor(() => w.statusBarText(page), 180000, 'the agent-capture status bar item');
  return { statusBar: text };
});
