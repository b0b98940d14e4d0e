// The commands a user runs: the report in a webview, sync on/off for the workspace (the CLI's
// own wording, confirmed first), and `capture install <agent>` for the agents found.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { agentsIn, AGENT_MARKERS } from './agents';
import { errorLine, runCapture } from './cli';
import { webviewHtml } from './webview';

export interface CommandContext {
  /** the located `capture`, or undefined (then the missing-capture message is shown) */
  command(): string | undefined;
  env(): NodeJS.ProcessEnv;
  output: vscode.OutputChannel;
  missing(): void;
}

async function pickRoot(title: string): Promise<string | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const files = folders.filter((f) => f.uri.scheme === 'file');
  if (files.length === 0) {
    void vscode.window.showErrorMessage('agent-capture: open a folder first.');
    return undefined;
  }
  if (files.length === 1) return files[0].uri.fsPath;
  const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: title });
  return picked?.uri.fsPath;
}

export async function showReport(ctx: CommandContext): Promise<void> {
  const command = ctx.command();
  if (!command) return ctx.missing();
  const root = (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.scheme === 'file')?.uri.fsPath;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-capture-report-'));
  const file = path.join(dir, 'report.html');
  try {
    const result = await runCapture(command, ['report', '--html', file], root, ctx.env());
    if (result.code !== 0) {
      void vscode.window.showErrorMessage(`agent-capture: capture report failed: ${errorLine(result)}`);
      return;
    }
    const panel = vscode.window.createWebviewPanel('agentCapture.report', 'agent-capture report', vscode.ViewColumn.Active, {
      enableScripts: false,
      localResourceRoots: [],
    });
    panel.webview.html = webviewHtml(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runAndTell(ctx: CommandContext, command: string, args: string[], cwd: string): Promise<boolean> {
  // the token stays out of the log
  ctx.output.appendLine(`$ capture ${args.map((a, i) => (args[i - 1] === '--token' ? '***' : a)).join(' ')}`);
  const result = await runCapture(command, args, cwd, ctx.env());
  ctx.output.append(result.stdout);
  if (result.stderr) ctx.output.append(result.stderr);
  if (result.code !== 0) {
    void vscode.window.showErrorMessage(`agent-capture: ${errorLine(result)}`);
    return false;
  }
  const first = result.stdout.split('\n').find((l) => l.trim());
  void vscode.window.showInformationMessage(`agent-capture: ${first ?? 'done'}`);
  return true;
}

export async function enableSync(ctx: CommandContext): Promise<void> {
  const command = ctx.command();
  if (!command) return ctx.missing();
  const root = await pickRoot('Enable sync for which folder?');
  if (!root) return;
  const config = vscode.workspace.getConfiguration('agentCapture');
  const level = config.get<string>('sync.level', 'redacted');
  let url = config.get<string>('sync.url', '').trim();
  let token: string | undefined;
  const status = await runCapture(command, ['sync', 'status', '--json'], root, ctx.env());
  let configuredUrl: string | undefined;
  try {
    configuredUrl = (JSON.parse(status.stdout) as { url?: string | null }).url ?? undefined;
  } catch {
    configuredUrl = undefined;
  }
  if (!configuredUrl) {
    // The first opt-in needs the collector and a token (never kept in settings).
    url ||= (await vscode.window.showInputBox({
      title: 'agent-capture: collector URL',
      prompt: "Your team collector's base URL",
      placeHolder: 'https://capture.example.com',
      ignoreFocusOut: true,
    })) ?? '';
    if (!url) return;
    token = await vscode.window.showInputBox({
      title: 'agent-capture: ingest token',
      prompt: "An ingest token from the collector's admin",
      password: true,
      ignoreFocusOut: true,
    });
    if (!token) return;
  }
  const choice = await vscode.window.showWarningMessage(
    `Upload anonymized episodes of ${root} to your team's collector?`,
    {
      modal: true,
      detail:
        `Level "${level}": ${level === 'metrics' ? 'figures only, no code' : level === 'full' ? 'code as written, secrets scrubbed' : 'code with identifiers and secrets redacted'}. ` +
        `Collector: ${url || configuredUrl}. ` +
        'Nothing is sent yet: `capture sync preview` shows exactly what would go.',
    },
    'Enable Sync',
  );
  if (choice !== 'Enable Sync') return;
  const args = ['sync', 'enable', '--workspace', root, '--level', level];
  if (url) args.push('--url', url);
  if (token) args.push('--token', token);
  await runAndTell(ctx, command, args, root);
}

export async function disableSync(ctx: CommandContext): Promise<void> {
  const command = ctx.command();
  if (!command) return ctx.missing();
  const root = await pickRoot('Disable sync for which folder?');
  if (!root) return;
  const choice = await vscode.window.showWarningMessage(
    `Stop uploading episodes of ${root}?`,
    { modal: true, detail: 'Episodes of this workspace still queued are dropped; nothing more of it is sent.' },
    'Disable Sync',
  );
  if (choice !== 'Disable Sync') return;
  await runAndTell(ctx, command, ['sync', 'disable', '--workspace', root], root);
}

export async function installHooks(ctx: CommandContext): Promise<void> {
  const command = ctx.command();
  if (!command) return ctx.missing();
  const root = await pickRoot('Install agent hooks for which folder?');
  if (!root) return;
  const found = new Set(agentsIn(root));
  const items = Object.keys(AGENT_MARKERS).map((agent) => ({
    label: agent,
    description: found.has(agent) ? 'found in this workspace' : '',
    picked: found.has(agent),
  }));
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: 'capture install <agent>',
    placeHolder: found.size ? 'The agents found in this workspace are selected' : 'No agent found here; pick the ones you use',
  });
  for (const item of picked ?? []) {
    if (!(await runAndTell(ctx, command, ['install', item.label], root))) break;
  }
}
