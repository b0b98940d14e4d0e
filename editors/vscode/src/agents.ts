// Which agents a workspace shows signs of, for the walkthrough's `capture install <agent>`.
import * as fs from 'fs';
import * as path from 'path';

/** agent name (as `capture install` spells it) -> files or folders that suggest it is used */
export const AGENT_MARKERS: Record<string, string[]> = {
  'claude-code': ['.claude', 'CLAUDE.md'],
  cursor: ['.cursor', '.cursorrules'],
  codex: ['.codex', 'AGENTS.md'],
  gemini: ['.gemini', 'GEMINI.md'],
  copilot: ['.github/copilot-instructions.md', '.github/hooks'],
};

export function agentsIn(root: string): string[] {
  return Object.entries(AGENT_MARKERS)
    .filter(([, markers]) => markers.some((m) => fs.existsSync(path.join(root, m))))
    .map(([agent]) => agent);
}
