/**
 * `agentq worker -- CMD` and `agentq job ...` end to end: the built CLI runs
 * real handler scripts against the embedded store of a throwaway home. Each
 * test observes the outcome through `agentq inspect -o json`, as an operator
 * or a script would.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Job } from '../../src/core/schemas.js';
import { AGENTQ_BIN, collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';

let home: CliHome;
beforeEach(() => {
  home = makeCliHome('agentq-e2e-worker-');
});
afterEach(() => home.cleanup());

/** A bash handler script in the home; `$AQ` runs the CLI (same binary as the worker). */
function handler(name: string, body: string): string {
  const p = join(home.dir, name);
  writeFileSync(p, `#!/usr/bin/env bash\nset -u\nAQ="${process.execPath} ${AGENTQ_BIN}"\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** Running, not a zombie left for a parent that never reaps it (a container's PID 1 may not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function submit(...args: string[]): Promise<string> {
  return (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', ...args])).stdout.trim();
}

async function inspect(id: string): Promise<Job> {
  return Job.parse(JSON.parse((await runCliOk(home, ['inspect', id, '-o', 'json'])).stdout));
}

describe('agentq worker: the handler protocol', () => {
  it('the start line keeps the handler command recognisable but not the secrets in its arguments', async () => {
    // `-- ./agent.sh --api-key sk-...` was printed whole: the key went to every log the worker's stderr reaches.
    const h = handler('agent.sh', 'echo -n ok');
    const secrets = ['sk-live-abc123', 'tok-456', 'pw789', 'shh-000', 'envsecret-1'];
    const r = await runCliOk(home, [
      'worker', '--queue', 'w', '--drain', '--', h,
      '--api-key', 'sk-live-abc123', '--auth-token=tok-456', '--db', 'redis://app:pw789@cache:6379/0', '--client-secret', 'shh-000', 'OPENAI_API_KEY=envsecret-1', '--model', 'opus',
    ]);
    const start = r.stderr.split('\n').find((l) => l.includes(': queue w,'))!;
    for (const secret of secrets) expect(r.stderr).not.toContain(secret);
    expect(start).toContain(`${h} --api-key *** --auth-token=*** --db redis://app:***@cache:6379/0 --client-secret *** OPENAI_API_KEY=*** --model opus`);
  });

  it('a handler that reported an error with `job error` and then exited 0 succeeds (exit 0 is success), and the worker warns of the report it did not use', async () => {
    // The report was dropped without a word: the handler's author, who called `job error` meaning
    // the job to fail, could not tell why it succeeded. A handler may also report and then recover
    // (its own retry worked): the exit status stays the authority, the report is named on stderr.
    const id = await submit('--max-attempts', '1');
    const h = handler('recovered.sh', `$AQ job error PROVIDER_429 "rate limited by the model provider"\necho -n recovered`);
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--quiet', '--', h]);
    expect(await inspect(id)).toMatchObject({ state: 'succeeded', result: 'recovered' });
    expect(r.stderr).toContain(`${id} attempt 1: the handler reported PROVIDER_429 ("rate limited by the model provider") with agentq job error, then exited 0: the job succeeded and the report was not used`);
  });

  it('runs each job: envelope on stdin, env set, stdout is the result, exit codes decide the outcome', async () => {
    const ok = await submit('--input', 'ok', '--trace-id', 'tr-1');
    const retry = await submit('--input', 'retry', '--max-attempts', '3');
    const perm = await submit('--input', 'perm', '--max-attempts', '3');
    const coded = await submit('--input', 'coded', '--max-attempts', '1');
    const h = handler(
      'h.sh',
      `input=$(cat)
kind=$(node -e 'console.log(JSON.parse(process.argv[1]).input)' "$input")
echo "log line for $kind" >&2
case "$kind" in
  ok) echo -n "done:$AGENTQ_JOB_ID:$AGENTQ_ATTEMPT:$AGENTQ_TRACE_ID:$AGENTQ_QUEUE:$AGENTQ_TENANT" ;;
  retry) exit 75 ;;
  perm) echo "missing field title" >&2; exit 3 ;;
  coded) $AQ job error BUDGET_EXCEEDED "spent 120k of 100k tokens"; exit 75 ;;
esac`,
    );
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--concurrency', '2', '--worker-version', 'v9', '--drain', '--', h]);

    expect(await inspect(ok)).toMatchObject({ state: 'succeeded', result: `done:${ok}:1:tr-1:w:default` });
    expect(await inspect(retry)).toMatchObject({ state: 'scheduled', last_error: { code: 'TRANSIENT', retryable: true } });
    const p = await inspect(perm);
    expect(p).toMatchObject({ state: 'dead', dead: { reason: 'permanent', error_code: 'HANDLER_FAILED', worker_version: 'v9' } });
    expect(p.dead!.error_message).toContain('exited with 3');
    expect(p.dead!.error_message).toContain('missing field title');
    // A reported code from the table wins over exit 75: budget errors are permanent.
    expect(await inspect(coded)).toMatchObject({
      state: 'dead',
      dead: { reason: 'permanent', error_code: 'BUDGET_EXCEEDED', error_message: 'spent 120k of 100k tokens' },
    });
    // stderr is passed through, prefixed with the job id.
    expect(r.stderr).toContain(`[${ok}] log line for ok`);
    expect(r.stderr).toMatch(new RegExp(`${perm} attempt 1: failed HANDLER_FAILED: .* → moved to the DLQ`));
    // The closing tally.
    expect(r.stderr).toContain('worker: 1 succeeded, 1 failed and scheduled for a retry, 2 moved to the DLQ');
    // Regression: --drain stopped with exit 0 and no word about the retry left waiting its backoff.
    expect(r.stderr).toContain(
      'worker: queue w has nothing claimable; --drain: stopping (1 job of it is scheduled for later, a retry waiting out its backoff or a --run-at, and is not waited for: agentq list --queue w --state scheduled)',
    );
  });

  it('checkpoint and effect act on the current lease; a done effect is not run again; a stale fence is refused', async () => {
    const id = await submit('--input', 'x');
    const sideFile = join(home.dir, 'side-effects.log');
    const h = handler(
      'h.sh',
      `$AQ job checkpoint '{"step":2,"note":"half way"}' || exit 1
first=$($AQ job effect send-invoice -- sh -c 'echo "$AGENTQ_IDEMPOTENCY_KEY" >> ${sideFile}; echo -n invoice-42')
second=$($AQ job effect send-invoice -- sh -c 'echo "$AGENTQ_IDEMPOTENCY_KEY" >> ${sideFile}; echo -n invoice-43')
AGENTQ_LEASE_FENCE=999 $AQ job checkpoint '{"stale":true}' 2>/dev/null
stale=$?
echo -n "$first|$second|$stale"`,
    );
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    const job = await inspect(id);
    expect(job.state).toBe('succeeded');
    // The stale write exited 1 (LEASE_LOST) and changed nothing.
    expect(job.result).toBe('invoice-42|invoice-42|1');
    expect(job.checkpoint).toEqual({ step: 2, note: 'half way' });
    expect(job.effects).toEqual([expect.objectContaining({ key: 'send-invoice', status: 'done', result: 'invoice-42' })]);
    expect(readFileSync(sideFile, 'utf8')).toBe(`${id}:send-invoice\n`);
  });

  it('job usage adds to the attempt\'s record under the current lease; a stale fence and a bad figure are refused; inspect shows it', async () => {
    const id = await submit('--input', 'x');
    const h = handler(
      'h.sh',
      `$AQ job usage --tokens 1200 --cost-usd 0.02 || exit 1
$AQ job usage --tokens 300 || exit 1
AGENTQ_LEASE_FENCE=999 $AQ job usage --tokens 5 --cost-usd 9 2>/dev/null
stale=$?
$AQ job usage --cost-usd=-1 2>/dev/null
neg=$?
$AQ job usage 2>/dev/null
none=$?
echo -n "$stale|$neg|$none"`,
    );
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    const job = await inspect(id);
    // The stale write exited 1 (LEASE_LOST), the bad ones 2 (usage), and none of them added anything.
    expect(job).toMatchObject({ state: 'succeeded', result: '1|2|2' });
    expect(job.attempts[0]!.usage).toEqual({ tokens: 1500, cost_usd: 0.02 });
    const text = (await runCliOk(home, ['inspect', id, '-o', 'table'])).stdout;
    expect(text).toMatch(/usage: +1500 tokens, \$0\.02 \(reported by 1 of 1 attempts\)/);
    expect(text).toContain('(spent 1500 tokens, $0.02)');
    const plain = (await runCliOk(home, ['inspect', id, '-o', 'plain'])).stdout;
    expect(plain).toMatch(/^1\t.*\tsucceeded\t\t1500\t0\.02$/m);
  });

  it('job usage over the job\'s budget records the spend, exits 1 naming it, and the attempt fails BUDGET_EXCEEDED (not retried)', async () => {
    const id = await submit('--input', 'x', '--budget-tokens', '1000', '--max-attempts', '3');
    const errs = join(home.dir, 'errs');
    const h = handler(
      'h.sh',
      `$AQ job usage --tokens 1000 || exit 9
$AQ job usage --tokens 1 2>> ${errs}
echo "usage exit $?" >> ${errs}
exit 75`,
    );
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    const job = await inspect(id);
    // exactly the ceiling is within it; one token more is over
    expect(job).toMatchObject({ state: 'dead', dead: { reason: 'permanent', error_code: 'BUDGET_EXCEEDED' } });
    expect(job.dead!.error_message).toBe(`job ${id} is over its budget: it spent 1001 tokens of its 1000`);
    expect(job.attempts.map((a) => a.usage)).toEqual([{ tokens: 1001, cost_usd: 0 }]);
    const said = readFileSync(errs, 'utf8');
    expect(said).toContain(`job ${id} is over its budget: it spent 1001 tokens of its 1000`);
    expect(said).toContain('usage exit 1');
    // the operator is told a redrive would not help
    const text = (await runCliOk(home, ['inspect', id, '-o', 'table'])).stdout;
    expect(text).toMatch(/redrive: +skipped: its budget is used up \(it spent 1001 tokens of its 1000\)/);
    // and the redrive plan skips it, saying why
    const plan = JSON.parse((await runCliOk(home, ['dlq', 'redrive', '--queue', 'w', '--dry-run', '-o', 'json'])).stdout) as { items: Array<{ job_id: string; verdict: string; detail: string }> };
    expect(plan.items).toEqual([expect.objectContaining({ job_id: id, verdict: 'skip:over_budget', detail: 'its budget is used up (it spent 1001 tokens of its 1000): it would fail again at once' })]);
  });

  it('job effect: a command that cannot start records nothing (exit 2); a killed one names its signal; multibyte output passes through whole', async () => {
    const id = await submit('--input', 'x');
    const errs = join(home.dir, 'errs');
    const h = handler(
      'h.sh',
      `$AQ job effect missing -- ./no-such-effect.sh 2>> ${errs}
missing=$?
$AQ job effect script-missing -- node no-such-effect.js 2>> ${errs}
missing=$missing$?
$AQ job effect killed -- sh -c 'kill -KILL $$' 2>> ${errs}
killed=$?
# é split across two pipe writes: the passthrough must not turn it into two replacement characters
split=$($AQ job effect split -- sh -c "printf 'caf\\303'; sleep 0.2; printf '\\251'")
echo -n "$missing|$killed|$split"`,
    );
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    const job = await inspect(id);
    expect(job.result).toBe('22|137|café');
    // Nothing external ran for "missing" (nor for node told to run a file that is not there): no
    // effect record, so the job is not partially completed.
    expect(job.effects.map((e) => [e.key, e.status])).toEqual([
      ['killed', 'started'],
      ['split', 'done'],
    ]);
    expect(job.effects.find((e) => e.key === 'split')!.result).toBe('café');
    const stderr = readFileSync(errs, 'utf8');
    expect(stderr).toContain('effect command "./no-such-effect.sh" is not an executable file');
    expect(stderr).toContain('effect command "node" cannot run: the script it runs, no-such-effect.js, is not there');
    expect(stderr).toContain('effect killed: sh was killed by SIGKILL; recorded as started, not done');
  });

  it('regression: job effect records at most 64 KiB of its command\'s output (5 MB were stored); all of it is passed through', async () => {
    const id = await submit('--input', 'x');
    const errs = join(home.dir, 'errs');
    const h = handler('h.sh', `$AQ job effect big -- sh -c 'head -c 200000 /dev/zero | tr "\\0" E' 2>> ${errs} | wc -c | tr -d ' '`);
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    const job = await inspect(id);
    expect(job.result!.trim()).toBe('200000');
    // (64 KiB in all with the marker: the store keeps no more of an effect's result)
    expect(job.effects[0]!.result).toBe(`${'E'.repeat(65472)}…[truncated ${200000 - 65472} bytes]`);
    expect(readFileSync(errs, 'utf8')).toContain('effect big: its output was cut to the first 65472 bytes in the recorded result (134528 more bytes were printed but not recorded)');
  });

  // Regression: a tab in a handler's log line (Go and Python log formats, tables) was shown as a
  // literal "\t"; the pass-through is log lines, not columns agentq prints, so tabs stay tabs.
  it('stderr pass-through keeps tabs; control characters are still made visible', async () => {
    await submit('--input', 'x');
    const h = handler('h.sh', `printf 'level=info\\tmsg=started\\n' >&2\nprintf 'bell\\a and \\033[31mred\\n' >&2`);
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    expect(r.stderr).toMatch(/\] level=info\tmsg=started\n/);
    expect(r.stderr).toMatch(/\] bell\\x07 and \\x1b\[31mred\n/);
  });

  it('-o ndjson streams every worker event as a JSON line on stdout', async () => {
    const id = await submit('--input', 'x');
    const h = handler('h.sh', `echo -n fine`);
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--quiet', '-o', 'ndjson', '--', h]);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; jobId?: string; at: string });
    expect(events.map((e) => e.type)).toEqual(['started', 'claimed', 'succeeded', 'idle', 'stopping', 'stopped']);
    expect(events.find((e) => e.type === 'succeeded')).toMatchObject({ jobId: id, attempt: 1 });
    for (const e of events) expect(Number.isNaN(Date.parse(e.at))).toBe(false);
  });

  it('caps the result and marks the cut', async () => {
    const id = await submit('--input', 'x');
    const h = handler('h.sh', `printf 'a%.0s' $(seq 1 100)`);
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--max-result-bytes', '10', '--', h]);
    expect((await inspect(id)).result).toBe('aaaaaaaaaa…[truncated 90 bytes]');
  });

  // Regression: agentq publishes its own colour decision as FORCE_COLOR (for chalk and Ink) and
  // drops NO_COLOR, and turns the AWS SDK's Node warning off; handlers inherited all three, so a
  // worker on a terminal (or with --color always) had its handlers colour their stdout, the result.
  it("handlers get the user's FORCE_COLOR, NO_COLOR, DEBUG and AWS SDK setting, not the ones agentq set for itself", async () => {
    const h = handler('env.sh', `echo "FC=\${FORCE_COLOR-unset} NC=\${NO_COLOR-unset} AWS=\${AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED-unset} DEBUG=\${DEBUG-unset}"`);
    const plain = await submit('--input', 'x');
    await runCliOk(home, ['--color', 'always', 'worker', '--queue', 'w', '--drain', '--', h], { env: { NO_COLOR: undefined, FORCE_COLOR: undefined } });
    expect((await inspect(plain)).result).toBe('FC=unset NC=unset AWS=unset DEBUG=unset\n');
    const noColour = await submit('--input', 'x');
    await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', h], { env: { NO_COLOR: '1', FORCE_COLOR: undefined, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false', DEBUG: 'app:*' } });
    expect((await inspect(noColour)).result).toBe('FC=unset NC=1 AWS=false DEBUG=app:*\n');
  });
});

