/**
 * The job commands end to end through the built CLI on the embedded SQLite
 * default of a fresh home: submit, inspect, list, cancel, tail, demo; exit
 * codes as documented; JSON output validated against the public schemas.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Job, JobEvent } from '../../src/core/schemas.js';
import { collect, makeCliHome, parseNdjson, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';
import { pollUntil } from '../support/poll.js';

let home: CliHome;
beforeAll(() => {
  home = makeCliHome();
});
afterAll(() => home.cleanup());

const submitJson = async (args: string[]) => Job.parse(JSON.parse((await runCliOk(home, ['submit', ...args, '-o', 'json'])).stdout));

describe('submit', () => {
  it('prints only the job id, and the job is stored with every envelope field', async () => {
    const before = Date.now();
    const r = await runCliOk(home, [
      'submit', 'research_report:v3',
      '--queue', 'research', '--tenant', 'acme', '--class', 'interactive', '--operation', 'summarise',
      '--deadline', '2h', '--idempotency-key', 'order-1', '--input-ref', 's3://bucket/in/doc.pdf',
      '--input-sha256', 'a'.repeat(64), '--max-attempts', '5', '--trace-id', 'trace-1', '--budget-tokens', '5000',
      '--budget-usd', '1.5', '--allowed-tool', 'web_search', '--allowed-tool', 'calculator', '--estimated-seconds', '30',
    ]);
    const after = Date.now();
    const id = r.stdout.trim();
    expect(id).toMatch(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
    const job = Job.parse(JSON.parse((await runCliOk(home, ['inspect', id, '-o', 'json'])).stdout));
    expect(job).toMatchObject({
      job_id: id, workflow: 'research_report:v3', queue: 'research', tenant_id: 'acme', class: 'interactive',
      operation: 'summarise', idempotency_key: 'order-1', input_ref: 's3://bucket/in/doc.pdf', input_sha256: 'a'.repeat(64),
      max_attempts: 5, trace_id: 'trace-1', budget: { tokens: 5000, cost_usd: 1.5 }, allowed_tools: ['web_search', 'calculator'],
      estimated_seconds: 30, state: 'queued',
    });
    // `--deadline 2h` is two hours from when the command ran: between the times around it (ms kept)
    const deadline = Date.parse(job.deadline_at!);
    expect(deadline).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(deadline).toBeLessThanOrEqual(after + 2 * 3_600_000);
    expect(deadline).toBeLessThanOrEqual(Date.parse(job.created_at) + 2 * 3_600_000);
  });

  it('the same idempotency key returns the same job (and says so on stderr)', async () => {
    const a = await runCliOk(home, ['submit', 'x:v1', '--idempotency-key', 'same-key']);
    const b = await runCliOk(home, ['submit', 'x:v1', '--idempotency-key', 'same-key']);
    expect(b.stdout).toBe(a.stdout);
    expect(b.stderr).toContain('matched an existing job');
    const c = await runCli(home, ['submit', 'x:v1', '--idempotency-key', 'same-key', '--tenant', 'other']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('was already used');
  });

  it('inline input over 64 KiB is refused (exit 2) with a pointer to --input-ref', async () => {
    const r = await runCli(home, ['submit', 'x:v1', '--input', 'x'.repeat(64 * 1024 + 1)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('limit is 65536 bytes');
    expect(r.stderr).toContain('--input-ref');
    const ok = await submitJson(['x:v1', '--input', 'x'.repeat(64 * 1024)]);
    expect(ok.input).toHaveLength(64 * 1024);
  });

  it('--input-file: small files inline; large ones refused with the computed sha256; with --input-ref only the checksum is used', async () => {
    const small = join(home.dir, 'small.json');
    writeFileSync(small, '{"q":"hello"}');
    expect((await submitJson(['x:v1', '--input-file', small])).input).toBe('{"q":"hello"}');
    const big = join(home.dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(70_000, 'a'));
    const r = await runCli(home, ['submit', 'x:v1', '--input-file', big]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--input-ref <url> --input-sha256 [0-9a-f]{64}/);
    const ref = await submitJson(['x:v1', '--input-ref', 's3://b/big.bin', '--input-file', big]);
    expect(ref).toMatchObject({ input: null, input_ref: 's3://b/big.bin' });
    const { createHash } = await import('node:crypto');
    expect(ref.input_sha256).toBe(createHash('sha256').update(Buffer.alloc(70_000, 'a')).digest('hex'));
  });

  it('regression: the checksum of --input-file is computed as a stream: memory stays flat on an endless pipe, and Ctrl-C stops it', async () => {
    // The file was read whole first (16 GB of RSS on /dev/zero, ERR_FS_FILE_TOO_LARGE on a 3 GB file).
    const fifo = join(home.dir, 'endless.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = spawnCli(home, ['submit', 'x:v1', '--input-ref', 's3://b/endless', '--input-file', fifo]);
    const done = collect(child, 120_000);
    const pipe = createWriteStream(fifo);
    let writing = true;
    pipe.on('error', () => (writing = false));
    const mib = Buffer.alloc(1024 * 1024);
    void (async () => {
      while (writing) if (!pipe.write(mib)) await new Promise<void>((r) => pipe.once('drain', () => r()).once('error', () => r()));
    })();
    const proc = (what: string) => readFileSync(`/proc/${child.pid}/${what}`, 'utf8');
    await pollUntil(() => Number(/rchar: (\d+)/.exec(proc('io'))![1]) > 256 * 1024 * 1024 || null, { what: '256 MiB read', timeoutMs: 90_000 });
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(proc('status'))![1]);
    expect(rssKb).toBeLessThan(200 * 1024);
    child.kill('SIGINT');
    const r = await done;
    writing = false;
    pipe.destroy();
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(`stopped reading --input-file ${fifo}: nothing was submitted`);
  }, 120_000);

  it('refuses a reference without its checksum (exit 2)', async () => {
    const r = await runCli(home, ['submit', 'x:v1', '--input-ref', 's3://b/k']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('input_ref needs input_sha256');
  });

  it('--wait --timeout exits 124 when the job does not end in time (no worker runs here)', async () => {
    const r = await runCli(home, ['submit', 'x:v1', '--wait', '--timeout', '300ms']);
    expect(r.code).toBe(124);
    expect(r.stdout.trim()).toMatch(/^job_/);
    // Nobody claimed it: it is not "running", it stays queued.
    expect(r.stderr).toMatch(/error: job_\w+ is still queued after 300ms; it stays queued\n/);
  });

  // Regression: --timeout 0s submitted the job, then gave up on it at once with 124.
  it('--wait --timeout 0s exits 2 before anything is submitted: a wait of no time cannot see the job end', async () => {
    const r = await runCli(home, ['submit', 'x:v1', '--queue', 'zero-timeout', '--wait', '--timeout', '0s']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --timeout must be more than 0 (got "0s")');
    expect((await runCliOk(home, ['list', '--queue', 'zero-timeout'])).stdout).toBe('');
  });

  it('--wait exits 1 once the deadline passes while the job still waits: it can no longer run (no worker here)', async () => {
    // No timeout: without the deadline check this would wait for ever (the test's own limit would fail it).
    const r = await runCli(home, ['submit', 'x:v1', '--queue', 'nobody-claims', '--deadline', '1s', '--wait', '-o', 'json'], { timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    expect(Job.parse(JSON.parse(r.stdout))).toMatchObject({ state: 'queued' });
    expect(r.stderr).toMatch(/error: job_\w+ missed its deadline \S+ while still queued: it can no longer run, and the next claim on queue nobody-claims ends it expired\n/);
  });

  it('--wait -o json prints the job as it is when the timeout passes (exit 124), so a script keeps its id', async () => {
    const r = await runCli(home, ['submit', 'x:v1', '--wait', '--timeout', '300ms', '--queue', 'timeout-json', '-o', 'json']);
    expect(r.code).toBe(124);
    const job = Job.parse(JSON.parse(r.stdout));
    expect(job).toMatchObject({ queue: 'timeout-json', state: 'queued' });
    expect(r.stderr).toContain(`${job.job_id} is still queued after 300ms; it stays queued`);
  });

  it('--wait -o json prints the job as it is on Ctrl-C (exit 130)', async () => {
    const waiter = spawnCli(home, ['submit', 'x:v1', '--wait', '--queue', 'interrupted-json', '-o', 'json']);
    waiter.stdin.end();
    const done = collect(waiter);
    // No id on stdout before the end with -o json (one document): wait until the job is in the store.
    await pollUntil(async () => parseNdjson((await runCliOk(home, ['list', '--queue', 'interrupted-json', '-o', 'ndjson'])).stdout).length > 0 || undefined, {
      what: 'the submitted job in the store',
    });
    waiter.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    const job = Job.parse(JSON.parse(r.stdout));
    expect(job).toMatchObject({ queue: 'interrupted-json', state: 'queued' });
    expect(r.stderr).toContain(`stopped waiting for ${job.job_id} (it stays queued)`);
  });

  it('--wait exits 1 when the job ends without success (cancelled by someone else)', async () => {
    const waiter = spawnCli(home, ['submit', 'x:v1', '--wait', '--queue', 'waiting']);
    waiter.stdin.end();
    const done = collect(waiter);
    let out = '';
    waiter.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const id = await pollUntil(() => out.match(/job_\w+/)?.[0], { what: 'the job id from submit --wait' });
    await runCliOk(home, ['cancel', id, '--reason', 'test']);
    const r = await done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${id} cancelled`);
  });

  it('--wait: Ctrl-C stops waiting with exit 130 and the job keeps going', async () => {
    const waiter = spawnCli(home, ['submit', 'x:v1', '--wait', '--queue', 'interrupted']);
    waiter.stdin.end();
    const done = collect(waiter);
    let out = '';
    waiter.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const id = await pollUntil(() => out.match(/job_\w+/)?.[0], { what: 'the job id from submit --wait' });
    waiter.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('(it stays queued)');
    const job = Job.parse(JSON.parse((await runCliOk(home, ['inspect', id, '-o', 'json'])).stdout));
    expect(job.state).toBe('queued');
  });
});

describe('submit --wait on a SQLite store file removed meanwhile', () => {
  it('exits 78 (STORE_REPLACED) with the job as last seen, rather than waiting for ever in a file no worker can see', async () => {
    const own = makeCliHome();
    try {
      const waiter = spawnCli(own, ['submit', 'x:v1', '--wait', '-o', 'json']);
      waiter.stdin.end();
      const done = collect(waiter);
      const dbPath = own.dataUrl.slice('sqlite:'.length);
      await pollUntil(async () => parseNdjson((await runCliOk(own, ['list', '-o', 'ndjson'])).stdout).length > 0 || undefined, { what: 'the submitted job in the store' });
      for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
      const r = await done;
      expect(r.code).toBe(78);
      const job = Job.parse(JSON.parse(r.stdout));
      expect(job.state).toBe('queued');
      expect(r.stderr).toContain(`stopped waiting for ${job.job_id}: the agentq store at ${dbPath} was removed since`);
      // The job went with the removed file: "unaffected, do not submit it again" would be wrong here.
      expect(r.stderr).toContain('is not in the store now at that path');
      expect(r.stderr).not.toContain('Do not submit it again');
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      own.cleanup();
    }
  });
});

describe('inspect', () => {
  it('shows state, attempts, deadline and events; exits 5 for an unknown job', async () => {
    const job = await submitJson(['x:v1', '--deadline', '1h', '--tenant', 'acme']);
    const r = await runCliOk(home, ['inspect', job.job_id]);
    expect(r.stdout).toMatch(/^state\tqueued$/m);
    expect(r.stdout).toMatch(/^attempts\t0 of 3$/m);
    expect(r.stdout).toMatch(new RegExp(`^deadline\t${job.deadline_at!.replace(/\./g, '\\.')}$`, 'm'));
    expect(r.stdout).toMatch(/submitted/);
    const missing = await runCli(home, ['inspect', 'job_01JD3K0000000000000000000A']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('not found');
  });
  it('takes a job id in any case (ULIDs are case-insensitive): inspect, tail and cancel find the job', async () => {
    const job = await submitJson(['x:v1', '--tenant', 'acme']);
    const typed = job.job_id.toLowerCase().replace(/^job_/, 'JOB_');
    expect(Job.parse(JSON.parse((await runCliOk(home, ['inspect', typed, '-o', 'json'])).stdout)).job_id).toBe(job.job_id);
    expect(parseNdjson((await runCliOk(home, ['tail', '--job', typed.toLowerCase(), '-o', 'ndjson'])).stdout).map((e) => (e as { job_id: string }).job_id)).toContain(job.job_id);
    expect((await runCliOk(home, ['cancel', typed, '-o', 'json'])).stdout).toContain(job.job_id);
    expect((await runCliOk(home, ['inspect', job.job_id])).stdout).toMatch(/^state\tcancelled /m);
  });
});

describe('list', () => {
  beforeAll(async () => {
    await runCliOk(home, ['demo', '--jobs', '7', '--queue', 'listing', '--no-worker']);
  });

  it('plain output: one tab-separated line per job, no header', async () => {
    const r = await runCliOk(home, ['list', '--queue', 'listing']);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(7);
    for (const l of lines) expect(l.split('\t')[0]).toMatch(/^job_/);
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
  });

  it('filters by tenant, class, workflow and state', async () => {
    const acme = z.array(Job).parse(JSON.parse((await runCliOk(home, ['list', '--queue', 'listing', '--tenant', 'acme', '-o', 'json'])).stdout));
    expect(acme.length).toBeGreaterThan(0);
    expect(acme.every((j) => j.tenant_id === 'acme')).toBe(true);
    const cls = z.array(Job).parse(JSON.parse((await runCliOk(home, ['list', '--queue', 'listing', '--class', 'maintenance', '--json'])).stdout));
    expect(cls.every((j) => j.class === 'maintenance')).toBe(true);
    const wf = z.array(Job).parse(JSON.parse((await runCliOk(home, ['list', '--queue', 'listing', '--workflow', 'summarize:v1', '--json'])).stdout));
    expect(wf.length).toBeGreaterThan(0);
    expect(wf.every((j) => j.workflow === 'summarize:v1')).toBe(true);
    const none = await runCliOk(home, ['list', '--queue', 'listing', '--state', 'succeeded,dead']);
    expect(none.stdout).toBe(''); // an empty list is a success
  });

  it('filters by creation time with --since and --until (durations ago or ISO-8601)', async () => {
    const count = async (...args: string[]) => (await runCliOk(home, ['list', '--queue', 'listing', ...args])).stdout.split('\n').filter(Boolean).length;
    expect(await count('--since', '1h')).toBe(7);
    expect(await count('--until', '1h')).toBe(0);
    expect(await count('--since', '2000-01-01T00:00:00Z', '--until', '2999-01-01T00:00:00Z')).toBe(7);
    expect(await count('--since', '2999-01-01T00:00:00Z')).toBe(0);
  });

  it('pages with --cursor (printed on stderr) without duplicates or gaps, and --all streams everything', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const r = await runCliOk(home, ['list', '--queue', 'listing', '--limit', '3', ...(cursor ? ['--cursor', cursor] : [])]);
      seen.push(...r.stdout.trim().split('\n').filter(Boolean).map((l) => l.split('\t')[0]!));
      cursor = r.stderr.match(/--cursor (\S+)/)?.[1];
      if (!cursor) break;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    const all = z.array(Job).parse(JSON.parse((await runCliOk(home, ['list', '--queue', 'listing', '--limit', '2', '--all', '-o', 'json'])).stdout));
    expect(all.map((j) => j.job_id)).toEqual(seen);
    const nd = parseNdjson((await runCliOk(home, ['list', '--queue', 'listing', '--limit', '2', '--all', '-o', 'ndjson'])).stdout);
    expect(nd.map((j) => Job.parse(j).job_id)).toEqual(seen);
  });

  it('-o wide prints a table with a header even when piped', async () => {
    const r = await runCliOk(home, ['list', '--queue', 'listing', '-o', 'wide']);
    expect(r.stdout.split('\n')[0]).toMatch(/^JOB\s+QUEUE\s+TENANT\s+WORKFLOW\s+CLASS\s+STATE/);
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
  });
});

describe('cancel', () => {
  it('regression: --reason is 1-500 characters, as for the dlq bulk actions (it had no limit)', async () => {
    for (const reason of ['', 'r'.repeat(501)]) {
      const r = await runCli(home, ['cancel', 'job_01JD3K0000000000000000000A', '--reason', reason]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: --reason must be 1-500 characters (got ${reason.length})`);
    }
  });

  it('cancels a queued job at once, reports an ended job as already ended, and exits 6 when some ids fail', async () => {
    const job = await submitJson(['x:v1']);
    const r = await runCliOk(home, ['cancel', job.job_id, '--reason', 'customer withdrew', '-o', 'json']);
    const rows = z.array(z.object({ job_id: z.string(), status: z.string(), job: Job })).parse(JSON.parse(r.stdout));
    expect(rows[0]).toMatchObject({ job_id: job.job_id, status: 'cancelled', job: { state: 'cancelled', cancel_reason: 'customer withdrew' } });
    const again = await runCliOk(home, ['cancel', job.job_id]);
    expect(again.stdout).toContain('already ended');
    const mixed = await runCli(home, ['cancel', job.job_id, 'job_01JD3K0000000000000000000A', '-o', 'json']);
    expect(mixed.code).toBe(6);
    // the output says which job failed, not only that one did
    expect(JSON.parse(mixed.stdout)).toEqual([
      expect.objectContaining({ job_id: job.job_id, status: 'already_terminal' }),
      { job_id: 'job_01JD3K0000000000000000000A', status: 'error', error: { code: 'NOT_FOUND', message: 'job job_01JD3K0000000000000000000A not found' } },
    ]);
    const missing = await runCli(home, ['cancel', 'job_01JD3K0000000000000000000A']);
    expect(missing.code).toBe(5);
    // One failing id gets the same row as with several (a script must learn which job failed).
    const one = await runCli(home, ['cancel', 'job_01JD3K0000000000000000000A', '-o', 'json']);
    expect(one.code).toBe(5);
    expect(JSON.parse(one.stdout)).toEqual([
      { job_id: 'job_01JD3K0000000000000000000A', status: 'error', error: { code: 'NOT_FOUND', message: 'job job_01JD3K0000000000000000000A not found' } },
    ]);
    expect(one.stderr).toContain('error: job job_01JD3K0000000000000000000A not found');
  });
});

describe('cancel of several ids, one of them not a job id', () => {
  // Regression: one typo among the ids (a stray line piped through xargs) refused the whole command:
  // the jobs that were named right kept running. Each id gets its outcome, as kubectl delete and
  // docker rm give each name theirs; the malformed one is a failed row, and the exit code says some failed.
  it('cancels the valid ids, gives the malformed one a failed row naming the rule, and exits 6', async () => {
    const a = await submitJson(['x:v1']);
    const b = await submitJson(['x:v1']);
    const r = await runCli(home, ['cancel', a.job_id, 'foo', b.job_id, '-o', 'json']);
    expect(r.code).toBe(6);
    const rule = '"foo" is not a job id: job ids look like job_ followed by 26 ULID characters (job_01JD3K...)';
    expect(JSON.parse(r.stdout)).toEqual([
      expect.objectContaining({ job_id: a.job_id, status: 'cancelled' }),
      { job_id: 'foo', status: 'error', error: { code: 'VALIDATION', message: rule } },
      expect.objectContaining({ job_id: b.job_id, status: 'cancelled' }),
    ]);
    expect(r.stderr).toContain('error: 1 of 3 jobs could not be cancelled');
    // The table says it on its row too.
    const c = await submitJson(['x:v1']);
    const t = await runCli(home, ['cancel', 'job_nope', c.job_id]);
    expect(t.code).toBe(6);
    expect(t.stdout).toMatch(/job_nope\s+not cancelled: "job_nope" is not a job id/);
    expect(t.stdout).toMatch(new RegExp(`${c.job_id}\\s+cancelled`));
  });

  it('ids that are all malformed are a usage error (exit 2) before the store is opened: nothing to try', async () => {
    const r = await runCli(home, ['cancel', 'foo', 'bar']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: "foo", "bar" are not job ids: job ids look like job_ followed by 26 ULID characters');
    expect(r.stdout).toBe('');
  });
});

describe('filters are checked as list and dlq list check them (exit 2), an unknown job is exit 5', () => {
  it('list refuses --since after --until, as dlq list does', async () => {
    const r = await runCli(home, ['list', '--since', '1m', '--until', '6h']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: --since \(\S+\) must be before --until \(\S+\)/);
  });

  it("regression: list refuses an empty --state ('' or queued,,running) instead of listing everything", async () => {
    for (const state of ['', 'queued,,running', ' , ']) {
      const r = await runCli(home, ['list', '--state', state]);
      expect(r.code, JSON.stringify(state)).toBe(2);
      expect(r.stderr).toContain(`error: --state ${JSON.stringify(state)}: a state is empty; use queued, scheduled, running`);
      expect(r.stdout).toBe('');
    }
  });

  it('stats, tail and dlq check refuse a queue name no queue can have, with the rule list uses', async () => {
    for (const args of [['list'], ['stats'], ['tail'], ['dlq', 'check']]) {
      const r = await runCli(home, [...args, '--queue', 'bad q']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('error: --queue "bad q": a queue name must be 1-128 characters');
    }
  });

  it('tail --job of a well-formed id no job has exits 5, as inspect does', async () => {
    const r = await runCli(home, ['tail', '--job', 'job_01JD3K0000000000000000000A']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('error: job job_01JD3K0000000000000000000A not found');
    expect(r.stdout).toBe('');
  });
});

describe('tail', () => {
  it('prints events as NDJSON lines with a type field (JobEvent schema)', async () => {
    const job = await submitJson(['x:v1', '--queue', 'tailq']);
    await runCliOk(home, ['cancel', job.job_id]);
    const events = parseNdjson((await runCliOk(home, ['tail', '--job', job.job_id, '-o', 'ndjson'])).stdout).map((e) => JobEvent.parse(e));
    expect(events.map((e) => e.type)).toEqual(['submitted', 'cancelled']);
    const q = parseNdjson((await runCliOk(home, ['tail', '--queue', 'tailq', '-o', 'ndjson'])).stdout).map((e) => JobEvent.parse(e));
    expect(q.every((e) => e.queue === 'tailq')).toBe(true);
  });

  it('without --since a queue tail starts with the last 20 events; --events N|all and --since show more', async () => {
    const { SqliteBackend } = await import('../../src/backend/sqlite/index.js');
    const seed = new SqliteBackend({ path: home.dataUrl.slice('sqlite:'.length) });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await seed.submit({ workflow: 'x:v1', queue: 'lastq' })).job.job_id);
    await seed.close();
    const tailIds = async (args: string[]) => parseNdjson((await runCliOk(home, ['tail', '--queue', 'lastq', ...args, '-o', 'ndjson'])).stdout).map((e) => JobEvent.parse(e).job_id);
    expect(await tailIds([])).toEqual(ids.slice(5));
    expect(await tailIds(['--events', '3'])).toEqual(ids.slice(22));
    expect(await tailIds(['--events', 'all'])).toEqual(ids);
    expect(await tailIds(['--since', '1h'])).toEqual(ids);
    expect((await runCli(home, ['tail', '--events', 'many'])).code).toBe(2);
  });

  it('--job J --follow ends with exit 0 once J ends (and at once for a job that already ended)', async () => {
    const job = await submitJson(['x:v1', '--queue', 'followjob']);
    const child = spawnCli(home, ['tail', '--job', job.job_id, '--follow', '-o', 'ndjson']);
    child.stdin.end();
    const done = collect(child);
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await pollUntil(() => out.includes('"submitted"'), { what: 'the submitted event' });
    await runCliOk(home, ['cancel', job.job_id]);
    const r = await done;
    expect(r.code).toBe(0);
    expect(parseNdjson(r.stdout).map((e) => JobEvent.parse(e).type)).toEqual(['submitted', 'cancelled']);
    const again = await runCliOk(home, ['tail', '--job', job.job_id, '--follow', '-o', 'ndjson']);
    expect(parseNdjson(again.stdout).map((e) => JobEvent.parse(e).type)).toEqual(['submitted', 'cancelled']);
  });

  it('regression: --events 0 --follow prints only new events (it printed the whole history first)', async () => {
    const old = await submitJson(['x:v1', '--queue', 'zeroq']);
    const child = spawnCli(home, ['tail', '--queue', 'zeroq', '--events', '0', '--follow', '-o', 'ndjson']);
    child.stdin.end();
    const done = collect(child);
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    // a new job each round until the follow prints one (it may start after the first few)
    await pollUntil(async () => {
      await submitJson(['x:v1', '--queue', 'zeroq']);
      return out.includes('"submitted"');
    }, { what: 'a new event in tail --events 0 --follow' });
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(0);
    expect(parseNdjson(r.stdout).map((e) => JobEvent.parse(e).job_id)).not.toContain(old.job_id);
  });

  it('--follow prints new events as they happen, and Ctrl-C ends it with exit 0', async () => {
    const child = spawnCli(home, ['tail', '--queue', 'followq', '--follow', '-o', 'ndjson']);
    child.stdin.end();
    const done = collect(child);
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const job = await submitJson(['x:v1', '--queue', 'followq']);
    await pollUntil(() => out.includes(job.job_id), { what: 'the submitted event in tail --follow' });
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(0);
    // (started before the first submit, it says once that the queue has had no job yet)
    expect(r.stderr.replace(/^queue followq has never had a job in this store( \(queues here: [^)]*\))?; waiting for its events \(Ctrl-C to stop\)\n/, '')).toBe('');
    const events = parseNdjson(r.stdout).map((e) => JobEvent.parse(e));
    expect(events.map((e) => [e.type, e.job_id])).toContainEqual(['submitted', job.job_id]);
  });
});

describe('demo', () => {
  it('works in a fresh home with no configuration and tells the user what to try next', async () => {
    const fresh = makeCliHome();
    try {
      const r = await runCliOk(fresh, ['demo']);
      expect(r.stdout.trim().split('\n')).toHaveLength(6);
      expect(r.stderr).toContain('the embedded default');
      expect(r.stderr).toContain('agentq inspect job_');
      const listed = await runCliOk(fresh, ['list', '--queue', 'demo']);
      expect(listed.stdout.trim().split('\n')).toHaveLength(6);
    } finally {
      fresh.cleanup();
    }
  });
  it('counts its sample jobs in words that agree with the number (1 sample job, 7 sample jobs)', async () => {
    expect((await runCliOk(home, ['demo', '--jobs', '1', '--queue', 'one-sample', '--no-worker'])).stderr).toContain('submitted 1 sample job to queue "one-sample"');
    expect((await runCliOk(home, ['demo', '--jobs', '7', '--queue', 'seven-samples', '--no-worker'])).stderr).toContain('submitted 7 sample jobs to queue "seven-samples"');
  });
  // Regression: a first Ctrl-C ended the demo on the spot, and the jobs its worker was running
  // stayed "running" until their 30 s leases ran out.
  it('Ctrl-C while its worker runs stops the worker as `worker` stops (no job left running) and exits 130 saying so', async () => {
    const fresh = makeCliHome();
    try {
      const child = spawnCli(fresh, ['demo', '--jobs', '1000', '--queue', 'stopdemo']);
      const done = collect(child, 60_000);
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      await pollUntil(() => stderr.includes('is processing them'), { timeoutMs: 30_000, what: 'the demo worker to start' });
      const running = async () => (await runCliOk(fresh, ['list', '--queue', 'stopdemo', '--state', 'running', '-o', 'ndjson'])).stdout.trim();
      await pollUntil(async () => (await running()) !== '', { timeoutMs: 30_000, what: 'a job running' });
      child.kill('SIGINT');
      const r = await done;
      expect(r.code).toBe(130);
      expect(r.stderr).toMatch(/error: the demo was stopped by SIGINT: its worker finished or released the jobs it was running; \d+ sample jobs were not processed \(they stay queued\)/);
      expect(await running()).toBe('');
    } finally {
      fresh.cleanup();
    }
  }, 90_000);

  it('with AGENTQ_URL set elsewhere, the commands it suggests name the store the demo used', async () => {
    const fresh = makeCliHome();
    try {
      const env = { AGENTQ_URL: `sqlite:${fresh.dir}/elsewhere.db` };
      const r = await runCliOk(fresh, ['demo'], { env });
      const suggested = /agentq --url (\S+) inspect (job_\w+)/.exec(r.stderr);
      expect(suggested, r.stderr).not.toBeNull();
      expect(suggested![1]).toBe(fresh.dataUrl);
      // Typed as suggested, it finds the sample job despite AGENTQ_URL.
      await runCliOk(fresh, ['--url', suggested![1]!, 'inspect', suggested![2]!], { env });
    } finally {
      fresh.cleanup();
    }
  });
});
