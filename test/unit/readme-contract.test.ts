/**
 * Tables the README states as a contract, checked against the code they describe: a script author
 * reads the README's exit codes, `agentq help exit-codes` prints the code's, and both must say the
 * same; the retry table must say what `classifyError` does.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/core/errors.js';
import { ERROR_CODE_TABLE } from '../../src/core/retry.js';

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

describe('README contract', () => {
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
