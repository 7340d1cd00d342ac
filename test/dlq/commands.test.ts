/**
 * The dlq commands run in-process with injected I/O over a real SQLite store:
 * what a pseudo-terminal would show (confirmation prompts, --raw refusal)
 * without needing one, and the exit-code mapping of a finished run.
 */
import { copyFile, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend, RunRecord } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { DeclinedError, PermissionError, RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { createIdFactory } from '../../src/core/ids.js';
import { dlqBulk, outcomeError } from '../../src/cli/commands/dlq-bulk.js';
import type { DlqIo } from '../../src/cli/commands/dlq-io.js';
import { dlqShow } from '../../src/cli/commands/dlq-show.js';
import { dlqRunShow } from '../../src/cli/commands/dlq-runs.js';
import { dlqExport } from '../../src/cli/commands/dlq-list.js';
import { dlqSummary } from '../../src/cli/commands/dlq-summary.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import { renderJob } from '../../src/cli/commands/inspect.js';
import { seedDead } from './seed.js';

let dir: string;
let backend: Backend;
let clock: ManualClock;
let out: string;
let err: string;
let prompts: string[];
let answers: string[];

function io(over: Partial<DlqIo> = {}): DlqIo {
  const ids = createIdFactory(clock, seededRandom(7));
  return {
    backend: async () => backend,
    clock,
    out: { format: 'plain', write: (s) => void (out += s), width: undefined, palette: NO_COLOUR, isTTY: false, writeBytes: async (b) => void (out += Buffer.from(b).toString()) },
    formatChosen: false,
    err: { write: (s) => void (err += s), isTTY: false },
    interactive: true,
    prompt: async (q) => {
      prompts.push(q);
      return answers.shift() ?? '';
    },
    signal: new AbortController().signal,
    sleep: async (ms) => clock.advance(ms),
    newRunId: () => ids('run_'),
    identity: { user: 'alice', host: 'box1', pid: 1, context: 'prod' },
    assertMutable: () => undefined,
    contextName: 'prod',
    probe: () => false,
    readFile: async () => '',
    writeFile: async () => undefined,
    ...over,
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-dlq-cmd-'));
  clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  backend = new SqliteBackend({ path: join(dir, 'store.db'), clock, random: seededRandom(3) });
  out = '';
  err = '';
  prompts = [];
  answers = [];
});

afterEach(async () => {
  await backend.close();
  await rm(dir, { recursive: true, force: true });
});

const dead = (n: number, queue = 'q') => seedDead(backend, () => clock.now(), Array.from({ length: n }, () => ({ queue })));

describe('confirmation on a terminal', () => {
  it('a small redrive asks y/N showing the totals and the context; "n" changes nothing (exit 3)', async () => {
    const ids = await dead(3);
    answers = ['n'];
    const e = await dlqBulk('redrive', { queue: 'q' }, io()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DeclinedError);
    expect((e as DeclinedError).exitCode).toBe(3);
    expect(prompts).toEqual(['redrive 3 jobs? [y/N] ']);
    expect(err).toMatch(/plan: 3 selected: 3 redrive \(queue q\)/);
    expect(err).toMatch(/context prod, store sqlite:\S+store\.db: 3 jobs will be moved back to the queue/);
    for (const id of ids) expect((await backend.get(id))!.state).toBe('dead');
    answers = ['y'];
    await dlqBulk('redrive', { queue: 'q' }, io());
    for (const id of ids) expect((await backend.get(id))!.state).toBe('queued');
  });

  it('above 20 jobs the count must be typed; a wrong count changes nothing', async () => {
    const ids = await dead(25);
    answers = ['y'];
    await expect(dlqBulk('purge', { queue: 'q' }, io())).rejects.toThrow(/did not match 25: nothing was changed/);
    expect(prompts[0]).toBe('Type the number of jobs (25) to purge them: ');
    expect(await backend.get(ids[0]!)).not.toBeNull();
    answers = ['25'];
    await dlqBulk('purge', { queue: 'q' }, io());
    expect(await backend.get(ids[0]!)).toBeNull();
  });

  it('counts read right for one job: "redrive 1 job? [y/N]", "1 job will be moved"', async () => {
    await dead(1);
    answers = ['n'];
    await expect(dlqBulk('redrive', { queue: 'q' }, io())).rejects.toThrow(DeclinedError);
    expect(prompts).toEqual(['redrive 1 job? [y/N] ']);
    expect(err).toMatch(/context prod, store sqlite:\S+: 1 job will be moved back to the queue/);
    await expect(dlqBulk('redrive', { queue: 'q' }, io({ interactive: false }))).rejects.toThrow('dlq redrive changes 1 job and cannot ask');
  });

  it('regression: without a prompt the refusal names --no-input and CI too (on a terminal it said "there is no terminal")', async () => {
    await dead(1);
    await expect(dlqBulk('redrive', { queue: 'q' }, io({ interactive: false }))).rejects.toThrow(/or --no-input or CI is set\): add --yes/);
  });

  it('--yes skips the prompt', async () => {
    await dead(2);
    await dlqBulk('redrive', { queue: 'q', yes: true }, io());
    expect(prompts).toEqual([]);
  });
});

