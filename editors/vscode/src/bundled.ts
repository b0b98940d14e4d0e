// The server this extension carries (per-platform packages): agent-capture and its libraries in
// bundled/libs, run by a Python >= 3.11 (the interpreter the Python extension selected, else
// python3 on PATH) through a launcher on a stable per-user path, ~/.local/bin/capture, which
// the integrated terminal and agents' hooks (`capture hook <agent>`) use as well.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

/** The line that marks a launcher (ours, or `capture install`'s) from a `capture` the user installed. */
export const MARKER = '# agent-capture launcher';

export interface Bundled {
  /** the launcher to run as `capture` */
  command: string;
  python: string;
  version: string;
}

export interface Manifest {
  target: string;
  pythons: string[];
}

export function readManifest(extensionPath: string): Manifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(extensionPath, 'bundled', 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

export function launcherDir(env: NodeJS.ProcessEnv): string {
  for (const name of ['CAPTURE_BIN_DIR', 'XDG_BIN_HOME']) {
    const value = env[name];
    if (value && path.isAbsolute(value)) return value;
  }
  return path.join(env.HOME || os.homedir(), '.local', 'bin');
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function launcherText(python: string, libs: string[]): string {
  if (process.platform === 'win32') {
    return `@rem ${MARKER}\r\n@set "PYTHONPATH=${libs.join(';')};%PYTHONPATH%"\r\n@"${python}" -P -m capture %*\r\n`;
  }
  return [
    '#!/bin/sh',
    MARKER,
    '# Rewritten by the agent-capture extension and by `capture install`; safe to delete.',
    `PYTHONPATH=${quote(libs.join(path.delimiter))}"\${PYTHONPATH:+:$PYTHONPATH}"`,
    'export PYTHONPATH',
    `exec ${quote(python)} -P -m capture "$@"`,
    '',
  ].join('\n');
}

function isOurs(file: string): boolean {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(0, 3).some((l) => l.includes(MARKER));
  } catch {
    return true; // absent: ours to write
  }
}

/** The interpreter's own path and version, or undefined. */
function probe(python: string, env: NodeJS.ProcessEnv): Promise<{ executable: string; version: [number, number] } | undefined> {
  return new Promise((resolve) => {
    execFile(python, ['-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'], { env, timeout: 20_000 }, (err, stdout) => {
      if (err) return resolve(undefined);
      const [executable, version] = String(stdout).trim().split('\n');
      const [major, minor] = (version ?? '').split('.').map(Number);
      resolve(executable && major ? { executable: executable.trim(), version: [major, minor] } : undefined);
    });
  });
}

/** The Python extension's selected interpreter, when it is installed. */
async function selectedPython(): Promise<string | undefined> {
  try {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (!ext) return undefined;
    const api = (ext.isActive ? ext.exports : await ext.activate()) as {
      environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): unknown;
        resolveEnvironment(env: unknown): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
      };
    };
    const envs = api?.environments;
    if (!envs) return undefined;
    const resolved = await envs.resolveEnvironment(envs.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri));
    return resolved?.executable?.uri?.fsPath;
  } catch {
    return undefined;
  }
}

/**
 * The bundled server ready to run: a launcher written for the first Python >= 3.11 whose
 * version the package carries libraries for. undefined: this package carries no server.
 * A string: why it cannot run (for the one notification).
 */
export async function prepareBundled(extensionPath: string, privateBin: string, env: NodeJS.ProcessEnv): Promise<Bundled | string | undefined> {
  const manifest = readManifest(extensionPath);
  if (!manifest) return undefined;
  const libsRoot = path.join(extensionPath, 'bundled', 'libs');
  const tried: string[] = [];
  const candidates = [await selectedPython(), 'python3', 'python'].filter((c): c is string => !!c);
  for (const candidate of candidates) {
    const found = await probe(candidate, env);
    if (!found) continue;
    const [major, minor] = found.version;
    const version = `${major}.${minor}`;
    tried.push(`${found.executable} (${version})`);
    // the versions the package carries (a folder of one version's own files may be empty, and a
    // .vsix keeps no empty folder)
    if (major !== 3 || minor < 11 || !manifest.pythons.includes(version)) continue;
    const libs = [path.join(libsRoot, `cp${major}${minor}`), path.join(libsRoot, 'common')];
    const name = process.platform === 'win32' ? 'capture.cmd' : 'capture';
    let dir = launcherDir(env);
    // a `capture` the user installed there stays theirs: ours goes to the extension's storage
    if (!isOurs(path.join(dir, name))) dir = privateBin;
    const file = path.join(dir, name);
    fs.mkdirSync(dir, { recursive: true });
    const text = launcherText(found.executable, libs);
    let current: string | undefined;
    try {
      current = fs.readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== text) {
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, text, { mode: 0o755 });
      fs.renameSync(temp, file);
    }
    return { command: file, python: found.executable, version };
  }
  const wanted = manifest.pythons.join(', ');
  const seen = tried.length ? ` Found: ${tried.join(', ')}.` : ' None was found.';
  return `agent-capture needs Python ${wanted} to run its bundled server.${seen} Install one (or select one with the Python extension), then run "agent-capture: Restart Server".`;
}
