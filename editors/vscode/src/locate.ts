// Where the `capture` program is: the configured path, else the workspace's virtual
// environment, else PATH. Plain functions over the file system, so that they hold no state.
import * as fs from 'fs';
import * as path from 'path';

export interface Located {
  command: string;
  /** how it was found, for the log: "setting", "workspace venv" or "PATH" */
  from: string;
}

const VENVS = ['.venv', 'venv', 'env'];

function executable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function names(): string[] {
  return process.platform === 'win32' ? ['capture.exe', 'capture.cmd', 'capture'] : ['capture'];
}

function inVenv(root: string): string | undefined {
  const bin = process.platform === 'win32' ? 'Scripts' : 'bin';
  for (const venv of VENVS) {
    for (const name of names()) {
      const file = path.join(root, venv, bin, name);
      if (executable(file)) return file;
    }
  }
  return undefined;
}

function onPath(envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const name of names()) {
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  }
  return undefined;
}

/** The first `capture` found, or undefined. A configured path that does not exist is not
 * silently replaced by another one: the user asked for that one. */
export function locateCapture(
  configured: string,
  roots: readonly string[],
  envPath: string | undefined,
): Located | undefined {
  if (configured.trim()) {
    const file = configured.trim().replace(/^~(?=$|[\\/])/, process.env.HOME ?? '~');
    return executable(file) ? { command: file, from: 'setting' } : undefined;
  }
  for (const root of roots) {
    const file = inVenv(root);
    if (file) return { command: file, from: 'workspace venv' };
  }
  const file = onPath(envPath);
  return file ? { command: file, from: 'PATH' } : undefined;
}
