// What the status bar says about today's figures (the `capture.stats` command's answer).

export interface Stats {
  date?: string;
  proposals?: number;
  keptRate?: number | null;
  outcomes?: Record<string, number>;
  testRuns?: { total?: number; passed?: number; failed?: number };
  line?: string;
  server?: { pid?: number; version?: string };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "33% kept · 3 proposals · 1 test", or "no proposals today". */
export function statusText(stats: Stats): string {
  const proposals = stats.proposals ?? 0;
  const tests = stats.testRuns?.total ?? 0;
  if (proposals === 0 && tests === 0) return 'capture: no proposals today';
  const rate =
    typeof stats.keptRate === 'number' ? `${Math.round(stats.keptRate * 100)}% kept` : '–% kept';
  return `capture: ${rate} · ${plural(proposals, 'proposal', 'proposals')} · ${plural(tests, 'test', 'tests')}`;
}

export function statusTooltip(stats: Stats): string {
  const o = stats.outcomes ?? {};
  const parts = ['kept', 'edited', 'undone', 'rejected', 'lost', 'pending']
    .filter((k) => (o[k] ?? 0) > 0)
    .map((k) => `${o[k]} ${k}`);
  const runs = stats.testRuns ?? {};
  const lines = [
    `agent-capture, today${stats.date ? ` (${stats.date})` : ''}`,
    parts.length ? parts.join(', ') : 'no outcomes yet',
    `test runs: ${runs.total ?? 0} (${runs.passed ?? 0} passed, ${runs.failed ?? 0} failed)`,
  ];
  if (stats.line) lines.push(stats.line);
  lines.push('Click for the report');
  return lines.join('\n');
}
