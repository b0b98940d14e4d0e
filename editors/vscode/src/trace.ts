// An opt-in trace of the extension's life (activation, server ready, restarts), one JSON line
// per event, for the end-to-end tests and benchmarks: written only when the environment names
// a file in AGENT_CAPTURE_VSCODE_TRACE. Never sent anywhere.
import * as fs from 'fs';

const FILE = process.env.AGENT_CAPTURE_VSCODE_TRACE;

export function trace(event: string, fields: Record<string, unknown> = {}): void {
  if (!FILE) return;
  try {
    fs.appendFileSync(FILE, JSON.stringify({ event, t: Date.now(), hostPid: process.pid, ...fields }) + '\n');
  } catch {
    // a trace that cannot be written must not break the extension
  }
}