describe('partial jobs', () => {
  it('a saved plan that includes partial jobs needs --force and lists their effects before it is confirmed', async () => {
    const [partial] = await seedDead(backend, () => clock.now(), [{ queue: 'q', withEffect: true }]);
    await dead(1);
    const files = new Map<string, string>();
    const fileIo = io({ writeFile: async (p, t) => void files.set(p, t), readFile: async (p) => files.get(p)! });
    // A dry run changes nothing, so it needs no --force (it is how the effects are seen first).
    await dlqBulk('redrive', { queue: 'q', includePartial: true, dryRun: true, planOut: 'plan.json' }, fileIo);
    expect(err).toContain(`WARNING: 1 job in this plan already started an external effect; redriving it may repeat it:`);
    await expect(dlqBulk('redrive', { queue: 'q', includePartial: true, yes: true }, fileIo)).rejects.toThrow(/applying it also needs --force/);
    await dlqBulk('redrive', { plan: 'plan.json', dryRun: true }, fileIo);
    err = '';
    await expect(dlqBulk('redrive', { plan: 'plan.json', yes: true }, fileIo)).rejects.toThrow(/includes partial jobs: applying it also needs --force/);
    answers = ['y'];
    await dlqBulk('redrive', { plan: 'plan.json', force: true }, fileIo);
    expect(err.indexOf(`effect send-email: started`)).toBeGreaterThan(-1);
    expect(err.indexOf(partial!)).toBeLessThan(err.indexOf('jobs will be moved back'));
    expect((await backend.get(partial!))!.state).toBe('queued');
  });
});

describe('--plan FILE shows the verdicts its apply would compute now', () => {
  const planIo = () => {
    const files = new Map<string, string>();
    return { files, io: io({ writeFile: async (p, t) => void files.set(p, t), readFile: async (p) => files.get(p)! }) };
  };

  it('an old plan whose jobs were all moved since: the dry run says skip:not_in_dlq, not "3 redrive", and the apply finds nothing to do', async () => {
    await dead(3);
    const { io: fileIo } = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    await dlqBulk('redrive', { queue: 'q', yes: true }, fileIo);
    err = '';
    out = '';
    await dlqBulk('redrive', { plan: 'plan.json', dryRun: true }, fileIo);
    expect(err).toContain('plan: 3 selected: 3 skip:not_in_dlq (queue q)');
    expect(err).toContain('plan file plan.json: 3 verdicts changed since it was made');
    expect(out).not.toMatch(/\tredrive\t/);
    err = '';
    await dlqBulk('redrive', { plan: 'plan.json' }, fileIo);
    expect(prompts).toEqual([]);
    expect(err).toContain('nothing to redrive');
  });

  it('an edited skip:expired → redrive is shown (and confirmed) as skip:expired', async () => {
    const [expired] = await seedDead(backend, () => clock.now(), [{ queue: 'q', deadlineInMs: 1000 }]);
    await dead(1);
    clock.advance(2000);
    const { files, io: fileIo } = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    const plan = JSON.parse(files.get('plan.json')!) as { items: Array<{ job_id: string; verdict: string; detail: string | null }> };
    const item = plan.items.find((i) => i.job_id === expired)!;
    expect(item.verdict).toBe('skip:expired');
    item.verdict = 'redrive';
    item.detail = null;
    files.set('plan.json', JSON.stringify(plan));
    err = '';
    await dlqBulk('redrive', { plan: 'plan.json', dryRun: true }, fileIo);
    expect(err).toContain('plan: 2 selected: 1 redrive, 1 skip:expired (queue q)');
    err = '';
    answers = ['n'];
    await expect(dlqBulk('redrive', { plan: 'plan.json' }, fileIo)).rejects.toThrow(DeclinedError);
    expect(prompts).toEqual(['redrive 1 job? [y/N] ']);
    expect(err).toContain('1 job will be moved back to the queue');
  });
});

