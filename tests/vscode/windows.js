// The scenario of tests/vscode/test_windows.py: one window, then that window reloaded, then a
// second window on the same folder and that window closed, then the server killed. After each
// step it notes which extension host answered, which server it talks to, and which
// `capture serve` processes are alive.
'use strict';
const w = require('./workbench');
const { log } = w;

/** The first status bar answer from an extension host other than those in `seenHosts`. */
async function newHostServer(seenHosts, what) {
  const e = await w.waitFor(
    () => w.traceEvents().find((ev) => ev.event === 'stats' && ev.serverPid && !seenHosts.has(ev.hostPid)),
    90000,
    what,
  );
  seenHosts.add(e.hostPid);
  return { host: e.hostPid, server: e.serverPid };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function settledServers(expected, what) {
  // a server stops some time after its window goes; wait for the count, then report it
  await w.waitFor(() => w.liveServers().length === expected, 60000, what).catch(() => {});
  return w.liveServers();
}

w.run(async (browser) => {
  const hosts = new Set();
  const steps = {};
  const first = await w.openWorkbench(browser, w.config.folder);
  steps.first = await newHostServer(hosts, 'the first window\'s server');
  steps.first.live = await settledServers(1, 'one server');
  log('first window: ' + JSON.stringify(steps.first));

  await first.page.reload({ waitUntil: 'domcontentloaded' });
  steps.reloaded = await newHostServer(hosts, 'the reloaded window\'s server');
  steps.reloaded.live = await settledServers(1, 'one server after the reload');
  steps.reloaded.firstAlive = alive(steps.first.server);
  log('reloaded: ' + JSON.stringify(steps.reloaded));

  const second = await w.openWorkbench(browser, w.config.folder);
  steps.second = await newHostServer(hosts, 'the second window\'s server');
  steps.second.live = await settledServers(2, 'two servers for two windows');
  log('second window: ' + JSON.stringify(steps.second));

  await second.page.close();
  steps.closed = { live: await settledServers(1, 'the second window\'s server stopped') };
  log('second window closed: ' + JSON.stringify(steps.closed));

  // A server that dies is started again, for the same window.
  process.kill(steps.reloaded.server, 'SIGKILL');
  const restarted = await w.waitFor(
    () => w.traceEvents().find((ev) => ev.event === 'stats' && ev.hostPid === steps.reloaded.host && ev.serverPid && ev.serverPid !== steps.reloaded.server),
    60000,
    'a new server for the window whose server was killed',
  );
  steps.restarted = { host: restarted.hostPid, server: restarted.serverPid, live: await settledServers(1, 'one server after the restart') };
  log('restarted: ' + JSON.stringify(steps.restarted));
  // The user closes the last window (the tab, as a user does: the page unloads).
  await first.page.close({ runBeforeUnload: false });
  steps.allClosed = { live: await settledServers(0, 'no server once every window is closed') };
  log('all windows closed: ' + JSON.stringify(steps.allClosed));
  steps.trace = w.traceEvents().filter((e) => e.event !== 'stats');
  return steps;
});
