/**
 * Tables the README states as a contract, checked against the code they describe: a script author
 * reads the README's exit codes, `agentq help exit-codes` prints the code's, and both must say the
 * same; the retry table must say what `classifyError` does.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/core/errors.js';
import { ERROR_CODE_TABLE } from '../../src/core/retry.js';
import { AGENTQ_BIN, makeCliHome } from '../support/cli.js';

const README = readFileSync(join(resolve(import.meta.dirname, '../..'), 'README.md'), 'utf8');

/** The rows of the first markdown table after `heading`, cells trimmed, header and rule left out. */
function tableAfter(heading: string): string[][] {
  const start = README.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const lines = README.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(first + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.slice(1, -1).split(' | ').map((c) => c.trim()));
  }
  return rows;
}

/** The `sh` code blocks of the README, as a user would paste them. */
const SH_BLOCKS = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

describe('README contract', () => {
  it('no sh example goes on with an option after a line that ended the command (a comment instead of a backslash)', () => {
    for (const block of SH_BLOCKS) {
      const lines = block.split('\n');
      lines.forEach((line, i) => {
        if (i > 0 && /^\s+--?[a-z]/.test(line)) expect(lines[i - 1]!.trimEnd().endsWith('\\'), `${lines[i - 1]}\n${line}`).toBe(true);
      });
    }
  });

  it('the submit example with a flag for every envelope field runs as written', () => {
    const block = SH_BLOCKS.find((b) => b.startsWith('agentq submit research_report:v3 \\\n  --queue research'))!;
    expect(block).toBeDefined();
    const home = makeCliHome('agentq-readme-');
    try {
      const script = `agentq() { ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENTQ_BIN)} "$@"; }\nset -e\n${block}`;
      const out = execFileSync('bash', ['-c', script], { env: home.env, encoding: 'utf8' });
      expect(out.trim()).toMatch(/^job_[0-9A-Z]{26}$/);
    } finally {
      home.cleanup();
    }
  });

  it("a describe view's line quoted in the README has the layout inspect and dlq show print: `label:  value`", () => {
    // Regression: the trace link was quoted as `trace link  https://…`, the layout dlq show had
    // before every describe view took inspect's `label:` (output/fields.ts).
    const labels = ['job', 'queue', 'state', 'error', 'dead at', 'worker version', 'attempts', 'trace', 'trace link', 'url', 'mode'];
    const stale = new RegExp(`\`(?:${labels.join('|')}) {2,}[^\`]*\``, 'g');
    expect(README.match(stale) ?? []).toEqual([]);
    expect('`trace link  https://…`'.match(stale), 'the check can fail').not.toBeNull();
  });

  it('the Exit codes table is what `agentq help exit-codes` prints (code, name, meaning)', () => {
    const rows = tableAfter('## Exit codes').map(([code, name, meaning]) => ({ code: Number(code), name, meaning: meaning!.replaceAll('`', '') }));
    expect(rows).toEqual(EXIT_CODE_DOCS.map((d) => ({ ...d })));
  });

  it('the retry table says which error codes are retried, as the code decides', () => {
    const rows = tableAfter('| code | retried | meaning |').filter(([code]) => /^`[A-Z0-9_]+`$/.test(code!));
    const readme = Object.fromEntries(rows.map(([code, retried]) => [code!.replaceAll('`', ''), retried === 'yes']));
    expect(readme).toEqual(Object.fromEntries(Object.entries(ERROR_CODE_TABLE).map(([code, e]) => [code, e.retryable])));
  });
});