describe('a read-only context', () => {
  it('refuses a bulk action even when the selection holds nothing to act on (exit 4), and still allows its dry run', async () => {
    await dead(1, 'other');
    const readOnly = io({
      assertMutable: (what) => {
        throw new PermissionError(`context "prod" is read-only: ${what} refused`);
      },
    });
    const e = await dlqBulk('expire', { queue: 'q', all: true, yes: true }, readOnly).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PermissionError);
    expect((e as PermissionError).exitCode).toBe(4);
    await expect(dlqBulk('expire', { queue: 'q', all: true, dryRun: true }, readOnly)).resolves.toBeDefined();
  });
});

describe('options a saved plan or a recorded run cannot honour are refused, not ignored', () => {
  const planIo = () => {
    const files = new Map<string, string>();
    return io({ writeFile: async (p, t) => void files.set(p, t), readFile: async (p) => files.get(p)! });
  };

  it('--plan made against another store is refused (exit 2), --force or not (a partial plan needs --force for its jobs, not for the store)', async () => {
    await dead(2);
    const fileIo = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    const other = new SqliteBackend({ path: join(dir, 'other.db'), clock, random: seededRandom(4) });
    try {
      const elsewhere = { ...fileIo, backend: async () => other };
      const e = await dlqBulk('redrive', { plan: 'plan.json', yes: true }, elsewhere).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as Error).message).toMatch(/was made against sqlite:\S+store\.db, but this command points at sqlite:\S+other\.db/);
      const forced = await dlqBulk('redrive', { plan: 'plan.json', yes: true, force: true }, elsewhere).catch((x: unknown) => x);
      expect(forced).toBeInstanceOf(ValidationError);
      expect(await other.listRuns({}, { limit: 10 })).toMatchObject({ items: [] });
    } finally {
      await other.close();
    }
  });

  it('--plan on the same store reached by another path is accepted: the store is recorded by its absolute path', async () => {
    await dead(2);
    const fileIo = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    const same = new SqliteBackend({ path: relative(process.cwd(), join(dir, 'store.db')), clock, random: seededRandom(5) });
    try {
      const run = (await dlqBulk('redrive', { plan: 'plan.json', yes: true }, { ...fileIo, backend: async () => same })) as RunRecord;
      expect(run.counts).toMatchObject({ moved: 2 });
    } finally {
      await same.close();
    }
  });

  it('regression: --plan on the same store reached through a symlinked directory is accepted (the file is compared, not the spelling of its path); a copy of it is still refused', async () => {
    await dead(2);
    const fileIo = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    await copyFile(join(dir, 'store.db'), join(dir, 'copy.db'));
    const link = join(dir, 'link');
    await symlink(dir, link);
    const same = new SqliteBackend({ path: join(link, 'store.db'), clock, random: seededRandom(5) });
    try {
      const run = (await dlqBulk('redrive', { plan: 'plan.json', yes: true }, { ...fileIo, backend: async () => same })) as RunRecord;
      expect(run.counts).toMatchObject({ moved: 2 });
    } finally {
      await same.close();
    }
    // (a restored copy of the file is another store, whatever its path says)
    const copy = new SqliteBackend({ path: join(dir, 'copy.db'), clock, random: seededRandom(6) });
    try {
      const e = await dlqBulk('redrive', { plan: 'plan.json', yes: true }, { ...fileIo, backend: async () => copy }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ValidationError);
    } finally {
      await copy.close();
    }
  });

  it('--plan with --min-remaining exits 2 naming it, and moves nothing', async () => {
    const ids = await dead(2);
    const fileIo = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    const e = await dlqBulk('redrive', { plan: 'plan.json', minRemaining: '30m', yes: true }, fileIo).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).exitCode).toBe(2);
    expect((e as Error).message).toMatch(/--plan applies exactly the saved plan: --min-remaining does not apply/);
    for (const id of ids) expect((await backend.get(id))!.state).toBe('dead');
  });

  it('--plan names every selector and plan option it was given, --no-partial as typed', async () => {
    await dead(1);
    const fileIo = planIo();
    await dlqBulk('redrive', { queue: 'q', dryRun: true, planOut: 'plan.json' }, fileIo);
    await expect(
      dlqBulk('redrive', { plan: 'plan.json', partial: false, deadReason: 'permanent', maxRedrives: '2', extraAttempts: '2', yes: true }, fileIo),
    ).rejects.toThrow('--dead-reason, --no-partial, --max-redrives, --extra-attempts do not apply');
  });

  it('--resume refuses each option the recorded run fixed, pointing at `dlq runs show`; nothing changes', async () => {
    await dead(2);
    const run = (await dlqBulk('redrive', { queue: 'q', yes: true, reason: 'first' }, io())) as RunRecord;
    const refused: Array<[Partial<Parameters<typeof dlqBulk>[1]>, string]> = [
      [{ resetAttempts: true }, '--reset-attempts'],
      [{ extraAttempts: '3' }, '--extra-attempts'],
      [{ maxRedrives: '5' }, '--max-redrives'],
      [{ minRemaining: '30m' }, '--min-remaining'],
      [{ includePartial: true, force: true }, '--include-partial'],
      [{ reason: 'typed again' }, '--reason'],
      [{ queue: 'q' }, '--queue'],
      [{ all: true }, '--all'],
      [{ dryRun: true }, '--dry-run'],
      [{ planOut: 'p.json' }, '--plan-out'],
    ];
    for (const [extra, flag] of refused) {
      const e = await dlqBulk('redrive', { resume: run.run_id, ...extra }, io()).catch((x: unknown) => x);
      expect(e, flag).toBeInstanceOf(ValidationError);
      expect((e as Error).message).toBe(`--resume continues run ${run.run_id} with what was recorded when it was created: ${flag} does not apply`);
      expect((e as ValidationError).hint).toContain(`agentq dlq runs show ${run.run_id}`);
    }
    expect((await backend.getRun(run.run_id))!.reason).toBe('first');
    // The pace is the resumer's to choose.
    await dlqBulk('redrive', { resume: run.run_id, rate: '10/s', batchSize: '5' }, io());
  });
});

