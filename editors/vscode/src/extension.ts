// agent-capture for VS Code: starts `capture serve` for this window, forwards what only VS Code
// knows (undo and redo), shows today's figures, and offers the report, sync and agent hooks.
// No telemetry of its own: everything stays with the local `capture` program.
import * as vscode from 'vscode';
import { CommandContext, disableSync, enableSync, installHooks, showReport } from './commands';
import * as path from 'path';
import { prepareBundled } from './bundled';
import { Located, locateCapture } from './locate';
import { CaptureServer } from './server';
import { Stats, statusText, statusTooltip } from './stats';
import { trace } from './trace';

/** What other extensions (an agent's own) may call to report the edits they apply. */
export interface AgentCaptureApi {
  /** `capture/proposal` (see the README for its fields); send it after the edit is applied */
  reportProposal(params: object): Promise<void>;
  /** `capture/decision` for a proposal reported with `state: "shown"` */
  reportDecision(params: object): Promise<void>;
  /** `capture/testRun` */
  reportTestRun(params: object): Promise<void>;
  /** today's figures (`capture.stats`), or undefined while no server runs */
  stats(): Promise<Stats | undefined>;
}

const INSTALL_HINT = 'This package carries no server for this platform: install agent-capture from its repository (`pip install .` in a clone, or the wheel a release ships; `pipx install agent-capture` once it is published), or set "agentCapture.path", then run "agent-capture: Restart Server".';

let server: CaptureServer | undefined;
let located: Located | undefined;
let timer: NodeJS.Timeout | undefined;

function roots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

export function activate(context: vscode.ExtensionContext): AgentCaptureApi {
  const activatedAt = Date.now();
  trace('activate');
  const output = vscode.window.createOutputChannel('agent-capture');
  const status = vscode.window.createStatusBarItem('agentCapture.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'agent-capture';
  status.command = 'agentCapture.showReport';
  context.subscriptions.push(output, status);
  let warnedMissing = false;

  const missing = (): void => {
    output.appendLine(`capture was not found. ${INSTALL_HINT}`);
    void vscode.window
      .showErrorMessage(`agent-capture: the \`capture\` program was not found. ${INSTALL_HINT}`, 'Open Settings')
      .then((choice) => {
        if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentCapture.path');
      });
  };

  const refresh = async (): Promise<void> => {
    if (!server?.running) return;
    try {
      const stats = await server.stats();
      if (!stats) return;
      status.text = `$(pulse) ${statusText(stats)}`;
      status.tooltip = statusTooltip(stats);
      status.show();
      trace('stats', { text: status.text, proposals: stats.proposals, pending: stats.outcomes?.pending ?? 0, keptRate: stats.keptRate, serverPid: stats.server?.pid });
    } catch (err) {
      output.appendLine(`capture.stats: ${String(err)}`);
    }
  };

  let warnedPython = false;
  const start = async (): Promise<void> => {
    const config = vscode.workspace.getConfiguration('agentCapture');
    const configured = config.get<string>('path', '');
    located = undefined;
    let noPython: string | undefined;
    if (!configured.trim()) {
      // the server this package carries, unless "agentCapture.path" names another capture
      const bundled = await prepareBundled(context.extensionPath, path.join(context.globalStorageUri.fsPath, 'bin'), process.env);
      if (typeof bundled === 'string') noPython = bundled;
      else if (bundled) {
        located = { command: bundled.command, from: `bundled (python ${bundled.version})` };
        // `capture` for the integrated terminal, and for the agents started there
        context.environmentVariableCollection.prepend('PATH', path.dirname(bundled.command) + path.delimiter);
      }
      trace('bundled', { bundled, extensionPath: context.extensionPath });
    }
    if (!located) located = locateCapture(configured, roots(), process.env.PATH);
    if (!located && noPython) {
      status.hide();
      output.appendLine(noPython);
      if (!warnedPython) {
        warnedPython = true;
        void vscode.window.showErrorMessage(noPython);
      }
      return;
    }
    if (!located) {
      status.hide();
      trace('missing', { path: process.env.PATH, configured: config.get<string>('path', '') });
      // Once per window; the commands say it again when asked for.
      if (!warnedMissing) {
        warnedMissing = true;
        missing();
      }
      return;
    }
    const cwd = roots()[0];
    server = new CaptureServer(
      { located, logLevel: config.get<string>('logLevel', 'WARNING'), windows: config.get<string>('windows', ''), cwd },
      output,
      activatedAt,
    );
    server.onReady(() => void refresh());
    try {
      await server.start();
    } catch (err) {
      output.appendLine(`capture serve did not start: ${String(err)}`);
      void vscode.window.showErrorMessage(`agent-capture: capture serve did not start (${String(err)}); see the agent-capture output.`);
    }
    const seconds = Math.max(1, config.get<number>('statusBar.refreshSeconds', 15));
    if (timer) clearInterval(timer);
    timer = setInterval(() => void refresh(), seconds * 1000);
  };

  const restart = async (): Promise<void> => {
    if (timer) clearInterval(timer);
    timer = undefined;
    const old = server;
    server = undefined;
    await old?.stop();
    await start();
  };

  const ctx: CommandContext = {
    command: () => located?.command,
    env: () => process.env,
    output,
    missing,
  };
  const needServer = async (): Promise<CaptureServer> => {
    if (!server?.running) throw new Error('agent-capture: the capture server is not running');
    return server;
  };
  context.subscriptions.push(
    vscode.commands.registerCommand('agentCapture.showReport', () => showReport(ctx)),
    vscode.commands.registerCommand('agentCapture.refreshStats', refresh),
    vscode.commands.registerCommand('agentCapture.enableSync', () => enableSync(ctx)),
    vscode.commands.registerCommand('agentCapture.disableSync', () => disableSync(ctx)),
    vscode.commands.registerCommand('agentCapture.installHooks', () => installHooks(ctx)),
    vscode.commands.registerCommand('agentCapture.restartServer', () => {
      warnedMissing = false;
      warnedPython = false;
      return restart();
    }),
    vscode.commands.registerCommand('agentCapture.showLog', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (['path', 'windows', 'logLevel', 'statusBar.refreshSeconds'].some((k) => e.affectsConfiguration(`agentCapture.${k}`))) {
        void restart();
      }
    }),
    { dispose: () => timer && clearInterval(timer) },
  );
  void start();

  return {
    reportProposal: async (params) => (await needServer()).notify('capture/proposal', params),
    reportDecision: async (params) => (await needServer()).notify('capture/decision', params),
    reportTestRun: async (params) => (await needServer()).notify('capture/testRun', params),
    stats: async () => server?.stats(),
  };
}

export async function deactivate(): Promise<void> {
  if (timer) clearInterval(timer);
  timer = undefined;
  const old = server;
  server = undefined;
  trace('deactivate');
  await old?.stop();
}
