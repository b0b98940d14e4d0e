// One `capture serve` per window: started with vscode-languageclient, restarted when it dies,
// its stderr (the server's log) in the output channel, stopped when the window goes.
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { Located } from './locate';
import { Stats } from './stats';
import { trace } from './trace';

/** the server may die this many times within RESTART_SPAN_MS and be started again */
const MAX_RESTARTS = 5;
const RESTART_SPAN_MS = 3 * 60 * 1000;

export interface ServerSettings {
  located: Located;
  logLevel: string;
  windows: string;
  cwd: string | undefined;
}

function undoReason(reason: vscode.TextDocumentChangeReason | undefined): 'undo' | 'redo' | undefined {
  if (reason === vscode.TextDocumentChangeReason.Undo) return 'undo';
  if (reason === vscode.TextDocumentChangeReason.Redo) return 'redo';
  return undefined;
}

export class CaptureServer {
  private client: LanguageClient | undefined;
  private stopping = false;
  private deaths: number[] = [];
  private readonly readyListeners: Array<() => void> = [];

  constructor(
    private readonly settings: ServerSettings,
    private readonly output: vscode.OutputChannel,
    private readonly startedAt: number,
  ) {}

  onReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  get running(): boolean {
    return this.client !== undefined && this.client.state === State.Running;
  }

  async start(): Promise<void> {
    const { located, logLevel, windows, cwd } = this.settings;
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (windows.trim()) env.CAPTURE_WINDOWS = windows.trim();
    const serverOptions: ServerOptions = {
      command: located.command,
      args: ['serve', '--log-level', logLevel],
      transport: TransportKind.stdio,
      options: { env, cwd },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.closed(),
      },
      middleware: {
        // The undo notification follows the didChange it explains, so that the server has
        // seen the version it names.
        didChange: async (event, next) => {
          await next(event);
          const reason = undoReason(event.reason);
          if (reason && this.client) {
            await this.client.sendNotification('capture/undo', {
              uri: event.document.uri.toString(),
              version: event.document.version,
              reason,
            });
          }
        },
      },
    };
    this.client = new LanguageClient('agentCapture', 'agent-capture', serverOptions, clientOptions);
    this.client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        trace('ready', { sinceActivationMs: Date.now() - this.startedAt });
        this.output.appendLine(`capture serve is running (${located.command}, found via ${located.from})`);
        for (const listener of this.readyListeners) listener();
      }
    });
    await this.client.start();
  }

  private closed(): { action: CloseAction; handled: boolean } {
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.deaths = this.deaths.filter((t) => now - t < RESTART_SPAN_MS);
    this.deaths.push(now);
    if (this.deaths.length > MAX_RESTARTS) {
      this.output.appendLine(`capture serve died ${this.deaths.length} times in 3 minutes; not restarting it`);
      trace('gave-up');
      void vscode.window.showErrorMessage(
        'agent-capture: the capture server keeps stopping; see the agent-capture output. ' +
          'Run "agent-capture: Restart Server" to try again.',
      );
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.output.appendLine('capture serve stopped; starting it again');
    trace('restart');
    return { action: CloseAction.Restart, handled: true };
  }

  async stats(): Promise<Stats | undefined> {
    if (!this.client || !this.running) return undefined;
    return (await this.client.sendRequest('workspace/executeCommand', {
      command: 'capture.stats',
      arguments: [],
    })) as Stats;
  }

  async notify(method: string, params: object): Promise<void> {
    if (!this.client || !this.running) throw new Error('the capture server is not running');
    await this.client.sendNotification(method, params);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(2000);
      } catch (err) {
        this.output.appendLine(`stopping capture serve: ${String(err)}`);
      }
    }
  }
}