describe('selector errors name the flag as typed', () => {
  it('a bad --dead-reason on a bulk action says --dead-reason (its --reason is the audit note)', async () => {
    for (const action of ['redrive', 'purge', 'expire'] as const) {
      await expect(dlqBulk(action, { deadReason: 'nope', dryRun: true }, io())).rejects.toThrow(/^--dead-reason "nope": the dead reason must be one of/);
    }
  });
});

describe('--error-code selects a code as the DLQ shows it', () => {
  it('regression: a stored code outside the worker\'s rule (mixed case, a space: older versions, SQS custody, a library fail()) is selected as typed; a lower-case one still selects the upper-case code', async () => {
    const [mixed, spaced, upper] = await seedDead(backend, () => clock.now(), [
      { queue: 'q', code: 'Provider.Quota' },
      { queue: 'q', code: 'HTTP 429' },
      { queue: 'q', code: 'PERMISSION' },
    ]);
    const selected = async (codes: string[]) => {
      await dlqSummary({ queue: 'q', errorCode: codes, by: 'error_code' }, { ...io(), out: { ...io().out, format: 'json' } });
      const doc = JSON.parse(out) as { total: number };
      out = '';
      return doc.total;
    };
    expect(await selected(['Provider.Quota'])).toBe(1);
    expect(await selected(['HTTP 429'])).toBe(1);
    expect(await selected(['permission'])).toBe(1);
    const run = (await dlqBulk('redrive', { queue: 'q', errorCode: ['Provider.Quota', 'HTTP 429'], yes: true, reason: 'quota raised' }, io())) as RunRecord;
    expect(run.counts).toMatchObject({ moved: 2 });
    expect((await backend.get(mixed!))!.state).toBe('queued');
    expect((await backend.get(spaced!))!.state).toBe('queued');
    expect((await backend.get(upper!))!.state).toBe('dead');
  });
});

