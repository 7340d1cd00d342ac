/**
 * The exec handler protocol, against real child processes (node itself as
 * the handler command). No store is involved: the handler is called with a
 * job envelope and a context, as the worker calls it.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobEnvelope } from '../../src/core/schemas.js';
import { createExecHandler, REPORT_MAX_BYTES, type ExecHandler } from '../../src/worker/exec-handler.js';
import { HandlerError, JobAbortedError } from '../../src/worker/handler-error.js';
import type { JobContext } from '../../src/worker/types.js';
import { pollUntil } from '../support/poll.js';

const envelope: JobEnvelope = {
  job_id: 'job_01JABCDEFGHJKMNPQRSTVWXYZ0',
  tenant_id: 'acme',
  queue: 'research',
  workflow: 'report:v1',
  operation: null,
  class: 'batch',
  input: 'hello',
  input_ref: null,
  input_sha256: null,
  deadline_at: '2030-01-01T00:00:00.000Z',
  idempotency_key: null,
  attempt: 2,
  max_attempts: 3,
  trace_id: 'trace-1',
  budget: null,
  allowed_tools: [],
  estimated_seconds: null,
  created_at: '2026-01-01T00:00:00.000Z',
};

function ctxWith(signal: AbortSignal = new AbortController().signal, resume: Pick<JobContext, 'lastCheckpoint' | 'effects'> = { lastCheckpoint: null, effects: [] }): JobContext {
  return {
    signal,
    jobId: envelope.job_id,
    fence: 7,
    attempt: envelope.attempt,
    workerId: 'w1',
    ...resume,
    leaseExpiresAt: 0,
    heartbeat: async () => {},
    checkpoint: async () => {},
    reportUsage: async () => {},
    effect: async (_k, fn) => fn('x'),
  };
}

async function exec(
  script: string,
  opts: { signal?: AbortSignal; killGraceMs?: number; cap?: number; lines?: string[]; resume?: Pick<JobContext, 'lastCheckpoint' | 'effects'> } = {},
) {
  const h: ExecHandler = await createExecHandler({
    command: process.execPath,
    args: ['-e', script],
    url: 'sqlite:/tmp/nowhere.db',
    resultCapBytes: opts.cap ?? 64 * 1024,
    killGraceMs: opts.killGraceMs ?? 10_000,
    onStderrLine: (jobId, line) => opts.lines?.push(`[${jobId}] ${line}`),
  });
  try {
    return await h.handler(envelope, ctxWith(opts.signal, opts.resume));
  } finally {
    await h.close();
  }
}

/** Running, not a zombie left for a parent that never reaps it (a container's PID 1 may not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const readStdin = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{`;

describe('exec handler: one child process per job', () => {
  it('passes the envelope as JSON on stdin and returns stdout as the result', async () => {
    const out = await exec(`${readStdin} const j=JSON.parse(s); process.stdout.write(j.job_id+'|'+j.input)})`);
    expect(out).toBe(`${envelope.job_id}|hello`);
  });

  it('sets the job environment, including what agentq job commands need', async () => {
    const out = await exec(
      `const e=process.env; console.log(JSON.stringify([e.AGENTQ_JOB_ID,e.AGENTQ_ATTEMPT,e.AGENTQ_DEADLINE_AT,e.AGENTQ_TRACE_ID,e.AGENTQ_QUEUE,e.AGENTQ_TENANT,e.AGENTQ_URL,e.AGENTQ_LEASE_FENCE,!!e.AGENTQ_REPORT_FILE]))`,
    );
    expect(JSON.parse(out as string)).toEqual([
      envelope.job_id,
      '2',
      '2030-01-01T00:00:00.000Z',
      'trace-1',
      'research',
      'acme',
      'sqlite:/tmp/nowhere.db',
      '7',
      true,
    ]);
  });

  it('gives the last checkpoint and the effect ledger in the files AGENTQ_CHECKPOINT_FILE and AGENTQ_EFFECTS_FILE name, and removes them after', async () => {
    const effect = {
      key: 'send-invoice',
      status: 'done' as const,
      idempotency_key: `${envelope.job_id}:send-invoice`,
      attempt: 1,
      started_at: '2026-01-01T00:00:00.000Z',
      done_at: '2026-01-01T00:00:01.000Z',
      result: 'invoice-42',
    };
    const read = `const fs=require('fs'),e=process.env; const r=f=>fs.existsSync(f)?fs.readFileSync(f,'utf8'):null; process.stdout.write(JSON.stringify([r(e.AGENTQ_CHECKPOINT_FILE),JSON.parse(r(e.AGENTQ_EFFECTS_FILE)),e.AGENTQ_CHECKPOINT_FILE,e.AGENTQ_EFFECTS_FILE]))`;
    const json = JSON.parse((await exec(read, { resume: { lastCheckpoint: { step: 3 }, effects: [effect] } })) as string) as [string, unknown, string, string];
    expect(json.slice(0, 2)).toEqual(['{"step":3}', [effect]]);
    // The files live only as long as the handler.
    expect(existsSync(json[2])).toBe(false);
    expect(existsSync(json[3])).toBe(false);
    // A text checkpoint is given as is (as `agentq job checkpoint --file` takes it back); none: no file.
    expect(JSON.parse((await exec(read, { resume: { lastCheckpoint: 'page 7 of 9', effects: [] } })) as string).slice(0, 2)).toEqual(['page 7 of 9', []]);
    // ... unless it would read back as JSON: text "42" or "null" is written as a JSON string, so it comes back as text.
    for (const text of ['42', 'null', '{"a":1}']) {
      const [file] = JSON.parse((await exec(read, { resume: { lastCheckpoint: text, effects: [] } })) as string) as [string];
      expect(JSON.parse(file)).toBe(text);
    }
    expect(JSON.parse((await exec(read)) as string).slice(0, 2)).toEqual([null, []]);
  });

  it('returns null when the handler printed nothing', async () => {
    expect(await exec('')).toBeNull();
  });

  it('caps the result and says how much was cut', async () => {
    const out = (await exec(`process.stdout.write('a'.repeat(5000))`, { cap: 1000 })) as string;
    expect(out).toBe(`${'a'.repeat(1000)}…[truncated 4000 bytes]`);
  });

  it('exit 75 is a retryable failure (TRANSIENT)', async () => {
    const e = await exec('process.exit(75)').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HandlerError);
    expect(e).toMatchObject({ code: 'TRANSIENT', retryable: true });
  });

  it('another non-zero exit is permanent and carries the end of stderr', async () => {
    const e = await exec(`console.error('boom: missing field title'); process.exit(3)`).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
    expect((e as Error).message).toContain('exited with 3');
    expect((e as Error).message).toContain('boom: missing field title');
  });

  it('the end of stderr in the message starts on a whole character', async () => {
    // 4001 bytes: the 2048-byte tail starts on the second byte of an "é"
    const e = await exec(`process.stderr.write('é'.repeat(2000)+'x'); process.exit(3)`).catch((x: unknown) => x);
    expect((e as Error).message).toMatch(/exited with 3: é+x$/);
    expect((e as Error).message).not.toContain('\uFFFD');
  });

  it('the end of stderr in the message starts on a whole line when it holds one', async () => {
    // 3000 lines of 12 bytes: the 2048-byte tail begins inside a line.
    const e = await exec(`process.stderr.write(Array.from({ length: 3000 }, (_, i) => 'line ' + String(i).padStart(6, '0') + '\\n').join('')); process.exitCode = 3`).catch((x: unknown) => x);
    expect((e as Error).message).toMatch(/exited with 3: line \d{6}\n/);
    expect((e as Error).message).toMatch(/line 002999\n?$/);
  });

  it('a reported code from the table decides retryability, whatever the exit status', async () => {
    const report = (code: string, exit: number) =>
      `require('fs').writeFileSync(process.env.AGENTQ_REPORT_FILE, JSON.stringify({code:'${code}',message:'reported'})); process.exit(${exit})`;
    await expect(exec(report('PROVIDER_429', 1))).rejects.toMatchObject({ code: 'PROVIDER_429', retryable: true, message: 'reported' });
    await expect(exec(report('VALIDATION', 75))).rejects.toMatchObject({ code: 'VALIDATION', retryable: false });
    // An unknown code falls back to the exit status.
    await expect(exec(report('MY_CODE', 75))).rejects.toMatchObject({ code: 'MY_CODE', retryable: true });
    await expect(exec(report('MY_CODE', 2))).rejects.toMatchObject({ code: 'MY_CODE', retryable: false });
  });

  it('a report file written directly with a code that breaks the rule is not stored as the code; the message says what was reported', async () => {
    const write = (code: string, exit: number) =>
      `require('fs').writeFileSync(process.env.AGENTQ_REPORT_FILE, JSON.stringify({code:${JSON.stringify(code)},message:'it broke'})); process.exit(${exit})`;
    const escape = (await exec(write('\u001b[31mRED', 1)).catch((x: unknown) => x)) as HandlerError;
    expect(escape).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
    expect(escape.message).toContain('reported the error code "\\x1b[31mRED", which is not one (error codes must be 1-64 characters of A-Z');
    expect(escape.message).toMatch(/: it broke$/);
    expect(escape.message).not.toContain('\u001b');
    const long = (await exec(write('A'.repeat(5000), 75)).catch((x: unknown) => x)) as HandlerError;
    expect(long).toMatchObject({ code: 'TRANSIENT', retryable: true });
    expect(long.message).toContain(`"${'A'.repeat(80)}…(5000 characters)"`);
    expect(long.message.length).toBeLessThan(400);
  });

  it('regression: a FIFO left at the report file is not opened (it blocked the worker for good); the failure says why the report was not read', async () => {
    const script = `require('child_process').execFileSync('mkfifo', [process.env.AGENTQ_REPORT_FILE]); process.exit(1)`;
    const err = (await exec(script).catch((x: unknown) => x)) as HandlerError;
    expect(err).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
    expect(err.message).toMatch(/exited with 1 \(the report file .*\.json is not a regular file; not read\)$/);
  });

  it('regression: a symbolic link at the report file (to /dev/zero, which never ends) is not followed', async () => {
    const script = `require('fs').symlinkSync('/dev/zero', process.env.AGENTQ_REPORT_FILE); process.exit(75)`;
    const err = (await exec(script).catch((x: unknown) => x)) as HandlerError;
    expect(err).toMatchObject({ code: 'TRANSIENT', retryable: true });
    expect(err.message).toContain('is a symbolic link; not followed');
  });

  it('a report file that is not JSON, or has no string code, counts as no report, and the failure says why', async () => {
    const write = (content: string, exit: number) => `require('fs').writeFileSync(process.env.AGENTQ_REPORT_FILE, ${JSON.stringify(content)}); process.exit(${exit})`;
    for (const [content, exit, code] of [['{not json', 1, 'HANDLER_FAILED'], ['{"error":"PROVIDER_429"}', 75, 'TRANSIENT'], ['null', 1, 'HANDLER_FAILED']] as const) {
      const err = (await exec(write(content, exit)).catch((x: unknown) => x)) as HandlerError;
      expect(err).toMatchObject({ code, retryable: exit === 75 });
      expect(err.message).toMatch(new RegExp(`exited with ${exit} \\(the report file .*\\.json is not a JSON object with a string "code" \\(as \`agentq job error\` writes it\\); not read\\)$`));
    }
    // An empty file (a handler that only created it) is no report, said nothing about.
    await expect(exec(write('', 1))).rejects.toMatchObject({ code: 'HANDLER_FAILED', message: expect.stringMatching(/exited with 1$/) });
  });

  it('a report file over the size read is not read', async () => {
    const script = `require('fs').writeFileSync(process.env.AGENTQ_REPORT_FILE, JSON.stringify({code:'PROVIDER_429',message:'x'.repeat(${REPORT_MAX_BYTES})})); process.exit(1)`;
    const err = (await exec(script).catch((x: unknown) => x)) as HandlerError;
    expect(err).toMatchObject({ code: 'HANDLER_FAILED' });
    expect(err.message).toContain(`bytes, over the ${REPORT_MAX_BYTES} read; not read`);
  });

  it('regression: FIFOs a handler left where a later attempt\'s checkpoint and effects files go do not block the worker', async () => {
    // Attempt 7 plants FIFOs at the names attempt 8's files will have (the directory is in its environment).
    const plant = `if (process.env.AGENTQ_LEASE_FENCE === '7') { const p = process.env.AGENTQ_CHECKPOINT_FILE.replace('.7.', '.8.'); require('child_process').execFileSync('mkfifo', [p, p.replace('.checkpoint', '.effects.json')]) } else process.stdout.write(require('fs').readFileSync(process.env.AGENTQ_CHECKPOINT_FILE, 'utf8'))`;
    const h = await createExecHandler({ command: process.execPath, args: ['-e', plant], url: 'sqlite:/tmp/nowhere.db' });
    try {
      expect(await h.handler(envelope, ctxWith())).toBeNull();
      expect(await h.handler(envelope, { ...ctxWith(undefined, { lastCheckpoint: 'step 3', effects: [] }), fence: 8 })).toBe('step 3');
    } finally {
      await h.close();
    }
  });

  it('passes stderr through line by line, prefixed with the job id', async () => {
    const lines: string[] = [];
    await exec(`process.stderr.write('one\\ntwo\\nthree')`, { lines });
    expect(lines).toEqual([`[${envelope.job_id}] one`, `[${envelope.job_id}] two`, `[${envelope.job_id}] three`]);
  });

  it('an abort sends SIGTERM; the handler rejects with the abort reason', async () => {
    const ac = new AbortController();
    const marker = `/tmp/agentq-exec-${process.pid}-${Date.now()}`;
    const run = exec(`require('fs').writeFileSync('${marker}','up'); setInterval(()=>{}, 1000)`, { signal: ac.signal });
    await pollUntil(() => existsSync(marker), { what: 'child started' });
    ac.abort(new JobAbortedError(envelope.job_id, 'cancelled'));
    await expect(run).rejects.toMatchObject({ name: 'JobAbortedError', reason: 'cancelled' });
    rmSync(marker, { force: true });
  });

  it('a child that ignores SIGTERM is killed with SIGKILL after the kill grace', async () => {
    const ac = new AbortController();
    const marker = `/tmp/agentq-exec-${process.pid}-${Date.now()}-term`;
    const run = exec(
      `process.on('SIGTERM',()=>{require('fs').writeFileSync('${marker}.term','x')}); require('fs').writeFileSync('${marker}','up'); setInterval(()=>{}, 1000)`,
      { signal: ac.signal, killGraceMs: 200 },
    );
    await pollUntil(() => existsSync(marker), { what: 'child started' });
    ac.abort(new JobAbortedError(envelope.job_id, 'deadline'));
    await expect(run).rejects.toMatchObject({ reason: 'deadline' });
    // It did receive (and ignore) the SIGTERM first.
    expect(existsSync(`${marker}.term`)).toBe(true);
    rmSync(marker, { force: true });
    rmSync(`${marker}.term`, { force: true });
  });

  it('when the handler exits, what it left running in its group is ended before the attempt ends (success or failure)', async () => {
    for (const exit of [0, 75, 3]) {
      const pidFile = `/tmp/agentq-exec-${process.pid}-${Date.now()}-bg${exit}`;
      // a background child in the handler's group, as `( loop ) &` in a shell script
      const script = `const c=require('child_process').spawn('sh',['-c','while :; do sleep 0.05; done'],{stdio:'ignore'}); require('fs').writeFileSync('${pidFile}',String(c.pid)); process.exit(${exit})`;
      await exec(script).catch(() => undefined);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      rmSync(pidFile, { force: true });
      expect(running(pid), `exit ${exit}`).toBe(false);
    }
  });

  it('a background child that ignores SIGTERM gets SIGKILL after the kill grace', async () => {
    const pidFile = `/tmp/agentq-exec-${process.pid}-${Date.now()}-stubborn`;
    const script = `const c=require('child_process').spawn('sh',['-c','trap "" TERM; while :; do sleep 0.05; done'],{stdio:'ignore'}); require('fs').writeFileSync('${pidFile}',String(c.pid)); process.stdout.write('done', () => process.exit(0))`;
    expect(await exec(script, { killGraceMs: 200 })).toBe('done');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    rmSync(pidFile, { force: true });
    expect(running(pid)).toBe(false);
  });

  // Regression: a command a handler ran in a process group of its own, in the handler's session,
  // as GNU `timeout` does (`timeout 300 claude -p …`), was not in the handler's group: a cancel or
  // a stop ended the handler and left the agent running, and so did the handler's own exit.
  it('what a handler started in another process group of its session (timeout CMD) is ended with it: on its exit and on an abort', async () => {
    const loop = (pidFile: string) => `echo $$ > ${pidFile}; while :; do sleep 0.05; done`;
    const exited = `/tmp/agentq-exec-${process.pid}-${Date.now()}-timeout-exit`;
    const script = `const c=require('child_process').spawn('timeout',['300','sh','-c',${JSON.stringify(loop(exited))}],{stdio:'ignore'}); (function w(){ if (require('fs').existsSync('${exited}')) process.exit(0); else setTimeout(w, 20); })()`;
    await exec(script);
    const pid = Number(readFileSync(exited, 'utf8'));
    rmSync(exited, { force: true });
    expect(running(pid), 'after the handler exited').toBe(false);

    const aborted = `/tmp/agentq-exec-${process.pid}-${Date.now()}-timeout-abort`;
    const ac = new AbortController();
    const h = await createExecHandler({ command: 'bash', args: ['-c', `timeout 300 sh -c '${loop(aborted)}'`], url: 'sqlite:/tmp/nowhere.db', killGraceMs: 10_000 });
    try {
      const run = Promise.resolve(h.handler(envelope, ctxWith(ac.signal))).then(() => null, (e: unknown) => e);
      await pollUntil(() => existsSync(aborted) && readFileSync(aborted, 'utf8').trim() !== '', { what: 'the command under timeout started' });
      const inner = Number(readFileSync(aborted, 'utf8'));
      ac.abort(new JobAbortedError(envelope.job_id, 'cancelled'));
      expect(await run).toMatchObject({ reason: 'cancelled' });
      expect(running(inner), 'after the abort').toBe(false);
    } finally {
      await h.close();
      rmSync(aborted, { force: true });
    }
  });

  // Regression: a process a handler started in a session of its own (`setsid`, a daemon that
  // detaches, Playwright's browser, which node starts `detached`) was not followed: it ran on after
  // the handler exited, after a cancel and after the worker was gone, still calling what it called.
  it('what a handler started in a session of its own (setsid) is ended with it: on its exit and on an abort', async () => {
    const loop = (pidFile: string, trap = '') => `${trap}echo $$ > ${pidFile}; while :; do sleep 0.05; done`;
    const exited = `/tmp/agentq-exec-${process.pid}-${Date.now()}-setsid-exit`;
    const h = await createExecHandler({
      command: 'bash',
      args: ['-c', `setsid sh -c '${loop(exited)}' </dev/null >/dev/null 2>&1 & while [ ! -s ${exited} ]; do sleep 0.02; done; echo done`],
      url: 'sqlite:/tmp/nowhere.db',
      killGraceMs: 10_000,
    });
    try {
      expect(await h.handler(envelope, ctxWith())).toBe('done\n');
      const pid = Number(readFileSync(exited, 'utf8'));
      expect(running(pid), 'after the handler exited').toBe(false);
    } finally {
      await h.close();
      rmSync(exited, { force: true });
    }

    // A daemon that forks twice and ignores SIGTERM: SIGKILL after the kill grace reaches it too.
    const aborted = `/tmp/agentq-exec-${process.pid}-${Date.now()}-setsid-abort`;
    const ac = new AbortController();
    const h2 = await createExecHandler({
      command: 'bash',
      args: ['-c', `setsid -f sh -c '${loop(aborted, 'trap "" TERM; ')}' </dev/null >/dev/null 2>&1; sleep 1000`],
      url: 'sqlite:/tmp/nowhere.db',
      killGraceMs: 300,
    });
    try {
      const run = Promise.resolve(h2.handler(envelope, ctxWith(ac.signal))).then(() => null, (e: unknown) => e);
      await pollUntil(() => existsSync(aborted) && readFileSync(aborted, 'utf8').trim() !== '', { what: 'the detached daemon started' });
      const daemon = Number(readFileSync(aborted, 'utf8'));
      ac.abort(new JobAbortedError(envelope.job_id, 'cancelled'));
      expect(await run).toMatchObject({ reason: 'cancelled' });
      expect(running(daemon), 'after the abort').toBe(false);
    } finally {
      await h2.close();
      rmSync(aborted, { force: true });
    }
  });

  it('a daemon started on purpose without AGENTQ_REPORT_FILE (to serve later jobs) is left running, as the README says', async () => {
    const pidFile = `/tmp/agentq-exec-${process.pid}-${Date.now()}-kept`;
    const h = await createExecHandler({
      command: 'bash',
      args: ['-c', `env -u AGENTQ_REPORT_FILE setsid -f sh -c 'echo $$ > ${pidFile}; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1; while [ ! -s ${pidFile} ]; do sleep 0.02; done`],
      url: 'sqlite:/tmp/nowhere.db',
    });
    let pid = 0;
    try {
      await h.handler(envelope, ctxWith());
      pid = Number(readFileSync(pidFile, 'utf8'));
      expect(running(pid)).toBe(true);
    } finally {
      await h.close();
      if (pid > 0) process.kill(pid, 'SIGKILL');
      rmSync(pidFile, { force: true });
    }
  });

  it("the worker's own files: a removed directory is made again; one that cannot be is a retryable WORKER_FILES_FAILED, never a permanent failure", async () => {
    // The handler does to the worker's directory what a tmp cleaner or a full disk would.
    const script = `const fs=require('fs'),p=require('path'),d=p.dirname(process.env.AGENTQ_REPORT_FILE);fs.rmSync(d,{recursive:true,force:true});if(process.argv[1]==='block')fs.writeFileSync(d,'not a directory');process.stdout.write('ok')`;
    const h = await createExecHandler({ command: process.execPath, args: ['-e', script, 'remove'], url: 'sqlite:/tmp/nowhere.db' });
    try {
      expect(await h.handler(envelope, ctxWith())).toBe('ok');
      expect(await h.handler(envelope, ctxWith())).toBe('ok');
    } finally {
      await h.close();
    }
    const blocked = await createExecHandler({ command: process.execPath, args: ['-e', script, 'block'], url: 'sqlite:/tmp/nowhere.db' });
    try {
      expect(await blocked.handler(envelope, ctxWith())).toBe('ok');
      await expect(blocked.handler(envelope, ctxWith())).rejects.toMatchObject({ code: 'WORKER_FILES_FAILED', retryable: true });
    } finally {
      await blocked.close();
    }
  });

  // Regression: `#!/usr/bin/env python3` without python3 exits 127, which counted as a permanent
  // HANDLER_FAILED: every job the worker claimed went to the DLQ, one after another.
  it('a handler whose #!/usr/bin/env interpreter is missing (exit 127) is a retryable SPAWN_FAILED and says the interpreter cannot run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-launch-'));
    const script = join(dir, 'env-missing.sh');
    writeFileSync(script, '#!/usr/bin/env agentq-no-such-interpreter\n');
    chmodSync(script, 0o755);
    const said: string[] = [];
    const h = await createExecHandler({ command: script, args: [], url: 'sqlite::memory:', onCannotRun: (m) => said.push(m) });
    try {
      const err = await Promise.resolve(h.handler(envelope, ctxWith())).then(() => null, (e: unknown) => e);
      expect(err).toMatchObject({ code: 'SPAWN_FAILED', retryable: true });
      expect((err as Error).message).toContain(`cannot run ${script}: it exited with 127 (`);
      expect((err as Error).message).toContain('agentq-no-such-interpreter is not on PATH');
      expect(said).toEqual([(err as Error).message]);
      // A handler that reported what failed is believed: its report decides, and nothing stops.
      said.length = 0;
      const reported = await createExecHandler({
        command: process.execPath,
        args: ['-e', `require('fs').writeFileSync(process.env.AGENTQ_REPORT_FILE, JSON.stringify({code:'VALIDATION',message:'bad input'})); process.exit(127)`],
        url: 'sqlite::memory:',
        onCannotRun: (m) => said.push(m),
      });
      try {
        await expect(reported.handler(envelope, ctxWith())).rejects.toMatchObject({ code: 'VALIDATION', message: 'bad input' });
        expect(said).toEqual([]);
      } finally {
        await reported.close();
      }
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a shell whose script went since start-up (exit 127) is a retryable SPAWN_FAILED that stops the worker', async () => {
    const said: string[] = [];
    const h = await createExecHandler({ command: 'bash', args: ['/nonexistent/agentq-run.sh'], url: 'sqlite::memory:', onCannotRun: (m) => said.push(m) });
    try {
      const err = await Promise.resolve(h.handler(envelope, ctxWith())).then(() => null, (e: unknown) => e);
      expect(err).toMatchObject({ code: 'SPAWN_FAILED', retryable: true });
      expect((err as Error).message).toContain('cannot run bash: it exited with 127 (the script it runs, /nonexistent/agentq-run.sh, is not there)');
      expect(said).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  // Regression: `node handler.js` whose file went since start-up (a deploy removed it) exits 1
  // with "Cannot find module" for every job, each a permanent HANDLER_FAILED: the queue drained
  // into the DLQ. The file system, not stderr's words, says it was the launch.
  it('an interpreter whose script went since start-up (node exits 1, python 2) is a retryable SPAWN_FAILED that stops the worker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-gone-'));
    try {
      for (const [command, file] of [[process.execPath, 'handler.js'], ['python3', 'agent.py']] as const) {
        const said: string[] = [];
        const path = join(dir, file);
        const h = await createExecHandler({ command, args: [path], url: 'sqlite::memory:', onCannotRun: (m) => said.push(m) });
        try {
          const err = await Promise.resolve(h.handler(envelope, ctxWith())).then(() => null, (e: unknown) => e);
          expect(err, command).toMatchObject({ code: 'SPAWN_FAILED', retryable: true });
          expect((err as Error).message).toContain(`the script it runs, ${path}, is not there`);
          expect(said).toHaveLength(1);
        } finally {
          await h.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an interpreter whose script is there and fails (exit 1, nothing on stdout) is an ordinary failure of that job', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-there-'));
    try {
      const path = join(dir, 'handler.js');
      writeFileSync(path, "console.error('model refused'); process.exit(1)\n");
      const said: string[] = [];
      const h = await createExecHandler({ command: process.execPath, args: [path], url: 'sqlite::memory:', onCannotRun: (m) => said.push(m) });
      try {
        const err = await Promise.resolve(h.handler(envelope, ctxWith())).then(() => null, (e: unknown) => e);
        expect(err).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
        expect((err as Error).message).toContain('model refused');
        expect(said).toEqual([]);
      } finally {
        await h.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: any exit 127 counted as "the handler cannot run", so a script with one missing
  // command in the middle (`echo hi; nosuchcmd`) stopped the whole worker (exit 2).
  it.each([
    [127, 'echo started >&2; agentq-no-such-command-here'],
    [126, `echo started >&2; f=$(mktemp); "$f"; s=$?; rm -f "$f"; exit $s`],
  ])('a handler whose own command runs but exits %i (a command inside it missing or not executable) is an ordinary failure of that job', async (code, body) => {
    const said: string[] = [];
    const h = await createExecHandler({ command: 'bash', args: ['-c', body], url: 'sqlite::memory:', onCannotRun: (m) => said.push(m) });
    try {
      const err = await Promise.resolve(h.handler(envelope, ctxWith())).then(() => null, (e: unknown) => e);
      expect(err).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
      expect((err as Error).message).toContain(`bash exited with ${code}: started`);
      expect(said).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('a command that cannot start is a retryable SPAWN_FAILED (the worker, not the job, is broken)', async () => {
    const h = await createExecHandler({ command: '/nonexistent/agentq-handler', args: [], url: 'sqlite::memory:' });
    await expect(h.handler(envelope, ctxWith())).rejects.toMatchObject({ code: 'SPAWN_FAILED', retryable: true });
    await h.close();
  });
});
