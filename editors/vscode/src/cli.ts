// Running one `capture` subcommand (report, sync, install) and keeping its answer.
import { execFile } from 'child_process';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCapture(command: string, args: string[], cwd: string | undefined, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 120_000, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && code !== 0 ? String(err.message) : '') });
    });
  });
}

/** The one line a failed command said (its last non-empty stderr line). */
export function errorLine(result: CliResult): string {
  const lines = result.stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.length ? lines[lines.length - 1] : `exit code ${result.code}`;
}