describe('agentq worker: the store file removed or replaced under it', () => {
  it('stops claiming and exits 78 naming the rule, instead of running on in the old file no other process sees', async () => {
    const first = await submit('--input', 'a');
    const h = handler('h.sh', `cat >/dev/null\necho -n ok`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--', h]);
    const done = collect(worker, 30_000);
    await pollUntil(async () => (await inspect(first)).state === 'succeeded', { what: 'the first job done' });
    // A store reset: the file and its WAL removed, a new store made at the path by the next submit.
    const db = home.dataUrl.slice('sqlite:'.length);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    const second = await submit('--input', 'b');
    const r = await done;
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(new RegExp(`the agentq store at ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was (removed|replaced by another file) since this process opened it`));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect((await inspect(second)).state).toBe('queued');
  });

  it('tail --follow exits 78 too, rather than follow the old file (reads check at most once a second)', async () => {
    const first = await submit('--input', 'a');
    const tail = spawnCli(home, ['tail', '--follow']);
    const done = collect(tail, 30_000);
    let out = '';
    tail.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await pollUntil(() => out.includes(first), { what: 'the first event shown' });
    const db = home.dataUrl.slice('sqlite:'.length);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    await submit('--input', 'b');
    const r = await done;
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`the agentq store at ${db} was`);
  });
});

