/**
 * `agentq dlq …` end to end: the built CLI against an SQLite store seeded
 * through the backend contract. What an on-call engineer sees and what
 * scripts rely on: filters, paging, sanitised output, plans, guards, exit
 * codes, the lock, the ledger, resume and the audit.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { makeCliHome, parseNdjson, runCli, runCliOk, spawnCli, collect, type CliHome } from '../support/cli.js';
import { HOSTILE_STRINGS, hasEscapeByte } from '../support/hostile.js';
import { seedDead } from '../dlq/seed.js';

let home: CliHome;
let backend: Backend;
const now = () => Date.now();

beforeAll(async () => {
  home = makeCliHome('agentq-e2e-dlq-');
  backend = await openBackend(home.dataUrl);
});

afterAll(async () => {
  await backend?.close();
  home?.cleanup();
});

const ok = (args: string[], expectCode = 0) => runCliOk(home, args, { expectCode });

describe('dlq list / summary / show / export', () => {
  let q429: string[];
  let qVal: string[];
  let hostile: string;
  let malformed: string;
  beforeAll(async () => {
    q429 = await seedDead(backend, now, Array.from({ length: 7 }, () => ({ queue: 'triage', code: 'PROVIDER_429', tenant: 'acme' })));
    qVal = await seedDead(backend, now, Array.from({ length: 3 }, () => ({ queue: 'triage', code: 'VALIDATION', tenant: 'globex' })));
    hostile = (await seedDead(backend, now, [{ queue: 'triage', code: 'TOOL_ERROR', message: HOSTILE_STRINGS.map((h) => h.value).join(' | '), input: `line1\n\x1b]52;c;cm0gLXJmIH4K\x07line2` }]))[0]!;
    malformed = (await seedDead(backend, now, [{ queue: 'triage', code: 'TOOL_ERROR' }]))[0]!;
    // A corrupted stored record (it happens: a bad migration, a foreign writer): written straight into the file.
    const db = new Database(home.dataUrl.slice('sqlite:'.length));
    db.prepare('UPDATE jobs SET doc = ? WHERE id = ?').run('{"truncated": ', malformed);
    db.close();
  });

  it('filters by queue, error code (repeatable) and tenant, in plain output', async () => {
    const r = await ok(['dlq', 'list', '--queue', 'triage', '--error-code', 'PROVIDER_429', '--error-code', 'VALIDATION']);
    const ids = r.stdout.trim().split('\n').map((l) => l.split('\t')[0]);
    expect(ids.sort()).toEqual([...q429, ...qVal].sort());
    // error codes are upper case: one typed in lower case selects the same entries, not silently none
    const lower = await ok(['dlq', 'list', '--queue', 'triage', '--error-code', 'provider_429', '--error-code', 'Validation']);
    expect(lower.stdout.trim().split('\n').map((l) => l.split('\t')[0]).sort()).toEqual([...q429, ...qVal].sort());
    const globex = await ok(['dlq', 'list', '--queue', 'triage', '--tenant', 'globex', '-o', 'ndjson']);
    expect(parseNdjson(globex.stdout).map((e) => (e as { job_id: string }).job_id).sort()).toEqual([...qVal].sort());
  });

  it('pages with a cursor, and --all streams every entry as NDJSON', async () => {
    const p1 = await ok(['dlq', 'list', '--queue', 'triage', '--limit', '4', '-o', 'json']);
    const page1 = JSON.parse(p1.stdout) as { items: Array<{ job_id: string }>; next_cursor: string };
    expect(page1.items).toHaveLength(4);
    const p2 = await ok(['dlq', 'list', '--queue', 'triage', '--limit', '4', '--cursor', page1.next_cursor, '-o', 'json']);
    const page2 = JSON.parse(p2.stdout) as { items: Array<{ job_id: string }> };
    expect(page2.items[0]!.job_id > page1.items[3]!.job_id).toBe(true);
    const all = await ok(['dlq', 'list', '--queue', 'triage', '--all']);
    expect(parseNdjson(all.stdout)).toHaveLength(12);
    const plain = await ok(['dlq', 'list', '--queue', 'triage', '--limit', '4']);
    expect(plain.stderr).toContain(`--cursor ${page1.next_cursor}`);
    // a cursor that is not one is refused (it paged from an arbitrary point), as `list` does
    const bad = await runCli(home, ['dlq', 'list', '--queue', 'triage', '--cursor', 'garbage']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--cursor must be the cursor printed after the previous page');
    expect((await runCli(home, ['dlq', 'runs', '--cursor', 'garbage'])).code).toBe(2);
    // regression: Number() read 0x10 as 16 (and 1e1 as 10) where every other count flag takes digits only
    for (const args of [['dlq', 'runs', '--limit', '0x10'], ['dlq', 'runs', '--limit', '1e1'], ['sqs', 'custody', '--limit', '0x10'], ['sqs', 'sweep', '--max', '0x10', '--yes']]) {
      const r = await runCli(home, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/must be a whole number/);
    }
  });

  it.each([
    [['--since', '6'], /--since "6" is neither a duration nor an ISO-8601 time/],
    [['--min-attempts', '3', '--max-attempts', '1'], /--min-attempts \(3\) must not be greater than --max-attempts \(1\)/],
    [['--expired', '--not-expired'], /exclude each other/],
    [['--reason', 'bored'], /the dead reason must be one of/],
    [['--limit', '5000'], /--limit "5000" must be a whole number from 1 to 1000/],
  ])('an invalid filter %j exits 2 naming the rule', async (args, rule) => {
    const r = await runCli(home, ['dlq', 'list', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(rule);
  });

  it('show gives what the dead job\'s attempts reported spending (usage), in total and per attempt', async () => {
    await backend.submit({ workflow: 'chat:v1', queue: 'spend', max_attempts: 1 });
    const [lease] = await backend.claim({ queue: 'spend', workerId: 'w', max: 1, leaseMs: 60_000 });
    await backend.addUsage(lease!, { tokens: 4200, cost_usd: 0.063 });
    await backend.fail(lease!, { code: 'BUDGET_EXCEEDED', message: 'over budget', retryable: false });
    const table = await ok(['dlq', 'show', lease!.jobId, '-o', 'table']);
    expect(table.stdout).toMatch(/^usage: +4200 tokens, \$0\.063$/m);
    expect(table.stdout).toMatch(/#1 .* BUDGET_EXCEEDED: over budget \(worker w .*\) spent 4200 tokens, \$0\.063$/m);
    expect((await ok(['dlq', 'show', lease!.jobId])).stdout).toContain('usage\t4200 tokens, $0.063\n');
  });

  it('never lets hostile text reach the terminal (list, wide table, show)', async () => {
    for (const args of [['dlq', 'list', '--queue', 'triage'], ['dlq', 'list', '--queue', 'triage', '-o', 'wide'], ['dlq', 'show', hostile]]) {
      const r = await ok(args);
      expect(hasEscapeByte(r.stdoutBytes), args.join(' ')).toBe(false);
      expect(r.stdout).toContain('\\x1b');
    }
    const show = await ok(['dlq', 'show', hostile, '-o', 'table']);
    // Newlines survive in a preview shown on its own; the escape sequence does not.
    expect(show.stdout).toContain('input (preview):\n  line1\n  \\x1b]52;c;cm0gLXJmIH4K\\x07line2');
    // Plain output keeps one `label<TAB>value` line: the newline is made visible too.
    const plain = await ok(['dlq', 'show', hostile]);
    expect(plain.stdout).toContain('input\tline1\\n\\x1b]52;c;cm0gLXJmIH4K\\x07line2\n');
  });

  it('show --raw writes the exact stored bytes when not on a terminal', async () => {
    const r = await ok(['dlq', 'show', hostile, '--raw']);
    expect(Buffer.compare(r.stdoutBytes, Buffer.from((await backend.dlqRaw(hostile))!))).toBe(0);
    const missing = await runCli(home, ['dlq', 'show', 'job_01ZZZZZZZZZZZZZZZZZZZZZZZZ']);
    expect(missing.code).toBe(5);
  });

  it('regression: an id that is not a job or run id is bad usage (exit 2, naming the form), as inspect says, not "not found" (5)', async () => {
    const cases: Array<[string[], string]> = [
      [['dlq', 'show', 'nonsense'], '"nonsense" is not a job id and no DLQ entry has it: job ids look like job_ followed by 26 ULID characters'],
      [['dlq', 'runs', 'show', 'nonsense'], '"nonsense" is not a run id: run ids look like run_ followed by 26 ULID characters'],
      // looked up as it is (a custody entry keeps any id), but an empty or blank one is no id at all
      [['dlq', 'show', ''], 'job id must be 1-1024 characters, not all blank, without control characters (such as job_01JD3K…), got ""'],
      [['dlq', 'show', '\t', '--raw'], 'job id must be 1-1024 characters, not all blank, without control characters (such as job_01JD3K…), got "\\t"'],
      [['dlq', 'redrive', '--resume', 'nonsense'], '"nonsense" is not a run id'],
      [['dlq', 'purge', '--resume', 'nonsense', '--yes'], '"nonsense" is not a run id'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(home, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`error: ${message}`);
    }
    // A well-formed id that names nothing is still "not found".
    expect((await runCli(home, ['dlq', 'runs', 'show', 'run_01ZZZZZZZZZZZZZZZZZZZZZZZZ'])).code).toBe(5);
  });

  it('shows a malformed entry as malformed; bulk actions never move or delete it', async () => {
    const list = await ok(['dlq', 'list', '--queue', 'triage', '--error-code', 'TOOL_ERROR', '-o', 'ndjson']);
    const entry = parseNdjson(list.stdout).find((e) => (e as { job_id: string }).job_id === malformed) as { malformed: string };
    expect(entry.malformed).toMatch(/not valid JSON/);
    const show = await ok(['dlq', 'show', malformed]);
    expect(show.stdout).toMatch(/MALFORMED/);
    for (const action of ['redrive', 'purge']) {
      const plan = await ok(['dlq', action, '--queue', 'triage', '--error-code', 'TOOL_ERROR', '--dry-run', '-o', 'json']);
      const items = (JSON.parse(plan.stdout) as { items: Array<{ job_id: string; verdict: string }> }).items;
      expect(items.find((i) => i.job_id === malformed)!.verdict).toBe('skip:malformed');
    }
    await ok(['dlq', 'purge', '--queue', 'triage', '--error-code', 'TOOL_ERROR', '--yes', '--reason', 'cleanup']);
    expect(await backend.dlqGet(hostile)).toBeNull();
    expect((await backend.dlqGet(malformed))!.malformed).not.toBeNull();
  });

  it('--partial with --no-partial is refused (exit 2) on every selecting command, as --expired --not-expired is', async () => {
    for (const cmd of [['list'], ['summary'], ['export'], ['redrive', '--dry-run'], ['purge', '--dry-run'], ['expire', '--dry-run']]) {
      for (const flags of [['--partial', '--no-partial'], ['--no-partial', '--partial']]) {
        const r = await runCli(home, ['dlq', ...cmd, '--queue', 'triage', ...flags]);
        expect(r.code, `${cmd.join(' ')} ${flags.join(' ')}`).toBe(2);
        expect(r.stderr).toMatch(/--partial and --no-partial exclude each other: give one/);
      }
    }
    await ok(['dlq', 'list', '--queue', 'triage', '--no-partial']);
  });

  it('summary groups by error code and tenant with counts', async () => {
    const r = await ok(['dlq', 'summary', '--queue', 'triage', '--by', 'error_code,tenant', '-o', 'json']);
    const s = JSON.parse(r.stdout) as { total: number; groups: Array<{ key: Record<string, string>; count: number; expired: number; partial: number }> };
    expect(s.groups[0]).toMatchObject({ key: { error_code: 'PROVIDER_429', tenant: 'acme' }, count: 7, expired: 0, partial: 0 });
    expect(s.groups.find((g) => g.key.error_code === 'VALIDATION')!.count).toBe(3);
    const bad = await runCli(home, ['dlq', 'summary', '--by', 'colour']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--by "colour"/);
  });

  it('export writes the selection as NDJSON', async () => {
    const r = await ok(['dlq', 'export', '--queue', 'triage', '--error-code', 'VALIDATION']);
    const rows = parseNdjson(r.stdout) as Array<{ job_id: string; error_code: string; job: unknown }>;
    expect(rows.map((x) => x.job_id).sort()).toEqual([...qVal].sort());
    expect(rows.every((x) => x.error_code === 'VALIDATION' && x.job !== null)).toBe(true);
  });
});

describe('dlq redrive', () => {
  let ids: string[];
  let partial: string;
  beforeAll(async () => {
    ids = await seedDead(backend, now, Array.from({ length: 30 }, () => ({ queue: 'redrive', code: 'PROVIDER_429' })));
    partial = (await seedDead(backend, now, [{ queue: 'redrive', code: 'PROVIDER_429', withEffect: true }]))[0]!;
  });

  it('refuses a bulk action with no selector unless --all (exit 2)', async () => {
    const r = await runCli(home, ['dlq', 'redrive', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no selector would act on the whole DLQ/);
  });

  it('-o json prints one document also when the selection is empty: a run record with no run and zero counts (redrive, purge, expire)', async () => {
    for (const action of ['redrive', 'purge', 'expire']) {
      const r = await ok(['dlq', action, '--queue', 'nothing-here', '--yes', '-o', 'json']);
      expect(r.stderr).toContain(`nothing to ${action}`);
      expect(JSON.parse(r.stdout)).toMatchObject({ run_id: null, queue: 'nothing-here', action, status: 'completed', counts: { planned: 0, moved: 0, skipped: 0, failed: 0 } });
    }
    // Regression: the dry run's plan named no queue either ("queue": null) though --queue named one.
    for (const action of ['redrive', 'purge', 'expire']) {
      const dry = await ok(['dlq', action, '--queue', 'nothing-here', '--dry-run', '-o', 'json']);
      expect(JSON.parse(dry.stdout)).toMatchObject({ kind: 'agentq.plan', action, queue: 'nothing-here', totals: { total: 0 } });
      expect((await ok(['dlq', action, '--queue', 'nothing-here', '--dry-run'])).stderr).toContain('plan: 0 selected (queue nothing-here)');
    }
    // Without --queue, a selection that matches nothing names no queue: it was not limited to one.
    const any = await ok(['dlq', 'purge', '--error-code', 'NO_SUCH_CODE', '--yes', '-o', 'json']);
    expect(JSON.parse(any.stdout)).toMatchObject({ run_id: null, queue: null, action: 'purge', status: 'completed' });
    // The same keys as a run's record.
    const keys = Object.keys(JSON.parse((await ok(['dlq', 'purge', '--queue', 'nothing-here', '--yes', '-o', 'json'])).stdout) as object).sort();
    expect(keys).toEqual(['action', 'context', 'counts', 'created_at', 'filters', 'options', 'queue', 'reason', 'run_id', 'status', 'updated_at', 'user']);
  });

  it('without a terminal, a redrive needs --yes (exit 3) and changes nothing', async () => {
    const r = await runCli(home, ['dlq', 'redrive', '--queue', 'redrive']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/add --yes/);
    expect((await backend.dlqGet(ids[0]!))).not.toBeNull();
  });

  it('--include-partial: the dry run lists the effects of each partial job first; applying needs --force', async () => {
    const d = await ok(['dlq', 'redrive', '--queue', 'redrive', '--include-partial', '--dry-run']);
    expect(d.stderr).toContain(partial);
    expect(d.stderr).toMatch(/effect send-email: started \S+Z, not recorded done \(idempotency key /);
    const r = await runCli(home, ['dlq', 'redrive', '--queue', 'redrive', '--include-partial', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--include-partial .* applying it also needs --force/);
    expect(r.stderr).toMatch(/hint: Check the effects listed by a --dry-run first/);
    expect((await backend.dlqGet(partial))).not.toBeNull();
    const f = await ok(['dlq', 'redrive', '--queue', 'redrive', '--include-partial', '--force', '--dry-run']);
    expect(f.stderr).toContain(partial);
  });

  // Regression: a done effect was listed as "done since <its start>, done <its end>".
  it('--include-partial lists a done effect with when it started and when it was done', async () => {
    const { job } = await backend.submit({ workflow: 'research_report:v3', queue: 'done-effect', tenant_id: 'acme', max_attempts: 1 });
    const [lease] = await backend.claim({ queue: 'done-effect', workerId: 'seeder', workerVersion: 'v1.0.0', max: 1, leaseMs: 600_000 });
    await backend.beginEffect(lease!, 'send-email');
    await backend.finishEffect(lease!, 'send-email', 'receipt-1');
    await backend.fail(lease!, { code: 'PERMISSION', message: 'refused', retryable: false, workerVersion: 'v1.0.0' });
    const d = await ok(['dlq', 'redrive', '--queue', 'done-effect', '--include-partial', '--dry-run']);
    expect(d.stderr).toContain(job.job_id);
    expect(d.stderr).toMatch(/effect send-email: started \S+Z, done \S+Z \(idempotency key /);
  });

  it('a dry run prints the plan with totals and changes nothing', async () => {
    const r = await ok(['dlq', 'redrive', '--queue', 'redrive', '--dry-run', '-o', 'json']);
    const plan = JSON.parse(r.stdout) as { totals: Record<string, number>; items: unknown[] };
    expect(plan.totals).toMatchObject({ total: 31, acting: 30, redrive: 30, 'skip:partial': 1 });
    const table = await ok(['dlq', 'redrive', '--queue', 'redrive', '--dry-run', '-o', 'table']);
    expect(table.stdout).toMatch(/plan: 31 selected: 30 redrive, 1 skip:partial \(queue redrive\)/);
    expect((await backend.dlqGet(ids[0]!))).not.toBeNull();
  });

  it('a read-only context refuses the redrive (exit 4) but allows the dry run', async () => {
    writeFileSync(join(home.dir, '.agentq.json'), JSON.stringify({ contexts: { ro: { url: home.dataUrl, readOnly: true } } }));
    try {
      const r = await runCli(home, ['--context', 'ro', 'dlq', 'redrive', '--queue', 'redrive', '--yes']);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/read-only/);
      await ok(['--context', 'ro', 'dlq', 'redrive', '--queue', 'redrive', '--dry-run']);
    } finally {
      writeFileSync(join(home.dir, '.agentq.json'), '{}');
    }
  });

  it("a context's queue scopes a bulk action but is not a selector: with no selector, purge, redrive and expire still need --all (exit 2)", async () => {
    const [kept] = await seedDead(backend, now, [{ queue: 'ctxq', code: 'PROVIDER_429' }]);
    writeFileSync(join(home.dir, '.agentq.json'), JSON.stringify({ contexts: { research: { url: home.dataUrl, queue: 'ctxq' } } }));
    try {
      for (const action of ['purge', 'redrive', 'expire']) {
        const r = await runCli(home, ['--context', 'research', 'dlq', action, '--yes']);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(/would act on the whole DLQ of queue ctxq \(the context's queue\)/);
        expect(r.stderr).toMatch(/--all/);
      }
      expect(await backend.dlqGet(kept!)).not.toBeNull();
      // a selector, or --all, goes ahead within the context's queue
      const dry = await ok(['--context', 'research', 'dlq', 'purge', '--error-code', 'PROVIDER_429', '--dry-run', '-o', 'json']);
      expect((JSON.parse(dry.stdout) as { queue: string; totals: { acting: number } })).toMatchObject({ queue: 'ctxq', totals: { acting: 1 } });
      const all = await ok(['--context', 'research', 'dlq', 'purge', '--all', '--dry-run', '-o', 'json']);
      expect((JSON.parse(all.stdout) as { queue: string }).queue).toBe('ctxq');
    } finally {
      writeFileSync(join(home.dir, '.agentq.json'), '{}');
    }
  });

  it('a lock held by a live process refuses the redrive with exit 75 naming the holder', async () => {
    await backend.acquireLock('redrive', { owner: `carol@elsewhere pid ${process.pid}`, host: 'elsewhere', pid: process.pid, run_id: null, acquired_at: '2026-11-29T03:12:00.000Z' });
    try {
      const r = await runCli(home, ['dlq', 'redrive', '--queue', 'redrive', '--yes']);
      expect(r.code).toBe(75);
      expect(r.stderr).toMatch(/carol@elsewhere pid \d+ since 2026-11-29T03:12:00.000Z/);
      const b = await runCli(home, ['dlq', 'redrive', '--queue', 'redrive', '--yes', '--break-lock']);
      expect(b.code).toBe(2); // another host: cannot be checked, needs --force as well
      expect(b.stderr).toMatch(/cannot be checked from here/);
    } finally {
      await backend.breakLock('redrive');
    }
  });

  it('--plan-out saves the frozen plan; --plan applies exactly it, re-checking each job', async () => {
    const planFile = join(home.dir, 'plan.json');
    await ok(['dlq', 'redrive', '--queue', 'redrive', '--dry-run', '--plan-out', planFile]);
    const saved = JSON.parse(readFileSync(planFile, 'utf8')) as { items: Array<{ job_id: string }> };
    expect(saved.items).toHaveLength(31);
    // A job that dies after the plan was saved is not in it, and is left alone.
    const [late] = await seedDead(backend, now, [{ queue: 'redrive', code: 'PROVIDER_429' }]);
    const wrong = await runCli(home, ['dlq', 'purge', '--plan', planFile, '--yes']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/is a redrive plan/);
    const r = await ok(['dlq', 'redrive', '--plan', planFile, '--yes', '--reason', 'quota raised', '--rate', '0', '-o', 'json']);
    const run = JSON.parse(r.stdout) as { run_id: string; status: string; counts: Record<string, number> };
    expect(run).toMatchObject({ status: 'completed', counts: { planned: 0, moved: 30, skipped: 1, failed: 0 } });
    for (const id of ids) expect((await backend.get(id))!.lineage).toMatchObject({ redrive_count: 1, redrive_run: run.run_id });
    expect((await backend.get(partial))!.state).toBe('dead');
    expect((await backend.get(late!))!.state).toBe('dead');

    // The audit: listed by `dlq runs`, detailed with its ledger by `dlq runs show`.
    const runs = await ok(['dlq', 'runs', '--queue', 'redrive', '-o', 'json']);
    const listed = (JSON.parse(runs.stdout) as { items: Array<{ run_id: string; reason: string; user: string }> }).items;
    expect(listed[0]).toMatchObject({ run_id: run.run_id, reason: 'quota raised' });
    expect(listed[0]!.user).toMatch(/@/);
    const show = await ok(['dlq', 'runs', 'show', run.run_id, '-o', 'ndjson']);
    const lines = parseNdjson(show.stdout) as Array<{ type: string; status?: string }>;
    expect(lines[0]).toMatchObject({ type: 'run', run_id: run.run_id });
    expect(lines.filter((l) => l.type === 'ledger_item' && l.status === 'moved')).toHaveLength(30);
    // -o json: one document, as every other -o json
    const doc = JSON.parse((await ok(['dlq', 'runs', 'show', run.run_id, '-o', 'json'])).stdout) as { run: { run_id: string }; items: Array<{ status: string }> };
    expect(doc.run.run_id).toBe(run.run_id);
    expect(doc.items.filter((i) => i.status === 'moved')).toHaveLength(30);
    expect((JSON.parse((await ok(['dlq', 'runs', 'show', run.run_id, '--status', 'failed', '-o', 'json'])).stdout) as { items: unknown[] }).items).toEqual([]);
    const human = await ok(['dlq', 'runs', 'show', run.run_id, '--status', 'skipped']);
    expect(human.stdout).toContain(partial);
    expect(human.stdout).toMatch(/reason\s+quota raised/);
  });

  it('regression: --plan-out to a path that cannot take the file (a directory) exits 2 and leaves no temporary file beside it', async () => {
    await seedDead(backend, now, [{ queue: 'planout', code: 'PROVIDER_429' }]);
    const target = join(home.dir, 'plans');
    mkdirSync(target);
    const r = await runCli(home, ['dlq', 'redrive', '--queue', 'planout', '--dry-run', '--plan-out', target]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot write ${target}`);
    expect(readdirSync(home.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--plan-out - writes the plan to stdout and --plan - reads it from stdin; runs show pages its ledger with --limit/--cursor', async () => {
    const jobs = await seedDead(backend, now, Array.from({ length: 3 }, () => ({ queue: 'dash', code: 'PROVIDER_429' })));
    const refused = await runCli(home, ['dlq', 'redrive', '--queue', 'dash', '--yes', '--plan-out', '-']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--plan-out - writes the plan to stdout: use it with --dry-run');
    const planned = await ok(['dlq', 'redrive', '--queue', 'dash', '--dry-run', '--plan-out', '-']);
    const plan = JSON.parse(planned.stdout) as { kind: string; items: Array<{ job_id: string }> };
    expect(plan.kind).toBe('agentq.plan');
    expect(plan.items.map((i) => i.job_id).sort()).toEqual([...jobs].sort());
    expect(planned.stderr).toContain('plan: 3 selected: 3 redrive (queue dash)');
    expect(existsSync(join(home.dir, '-'))).toBe(false);
    const applied = await runCliOk(home, ['dlq', 'redrive', '--plan', '-', '--yes', '--rate', '0', '-o', 'json'], { input: planned.stdout });
    const run = JSON.parse(applied.stdout) as { run_id: string; counts: Record<string, number> };
    expect(run.counts).toMatchObject({ moved: 3, planned: 0 });
    for (const id of jobs) expect((await backend.get(id))!.state).toBe('queued');

    const page1 = await ok(['dlq', 'runs', 'show', run.run_id, '--limit', '2', '-o', 'ndjson']);
    const items1 = (parseNdjson(page1.stdout) as Array<{ type: string; job_id?: string }>).filter((l) => l.type === 'ledger_item');
    expect(items1).toHaveLength(2);
    const m = /More ledger items: add --cursor (\S+)/.exec(page1.stderr);
    expect(m, page1.stderr).not.toBeNull();
    const page2 = await ok(['dlq', 'runs', 'show', run.run_id, '--limit', '2', '--cursor', m![1]!, '-o', 'json']);
    const doc = JSON.parse(page2.stdout) as { items: Array<{ job_id: string }>; next_cursor: string | null };
    expect(doc.next_cursor).toBeNull();
    expect(page2.stderr).not.toContain('More ledger items');
    expect([...items1.map((i) => i.job_id!), ...doc.items.map((i) => i.job_id)].sort()).toEqual([...jobs].sort());
  });

  it('Ctrl-C finishes the batch, records the ledger and exits 130 with the resume command; --resume finishes', async () => {
    const jobs = await seedDead(backend, now, Array.from({ length: 40 }, () => ({ queue: 'ctrlc', code: 'PROVIDER_429' })));
    // 10 jobs per second in batches of 5: slow enough to interrupt mid-run.
    const child = spawnCli(home, ['dlq', 'redrive', '--queue', 'ctrlc', '--yes', '--rate', '10/s', '--batch-size', '5']);
    const done = collect(child);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (/\d+\/40/.test(stderr) && !child.killed) child.kill('SIGINT');
    });
    const r = await done;
    expect(r.code).toBe(130);
    const m = /Resume it with: agentq dlq redrive --resume (run_\w+)/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const runId = m![1]!;
    const run = (await backend.getRun(runId))!;
    expect(run.status).toBe('interrupted');
    expect(run.counts.planned).toBeGreaterThan(0);
    expect(run.counts.moved % 5).toBe(0); // whole batches only
    expect(await backend.readLock('ctrlc')).toBeNull();

    const resumed = await ok(['dlq', 'redrive', '--resume', runId, '--rate', '0']);
    expect(resumed.stderr).toMatch(/resuming/);
    expect((await backend.getRun(runId))!).toMatchObject({ status: 'completed', counts: { planned: 0, moved: 40 } });
    for (const id of jobs) expect((await backend.get(id))!.lineage.redrive_count).toBe(1);
  });

  it('expire moves only expired entries out of the DLQ', async () => {
    const [soon] = await seedDead(backend, now, [{ queue: 'exp', deadlineInMs: 1500 }]);
    const [later] = await seedDead(backend, now, [{ queue: 'exp', deadlineInMs: 3_600_000 }]);
    const { pollUntil } = await import('../support/poll.js');
    const deadline = Date.parse((await backend.get(soon!))!.deadline_at!);
    await pollUntil(() => Date.now() > deadline, { what: 'the deadline to pass' });
    const r = await ok(['dlq', 'expire', '--queue', 'exp', '--yes', '-o', 'json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: 'expire', counts: { moved: 1, skipped: 1 } });
    expect((await backend.get(soon!))!.state).toBe('expired');
    expect((await backend.get(later!))!.state).toBe('dead');
  });
});

describe('regression: paging past a record another tool wrote', () => {
  // Such a record's id need not be a valid ULID; a page that ends on it prints it as the cursor,
  // and `list`/`dlq list` refused that very cursor, so paging stopped there (exit 2).
  it('list and dlq list take the cursor they printed, and inspect and cancel the id they warned of, also when it is the id of a foreign record', async () => {
    const [real] = await seedDead(backend, now, [{ queue: 'foreign-ids', code: 'TOOL_ERROR' }]);
    const foreign = 'job_00JMALFORMED00000000000001';
    const db = new Database(home.dataUrl.slice('sqlite:'.length));
    db.prepare(
      `INSERT INTO jobs (id, queue, state, tenant, class, workflow, created_at, updated_at, run_at, max_attempts, dead_at, dead_reason, error_code, error_message, doc)
       VALUES (?, 'foreign-ids', 'dead', 'acme', 'batch', 'r:v1', ?, ?, ?, 3, ?, 'permanent', 'VALIDATION', 'garbled', '{bad')`,
    ).run(foreign, now(), now(), now(), now());
    db.close();
    for (const cmd of [['list'], ['dlq', 'list']]) {
      const first = await ok([...cmd, '--queue', 'foreign-ids', '--limit', '1']);
      const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
      expect(cursor, cmd.join(' ')).toBe(foreign);
      const next = await ok([...cmd, '--queue', 'foreign-ids', '--limit', '1', '--cursor', cursor!]);
      expect(next.stdout.split('\t')[0]).toBe(real);
    }
    // The warning of `list` names the record; inspect and cancel of that id say it is malformed (exit 1),
    // as the README says, rather than refusing the id they were given as no job id (exit 2).
    for (const cmd of [['inspect', foreign], ['cancel', foreign]]) {
      const r = await runCli(home, cmd);
      expect(r.code, cmd.join(' ')).toBe(1);
      expect(r.stderr, cmd.join(' ')).toContain(`the stored record of ${foreign} is malformed`);
    }
  });
});