describe('plain output of dlq show and dlq runs show is key<TAB>value', () => {
  const tableIo = () => io({ out: { ...io().out, format: 'table' } });
  it('dlq show: one `label\tvalue` line per field, tab-separated section rows; a terminal gets aligned text', async () => {
    const [id] = await seedDead(backend, () => clock.now(), [{ queue: 'q', withEffect: true, input: 'line1\nline2' }]);
    await dlqShow(id!, {}, io());
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe(`job\t${id}`);
    expect(lines).toContain('queue\tq');
    expect(lines).toContain('dead at\t2026-03-01T00:00:00.000Z');
    expect(lines).toContain('input\tline1\\nline2');
    for (const l of lines) if (l !== '' && !l.startsWith('# ')) expect(l, l).toContain('\t');
    for (const l of lines) expect(l, l).not.toMatch(/ {2}/);
    expect(lines[lines.indexOf('# effects (1)') + 1]).toMatch(/^send-email\tstarted\t1\t/);
    // Every label line comes before the first section, as in `inspect`: the input (and checkpoint)
    // lines used to follow the effects rows, so a script reading the `# effects` section took them
    // for effects.
    const firstSection = lines.findIndex((l) => l.startsWith('# '));
    expect(lines.indexOf('input\tline1\\nline2')).toBeLessThan(firstSection);
    const effectRows = lines.slice(lines.indexOf('# effects (1)') + 1).filter((l) => l !== '' && !l.startsWith('# '));
    expect(effectRows).toHaveLength(1);
    out = '';
    await dlqShow(id!, {}, tableIo());
    expect(out.split('\n')[0]).toBe(`job:             ${id}`);
  });

  it('dlq runs show: the record as `key\tvalue` lines, then the ledger rows; a terminal gets aligned text', async () => {
    await dead(1);
    const run = (await dlqBulk('redrive', { queue: 'q', yes: true, reason: 'fixed' }, io())) as RunRecord;
    out = '';
    await dlqRunShow(run.run_id, {}, io());
    const [record, ledger] = out.split('\n\n');
    const lines = record!.split('\n');
    expect(lines[0]).toBe(`run\t${run.run_id}`);
    expect(lines).toContain('reason\tfixed');
    for (const l of lines) expect(l, l).toMatch(/^[a-z]+\t\S/);
    expect(ledger!.trimEnd().split('\t')[2]).toBe('moved');
    out = '';
    await dlqRunShow(run.run_id, {}, tableIo());
    expect(out.split('\n')[0]).toBe(`run:      ${run.run_id}`);
  });

  it('on a terminal, dlq show, dlq runs show and inspect lay out their fields alike: `label:` and the values aligned two spaces past the longest label (as kubectl describe)', async () => {
    const [id] = await seedDead(backend, () => clock.now(), [{ queue: 'q', withEffect: true }]);
    const fieldsOf = (text: string) => text.split('\n\n')[0]!.split('\n');
    const expectAligned = (lines: string[], longest: string) => {
      const column = longest.length + 3; // `label:` and two spaces
      for (const l of lines) expect(l, l).toMatch(new RegExp(`^[A-Za-z][A-Za-z .]*: +\\S`));
      for (const l of lines) expect(l.search(/(?<=: +)\S/), l).toBe(column);
    };
    await dlqShow(id!, {}, tableIo());
    const show = fieldsOf(out);
    expect(show).toContain('worker version:  v1.0.0');
    expectAligned(show, 'worker version');
    const job = (await backend.get(id!))!;
    const inspect = fieldsOf(renderJob(job, await backend.dlqGet(id!), [], clock.now(), false));
    expect(inspect.find((l) => l.startsWith('worker version'))).toBeDefined(); // not abbreviated to fit
    expectAligned(inspect, 'worker version');
    await dead(1); // the entry above is partial: a redrive skips it
    const run = (await dlqBulk('redrive', { queue: 'q', yes: true, reason: 'fixed' }, io())) as RunRecord;
    out = '';
    await dlqRunShow(run.run_id, {}, tableIo());
    expectAligned(fieldsOf(out), 'options');
  });
});