describe('agentq worker: stopping work', () => {
  it('cancel of a running job reaches the handler as SIGTERM at the next heartbeat; the job ends cancelled', async () => {
    const id = await submit('--input', 'x');
    const started = join(home.dir, 'started');
    const termed = join(home.dir, 'termed');
    const h = handler('h.sh', `trap 'echo term > ${termed}; exit 143' TERM\ntouch ${started}\nwhile true; do sleep 0.05; done`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--heartbeat', '100ms', '--lease', '5s', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(started), { what: 'handler started' });
    await runCliOk(home, ['cancel', id, '--reason', 'customer withdrew']);
    await pollUntil(async () => (await inspect(id)).state === 'cancelled', { what: 'job cancelled' });
    expect(existsSync(termed)).toBe(true);
    expect((await inspect(id)).outcome).toBe('cancelled');
    worker.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('worker: 0 succeeded, 0 failed and scheduled for a retry, 0 moved to the DLQ, 0 expired, 1 cancelled,');
  });

  it('a running job whose deadline passes is stopped and ends expired', async () => {
    const id = await submit('--input', 'x', '--deadline', '2s');
    const h = handler('h.sh', `while true; do sleep 0.05; done`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--heartbeat', '100ms', '--lease', '10s', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(async () => (await inspect(id)).state === 'expired', { what: 'job expired', timeoutMs: 30_000 });
    expect((await inspect(id)).outcome).toBe('expired');
    worker.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(0);
    // Regression: the closing tally said "0 expired, 1 stopped (cancel/deadline)" for this job.
    expect(r.stderr).toContain('worker: 0 succeeded, 0 failed and scheduled for a retry, 0 moved to the DLQ, 1 expired, 0 cancelled,');
  });

  it('SIGTERM: no new claims, the running job gets the grace period, then is stopped and its lease released', async () => {
    const a = await submit('--input', 'a', '--max-attempts', '1');
    await submit('--input', 'b');
    const started = join(home.dir, 'started');
    const h = handler('h.sh', `touch ${started}\nwhile true; do sleep 0.05; done`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--grace', '200ms', '--kill-grace', '1s', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(started), { what: 'handler started' });
    worker.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('lease released');
    const list = JSON.parse((await runCliOk(home, ['list', '--queue', 'w', '-o', 'json'])).stdout) as Job[];
    // Both jobs are claimable again and the released attempt did not count against max_attempts 1.
    expect(list.map((j) => j.state)).toEqual(['queued', 'queued']);
    expect(list.find((j) => j.job_id === a)!.attempts.at(-1)?.outcome).toBe('released');
  });

  it('SIGHUP (the terminal closed) stops the worker as SIGTERM does; a second one exits at once (129)', async () => {
    const id = await submit('--input', 'a', '--max-attempts', '1');
    const started = join(home.dir, 'started');
    const h = handler('h.sh', `touch ${started}\nwhile true; do sleep 0.05; done`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--grace', '200ms', '--kill-grace', '1s', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(started), { what: 'handler started' });
    worker.kill('SIGHUP');
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('(send SIGHUP again to exit at once)');
    expect(r.stderr).toContain('lease released');
    expect(await inspect(id)).toMatchObject({ state: 'queued' });

    rmSync(started);
    const again = spawnCli(home, ['worker', '--queue', 'w', '--grace', '60s', '--', h]);
    const ended = collect(again, 60_000);
    let stderr = '';
    again.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    await pollUntil(() => existsSync(started), { what: 'handler started again' });
    again.kill('SIGHUP');
    await pollUntil(() => stderr.includes('worker: stopping'), { what: 'the worker to take the first SIGHUP' });
    again.kill('SIGHUP');
    expect((await ended).code).toBe(129);
  });

  it('what a handler leaves running in the background is ended with its attempt (success, retry), not left behind a --drain worker', async () => {
    const ok = await submit('--input', 'ok');
    const retry = await submit('--input', 'retry', '--max-attempts', '3');
    const pids = join(home.dir, 'pids');
    const h = handler(
      'h.sh',
      `( while true; do sleep 0.05; done ) &
echo $! >> ${pids}
case "$AGENTQ_JOB_ID" in ${retry}) exit 75 ;; esac
echo -n fine`,
    );
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--kill-grace', '1s', '--', h]);
    expect(r.code).toBe(0);
    expect(await inspect(ok)).toMatchObject({ state: 'succeeded', result: 'fine' });
    expect(await inspect(retry)).toMatchObject({ state: 'scheduled' });
    const left = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(left).toHaveLength(2);
    expect(left.filter(running)).toEqual([]);
  });

  // Regression: a process the handler started in a session of its own (`setsid`, a daemon that
  // detaches) ran on after the handler had exited and after the worker was gone, even after a
  // second SIGTERM, still calling what it called, beside the job's next attempt.
  it('what a handler started in a session of its own (setsid) is ended with its attempt, and with a worker that exits at once', async () => {
    await submit('--input', 'ok');
    const pids = join(home.dir, 'pids');
    const loop = `echo \\$\\$ >> ${pids}; while true; do sleep 0.05; done`;
    const h = handler('h.sh', `setsid sh -c "${loop}" </dev/null >/dev/null 2>&1 &
while [ ! -s ${pids} ]; do sleep 0.02; done
echo -n fine`);
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--kill-grace', '1s', '--', h]);
    expect(r.code).toBe(0);
    const [detached] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(running(detached!), 'after a --drain worker exited').toBe(false);

    rmSync(pids);
    await submit('--input', 'a');
    const h2 = handler('h2.sh', `setsid -f sh -c "trap '' TERM; ${loop}" </dev/null >/dev/null 2>&1\nsleep 60 & wait`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--grace', '60s', '--', h2]);
    const done = collect(worker, 60_000);
    let stderr = '';
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    await pollUntil(() => existsSync(pids) && readFileSync(pids, 'utf8').trim() !== '', { what: 'the detached daemon started' });
    const daemon = Number(readFileSync(pids, 'utf8').trim());
    worker.kill('SIGTERM');
    await pollUntil(() => stderr.includes('worker: stopping'), { what: 'the worker to take the first SIGTERM' });
    worker.kill('SIGTERM');
    expect((await done).code).toBe(143);
    await pollUntil(() => !running(daemon), { timeoutMs: 10_000, what: 'the detached daemon to be gone' });
  });

  // Regression: a supervisor that stops the service signals every process of it at once
  // (systemd's KillMode=control-group, which the README recommends; `kill -TERM -- -PGID`). The
  // handler died of that SIGTERM before its grace began and the attempt failed as a permanent
  // HANDLER_FAILED: every deploy sent the jobs in flight to the DLQ.
  it.each([
    ['dies of it', ''],
    ['exits 143 (128 + SIGTERM) on it', "trap 'exit 143' TERM\n"],
  ])('a handler that %s, the same SIGTERM that stops the worker (a supervisor signalling the whole service), is released, not failed', async (_how, trap) => {
    const id = await submit('--input', 'a', '--max-attempts', '1');
    const pidFile = join(home.dir, 'handler.pid');
    const h = handler('h.sh', `${trap}echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}\nsleep 60 & wait`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(pidFile), { what: 'handler started' });
    const handlerPid = Number(readFileSync(pidFile, 'utf8'));
    process.kill(-handlerPid, 'SIGTERM');
    worker.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const job = await inspect(id);
    expect(job.state, r.stderr).toBe('queued');
    expect(job.attempts.at(-1)?.outcome).toBe('released');
  });

  // A handler killed from outside (the OOM killer, an operator) did not fail by itself: retried.
  it('a handler killed by a signal the worker did not send fails as a retryable HANDLER_KILLED', async () => {
    const id = await submit('--input', 'a', '--max-attempts', '3');
    const h = handler('h.sh', 'echo "about to be killed" >&2\nkill -KILL $$');
    const r = await runCli(home, ['worker', '--queue', 'w', '--drain', '--', h]);
    expect(r.code, r.stderr).toBe(0);
    const job = await inspect(id);
    expect(job.state).toBe('scheduled');
    expect(job.last_error).toMatchObject({ code: 'HANDLER_KILLED', retryable: true });
    expect(job.last_error!.message).toMatch(/h\.sh was killed by SIGKILL, not by the worker .*: about to be killed$/);
  });

  // Regression: SIGQUIT (Ctrl-\ in a terminal) killed the worker outright (Node's default) and
  // its handlers, in process groups of their own, ran on as orphans with their leases: the job
  // ran twice once the lease expired.
  it('SIGQUIT (Ctrl-\\) exits at once (131) and takes the running handlers with it', async () => {
    await submit('--input', 'a');
    const pidFile = join(home.dir, 'handler.pid');
    const h = handler('h.sh', `echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}\nsleep 60 & wait`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(pidFile), { what: 'handler started' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    worker.kill('SIGQUIT');
    expect((await done).code).toBe(131);
    await pollUntil(() => !running(pid), { timeoutMs: 10_000, what: 'the handler to be gone' });
  });

  // Regression: Ctrl-Z (SIGTSTP) suspended the worker, not its handlers (process groups of their
  // own): they ran on while no heartbeat kept their leases, so another worker took the jobs and
  // they ran twice. Suspending the worker now suspends its handlers; SIGCONT resumes both.
  it('SIGTSTP (Ctrl-Z) suspends the handlers with the worker; SIGCONT resumes them', async () => {
    await submit('--input', 'a');
    const pidFile = join(home.dir, 'handler.pid');
    const h = handler('h.sh', `echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}\nwhile true; do sleep 0.05; done`);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--grace', '200ms', '--kill-grace', '1s', '--', h]);
    const done = collect(worker, 60_000);
    await pollUntil(() => existsSync(pidFile), { what: 'handler started' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const state = (p: number) => /^\d+ \(.*\) (\S)/s.exec(readFileSync(`/proc/${p}/stat`, 'utf8'))?.[1];
    worker.kill('SIGTSTP');
    await pollUntil(() => state(worker.pid!) === 'T' && state(pid) === 'T', { what: 'the worker and its handler to be stopped' });
    worker.kill('SIGCONT');
    await pollUntil(() => state(worker.pid!) !== 'T' && state(pid) !== 'T', { what: 'both to run again' });
    worker.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('a second SIGTERM exits at once (143) and takes the running handlers with it (no job left running twice)', async () => {
    await submit('--input', 'a');
    await submit('--input', 'b');
    const pids = join(home.dir, 'pids');
    // the handler's own child (what a shell script starts) must go too: it is in the handler's group
    const h = handler('h.sh', `sleep 60 &
echo $! >> ${pids}
echo $$ >> ${pids}
wait`);
    // Its report directory (in TMPDIR) goes too, as it does on a graceful stop.
    const tmp = join(home.dir, 'tmp');
    mkdirSync(tmp);
    const worker = spawnCli(home, ['worker', '--queue', 'w', '--concurrency', '2', '--grace', '60s', '--', h], { env: { TMPDIR: tmp } });
    const done = collect(worker, 60_000);
    let stderr = '';
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const running = () => (existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').map(Number) : []);
    await pollUntil(() => running().length === 4, { what: 'two handlers and their children started' });
    worker.kill('SIGTERM');
    await pollUntil(() => stderr.includes('worker: stopping'), { what: 'the worker to take the first SIGTERM' });
    expect(stderr).toContain('(send SIGTERM again to exit at once)');
    expect(readdirSync(tmp)).toHaveLength(1);
    worker.kill('SIGTERM');
    expect((await done).code).toBe(143);
    expect(readdirSync(tmp)).toEqual([]);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await pollUntil(() => running().every((pid) => !alive(pid)), { timeoutMs: 10_000, what: 'the handlers and their children to be gone' });
  });
});

describe('agentq worker / job: usage errors', () => {
  // Regression: a TMPDIR the worker could not use ended it as "internal error … This is a bug".
  it('a TMPDIR it cannot make its report directory in stops it before claiming anything, naming TMPDIR (exit 78)', async () => {
    const id = await submit('--input', 'x');
    const r = await runCli(home, ['worker', '--queue', 'w', '--', 'true'], { env: { TMPDIR: join(home.dir, 'no-such-dir') } });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`error: the worker could not make its report directory in ${JSON.stringify(join(home.dir, 'no-such-dir'))} (TMPDIR): ENOENT`);
    expect(r.stderr).toContain('hint: Point TMPDIR at a directory this user can write');
    expect(r.stderr).not.toContain('This is a bug');
    expect((await inspect(id)).state).toBe('queued');
  });

  it('refuses a handler command that does not exist, before claiming anything (exit 2)', async () => {
    const id = await submit('--input', 'x');
    const r = await runCli(home, ['worker', '--queue', 'w', '--', './no-such-handler.sh']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no-such-handler.sh');
    // a shell given a script that is not there (it exits 127 for every job)
    const viaShell = await runCli(home, ['worker', '--queue', 'w', '--', 'bash', './no-such-handler.sh']);
    expect(viaShell.code).toBe(2);
    expect(viaShell.stderr).toContain('error: handler command "bash" cannot run: the script it runs, ./no-such-handler.sh, is not there');
    // regression: the hint spoke of a #! line the command does not have
    expect(viaShell.stderr).toContain("hint: Check the script's path (relative to the worker's working directory, ");
    expect(viaShell.stderr).not.toContain('#!');
    expect((await inspect(id)).state).toBe('queued');
  });

  // Regression: `-- node missing-file.js` (or python3 nosuch.py) started, and every job it claimed
  // failed with node's "Cannot find module" (exit 1), a permanent HANDLER_FAILED: the queue went to the DLQ.
  it('refuses an interpreter whose script is not there, naming the file, before claiming anything (exit 2)', async () => {
    const id = await submit('--input', 'x');
    for (const [argv, says] of [
      [['node', 'missing-file.js'], 'error: handler command "node" cannot run: the script it runs, missing-file.js, is not there'],
      [['env', 'A=1', 'node', '--enable-source-maps', 'dist/missing.js'], 'error: handler command "env" cannot run: it runs node through env, and the script it runs, dist/missing.js, is not there'],
    ] as const) {
      const r = await runCli(home, ['worker', '--queue', 'w', '--', ...argv]);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stderr).toContain("relative to the worker's working directory");
    }
    expect((await inspect(id)).state).toBe('queued');
  });

  it('refuses a handler whose #! interpreter is missing, or whose #!/usr/bin/env program is not on PATH, before claiming anything (exit 2)', async () => {
    const id = await submit('--input', 'x');
    for (const [line, says] of [
      ['#!/nonexistent/interpreter', 'the interpreter its #! line names (/nonexistent/interpreter) cannot run: /nonexistent/interpreter is not an executable file'],
      ['#!/usr/bin/env agentq-no-such-interpreter', 'its #! line runs agentq-no-such-interpreter through /usr/bin/env, and agentq-no-such-interpreter is not on PATH'],
      ['#!/usr/bin/env -S agentq-no-such-interpreter -u', 'its #! line runs agentq-no-such-interpreter through /usr/bin/env'],
      // Windows line ends: the kernel and env look for "bash\r" (this passed the check, then every spawn failed)
      ['#!/usr/bin/env bash\r', 'its #! line runs bash\\r through /usr/bin/env, and bash\\r is not on PATH'],
    ] as const) {
      const h = join(home.dir, 'bad-interpreter.sh');
      writeFileSync(h, `${line}\n`);
      chmodSync(h, 0o755);
      const r = await runCli(home, ['worker', '--queue', 'w', '--', h]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`error: handler command ${JSON.stringify(h)} cannot run: ${says}`);
    }
    expect((await inspect(id)).state).toBe('queued');
  });

  it('a handler that passes the start-up check but then cannot be started (its #! interpreter removed since) stops the worker (exit 2) instead of failing every job', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await submit('--input', `x${i}`, '--max-attempts', '1'));
    // The interpreter runs the first job (successfully) and removes itself: the next spawn fails.
    const interp = join(home.dir, 'vanishing-interpreter');
    writeFileSync(interp, `#!/bin/sh\nrm -f "${interp}"\n`);
    chmodSync(interp, 0o755);
    const h = join(home.dir, 'bad-interpreter.sh');
    writeFileSync(h, `#!${interp}\n`);
    chmodSync(h, 0o755);
    const r = await runCli(home, ['worker', '--queue', 'w', '--', h]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('worker: stopping — the handler command cannot run; no more jobs are claimed');
    expect(r.stderr).toMatch(/error: cannot run .*bad-interpreter\.sh: spawn .* ENOENT/);
    const states = await Promise.all(ids.map(async (id) => (await inspect(id)).state));
    // The second job was given to it (and, on its last attempt, is dead); the rest were never claimed.
    expect(states).toEqual(['succeeded', 'dead', 'queued', 'queued']);
  });

  // Regression: exit 127 from `env` (a `#!/usr/bin/env` interpreter that is not installed) was a
  // permanent HANDLER_FAILED, and the worker drained the queue into the DLQ.
  it('a handler whose #!/usr/bin/env interpreter is uninstalled while the worker runs (exit 127) stops the worker (exit 2) instead of failing every job', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await runCliOk(home, ['submit', 'task:v1', '--queue', 'w127', '--input', `x${i}`, '--max-attempts', '3'])).stdout.trim());
    // On PATH at start-up; the first run removes it, as an uninstall would, and fails as env does.
    const bin = join(home.dir, 'bin');
    mkdirSync(bin);
    const interp = join(bin, 'agentq-test-interpreter');
    writeFileSync(interp, `#!/bin/sh\nrm -f "${interp}"\necho "/usr/bin/env: 'agentq-test-interpreter': No such file or directory" >&2\nexit 127\n`);
    chmodSync(interp, 0o755);
    const h = join(home.dir, 'env-missing.sh');
    writeFileSync(h, '#!/usr/bin/env agentq-test-interpreter\n');
    chmodSync(h, 0o755);
    const r = await runCli(home, ['worker', '--queue', 'w127', '--', h], { env: { PATH: `${bin}:${home.env.PATH}` } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('worker: stopping — the handler command cannot run; no more jobs are claimed');
    expect(r.stderr).toMatch(/error: cannot run .*env-missing\.sh: it exited with 127 \(its #! line runs agentq-test-interpreter through \/usr\/bin\/env, and agentq-test-interpreter is not on PATH\); stderr: /);
    const jobs = await Promise.all(ids.map((id) => inspect(id)));
    // The first job was given to it and is retried later (not in the DLQ); the rest were never claimed.
    expect(jobs.map((j) => j.state)).toEqual(['scheduled', 'queued', 'queued', 'queued']);
    expect(jobs[0]!.last_error).toMatchObject({ code: 'SPAWN_FAILED', retryable: true });
  });

  // Regression: any exit 127 was read as "the handler cannot run": a script with one missing
  // command in the middle stopped the whole worker (exit 2) after failing one job.
  it('a handler script in which one command is missing (exit 127) fails that job; the worker goes on', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await submit('--input', `x${i}`, '--max-attempts', '1'));
    const r = await runCli(home, ['worker', '--queue', 'w', '--drain', '--', 'bash', '-c', 'echo hi; agentq-no-such-command-here']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('cannot run');
    const jobs = await Promise.all(ids.map((id) => inspect(id)));
    expect(jobs.map((j) => j.state)).toEqual(['dead', 'dead', 'dead']);
    expect(jobs[0]!.last_error).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
    expect(jobs[0]!.last_error!.message).toMatch(/^bash exited with 127: .*agentq-no-such-command-here: command not found/);
  });

  // Regression: without `--`, the handler's own options were read as the worker's, and the error
  // named an agentq flag the user never meant (`--concurrency "echo hi" must be a whole number`).
  it('a handler command given without -- whose options agentq takes for its own: exit 2 with a hint to put it after --', async () => {
    for (const [argv, says] of [
      [['worker', '--queue', 'w', '--drain', 'bash', '-c', 'echo hi'], "error: -c after the handler command would be read as agentq worker's own"],
      [['worker', '--queue', 'w', './h.sh', '--verbose'], "error: unknown option '--verbose'"],
      // Taken silently before: -q switched the queue the worker worked on, --quiet its output.
      [['worker', '--queue', 'w', 'grep', '-q', 'x', '--quiet'], "error: -q --quiet after the handler command would be read as agentq worker's own"],
    ] as const) {
      const r = await runCli(home, [...argv]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stderr.match(/hint:/g)).toHaveLength(1);
      expect(r.stderr).toContain("hint: give the handler command after --, e.g. agentq worker --queue Q -- bash -c '…': before it, every option is read as agentq worker's own");
    }
    // With -- given, a usage error is only that (a typo): no hint about --.
    const typo = await runCli(home, ['worker', '--queue', 'w', '--concurency', '3', '--', 'true']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("error: unknown option '--concurency'");
    expect(typo.stderr).not.toContain('give the handler command after --');
    // With --, the same options go to the handler.
    await submit('--input', 'x');
    const r = await runCliOk(home, ['worker', '--queue', 'w', '--drain', '--', 'bash', '-c', 'echo hi']);
    expect(r.stderr).toContain('1 succeeded');
    // A command without options needs no --; global options before the subcommand are fine.
    await submit('--input', 'y');
    const plain = await runCliOk(home, ['--no-input', 'worker', '--queue', 'w', '--drain', 'true']);
    expect(plain.stderr).toContain('1 succeeded');
  });

  it('refuses a heartbeat that is not shorter than the lease (exit 2)', async () => {
    const r = await runCli(home, ['worker', '--queue', 'w', '--lease', '10s', '--heartbeat', '10s', '--', 'true']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('must be less than --lease');
    // Only the flags the operator gave are named.
    for (const [flags, says] of [
      [['--lease', '0s'], 'error: --lease must be at least 100ms, got 0ms'],
      [['--lease', '50ms'], 'error: --lease must be at least 100ms, got 50ms'],
      [['--heartbeat', '0s'], 'error: --heartbeat must be more than 0ms, got 0ms'],
    ] as const) {
      const bad = await runCli(home, ['worker', '--queue', 'w', ...flags, '--', 'true']);
      expect(bad.code, flags.join(' ')).toBe(2);
      expect(bad.stderr).toContain(says);
    }
  });

  it('refuses a lease, heartbeat or grace longer than a timer can wait (exit 2), instead of heartbeating every millisecond', async () => {
    for (const flags of [['--lease', '10000h'], ['--lease', '60d', '--heartbeat', '30d'], ['--grace', '25d'], ['--kill-grace', '25d']]) {
      const r = await runCli(home, ['worker', '--queue', 'w', ...flags, '--', 'true']);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/must be at most 24d \(Node's longest timer/);
      expect(r.stderr).not.toContain('TimeoutOverflowWarning');
    }
  });

  it('submit refuses a deadline too far off to be a date, and a start time after the deadline (exit 2)', async () => {
    const far = await runCli(home, ['submit', 'task:v1', '--queue', 'w', '--deadline', '99999999999h']);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('is too long: at most 100 years');
    expect(far.stderr).not.toContain('internal error');
    const late = await runCli(home, ['submit', 'task:v1', '--queue', 'w', '--run-at', '10m', '--deadline', '5m']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain('could never run');
  });

  it('agentq job commands outside a handler explain themselves (exit 2)', async () => {
    const r = await runCli(home, ['job', 'checkpoint', '{}']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agentq worker');
    const e = await runCli(home, ['job', 'error', 'not a code']);
    expect(e.code).toBe(2);
    // Regression: a fence set but empty (or 1e3, or 0x7) was read through Number(): '' as fence 0,
    // which the store then refused as a lost lease (exit 1, "another worker took the job over").
    for (const fence of ['', '1e3', '0x7', '-1']) {
      const f = await runCli(home, ['job', 'checkpoint', '{}'], { env: { AGENTQ_JOB_ID: 'job_01JAAAAAAAAAAAAAAAAAAAAAAA', AGENTQ_URL: home.dataUrl, AGENTQ_LEASE_FENCE: fence } });
      expect(f.code, `fence ${JSON.stringify(fence)}`).toBe(2);
      expect(f.stderr).toContain('AGENTQ_LEASE_FENCE must be the whole number the worker set');
    }
  });

  // Regression: `agentq job effect KEY cmd -o json` (no --) took -o json as agentq's own and ran
  // the command without it; --url would have pointed agentq at another store.
  it('job effect refuses options after its command without -- (they would be agentq\'s), naming them (exit 2)', async () => {
    const r = await runCli(home, ['job', 'effect', 'notify', 'curl', '-o', 'json', '--url', 'https://example.com']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("error: -o --url after the effect command would be read as agentq's own (the command's options go after --");
    // An option agentq does not know at all (`ls -l`) was refused as commander's bare
    // "unknown option '-l'", with nothing about the missing --.
    const unknown = await runCli(home, ['job', 'effect', 'list', 'ls', '-l']);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("error: unknown option '-l'");
    expect(unknown.stderr).toContain('hint: give the effect command after --, e.g. agentq job effect KEY -- curl -X POST …');
    const misspelt = await runCli(home, ['job', 'effect', 'list', '--', 'ls', '-l'], { env: { AGENTQ_JOB_ID: '' } });
    expect(misspelt.stderr).not.toContain('give the effect command after --');
    const ok = await runCli(home, ['job', 'effect', 'notify', '--', 'curl', '-o', 'out.json']);
    expect(ok.code).toBe(2);
    expect(ok.stderr).not.toContain('after the effect command');
    expect(ok.stderr).toContain('agentq worker');
  });

  it('regression: job checkpoint --file refuses a missing file, a directory and an endless device by name (they were internal errors), reading no more than the limit', async () => {
    const cases: Array<[string, string]> = [
      ['/nonexistent/agentq-checkpoint.json', 'error: --file /nonexistent/agentq-checkpoint.json cannot be read: ENOENT'],
      [home.dir, `error: --file ${home.dir} is a directory`],
      ['/dev/zero', 'error: checkpoint is more than 65536 bytes; the limit is 65536'],
    ];
    for (const [path, message] of cases) {
      const r = await runCli(home, ['job', 'checkpoint', '--file', path]);
      expect(r.code, path).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain('internal error');
    }
    // `-` is standard input (read, then refused here only because no handler's lease is set)
    const stdin = await runCli(home, ['job', 'checkpoint', '--file', '-'], { input: '{"step":1}' });
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toContain('agentq worker');
    const big = await runCli(home, ['job', 'checkpoint', '--file', '-'], { input: 'x'.repeat(200_000) });
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('error: checkpoint is more than 65536 bytes');
  });
});