describe('dlq summary on an 80-column terminal', () => {
  it('regression: keeps its headers, the error codes and the oldest time whole (OLDEST was 2026-…, and error codes could read PROVIDER…)', async () => {
    await seedDead(backend, () => clock.now(), [
      { queue: 'q', code: 'PROVIDER_429', workflow: 'a_long_workflow_name_for_reports:v12', tenant: 'a-tenant-with-a-rather-long-name' },
      { queue: 'q', code: 'PROVIDER_5XX', workflow: 'research_report:v3', tenant: 'acme' },
    ]);
    await dlqSummary({ queue: 'q', by: 'error_code,workflow,tenant' }, io({ out: { ...io().out, format: 'table', width: 80 } }));
    const lines = out.trimEnd().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(lines[0]).not.toContain('…');
    expect(out).toContain('PROVIDER_429 ');
    expect(out).toContain('PROVIDER_5XX ');
    expect(lines[1]).toMatch(/ 2026-\d\d-\d\d \d\d:\d\d:\d\dZ /);
  });
});

describe('dlq export', () => {
  const withFormat = (format: 'json' | 'ndjson' | 'table' | 'plain', chosen = true) => io({ out: { ...io().out, format }, formatChosen: chosen });
  it('writes NDJSON, and with -o json one JSON array of the same entries (it wrote NDJSON regardless)', async () => {
    await dead(2);
    await dlqExport({ queue: 'q' }, withFormat('plain', false));
    const lines = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { job_id: string });
    expect(lines).toHaveLength(2);
    out = '';
    await dlqExport({ queue: 'q' }, withFormat('json'));
    expect((JSON.parse(out) as Array<{ job_id: string }>).map((e) => e.job_id)).toEqual(lines.map((e) => e.job_id));
  });

  it('refuses a table or plain format asked for (exit 2) rather than answer it with NDJSON', async () => {
    await dead(1);
    for (const format of ['table', 'plain'] as const) await expect(dlqExport({ queue: 'q' }, withFormat(format))).rejects.toThrow(/dlq export writes NDJSON/);
    expect(out).toBe('');
  });
});

describe('dlq show --raw', () => {
  it('is refused on a terminal unless --force', async () => {
    const [id] = await dead(1);
    const tty = io({ out: { ...io().out, isTTY: true } });
    await expect(dlqShow(id!, { raw: true }, tty)).rejects.toThrow(ValidationError);
    await dlqShow(id!, { raw: true, force: true }, tty);
    expect(JSON.parse(out).job_id).toBe(id);
  });
});

describe('a run stopped by a backend failure', () => {
  it('exits 75 and prints the --resume command, as Ctrl-C does', async () => {
    await dead(3);
    const failing = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === 'applyRunItems') return () => Promise.reject(new RetryLaterError('the store is busy', 'BUSY', 'Retry in a few seconds.'));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const e = await dlqBulk('redrive', { queue: 'q', yes: true }, io({ backend: async () => failing })).catch((x: unknown) => x);
    expect((e as RetryLaterError).exitCode).toBe(75);
    expect(err).toMatch(/run (run_\w+) stopped; every finished job is in its ledger\. Resume it with: agentq .*dlq redrive --resume run_\w+/);
  });
});

describe('exit codes of a finished run', () => {
  const run = (counts: RunRecord['counts']): RunRecord => ({
    run_id: 'run_X',
    queue: 'q',
    action: 'redrive',
    user: 'u',
    context: null,
    reason: null,
    filters: {},
    options: {},
    created_at: '2026-03-01T00:00:00.000Z',
    updated_at: '2026-03-01T00:00:00.000Z',
    status: 'completed',
    counts,
  });
  it('0 when every planned job moved, skips included', () => {
    expect(outcomeError(run({ planned: 0, moved: 5, skipped: 3, failed: 0 }), false)).toBeNull();
  });
  it('6 when some failed, pointing at the failed ledger items', () => {
    const e = outcomeError(run({ planned: 0, moved: 5, skipped: 0, failed: 1 }), false)!;
    expect(e.exitCode).toBe(6);
    expect(e.hint).toBe('See them with: agentq dlq runs show run_X --status failed');
  });
  it('130 when interrupted, with the resume command', () => {
    const e = outcomeError(run({ planned: 4, moved: 1, skipped: 0, failed: 0 }), true)!;
    expect(e.exitCode).toBe(130);
    expect(e.hint).toBe('Resume it with: agentq dlq redrive --resume run_X');
  });
});
