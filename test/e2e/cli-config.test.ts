/**
 * Configuration through the built CLI: precedence, contexts, read-only
 * contexts refusing mutations (exit 4), config errors (exit 78), and
 * credentials redacted in everything printed.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';

let home: CliHome;
let userFile: string;
const writeUser = (v: unknown) => {
  mkdirSync(join(home.dir, 'config', 'agentq'), { recursive: true });
  writeFileSync(userFile, typeof v === 'string' ? v : JSON.stringify(v));
};
beforeEach(() => {
  home = makeCliHome();
  userFile = join(home.dir, 'config', 'agentq', 'config.json');
});
afterEach(() => home.cleanup());

describe('where agentq connects', () => {
  it('flag > env > context > default, shown by context show', async () => {
    const a = `sqlite:${join(home.dir, 'a.db')}`;
    const b = `sqlite:${join(home.dir, 'b.db')}`;
    const def = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout);
    expect(def).toMatchObject({ context: null, url: home.dataUrl, url_source: 'default', queue: 'default' });
    writeUser({ currentContext: 'a', contexts: { a: { url: a, queue: 'research' } } });
    expect(JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout)).toMatchObject({ context: 'a', url: a, url_source: 'context', queue: 'research' });
    expect(JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'], { env: { AGENTQ_URL: b } })).stdout)).toMatchObject({ url: b, url_source: 'env' });
    expect(JSON.parse((await runCliOk(home, ['--url', a, 'context', 'show', '-o', 'json'], { env: { AGENTQ_URL: b } })).stdout)).toMatchObject({ url: a, url_source: 'flag' });
  });

  // Regression: `context show` named the user file as if it existed on a fresh machine, sending the
  // reader to look for settings in a file that was never created.
  it('context show says when the user file is not created yet, and stops saying so once it is', async () => {
    const fresh = await runCliOk(home, ['context', 'show']);
    expect(fresh.stdout).toMatch(new RegExp(`^user file\\t${userFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(not created\\)$`, 'm'));
    expect(JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout)).toMatchObject({ user_file: userFile, user_file_exists: false });
    writeUser({});
    expect((await runCliOk(home, ['context', 'show'])).stdout).toMatch(/^user file\t\S+config\.json$/m);
    expect(JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout)).toMatchObject({ user_file: userFile, user_file_exists: true });
  });

  it('jobs go where the context points, into its default queue', async () => {
    const a = `sqlite:${join(home.dir, 'a.db')}`;
    writeUser({ currentContext: 'a', contexts: { a: { url: a, queue: 'research' } } });
    const id = (await runCliOk(home, ['submit', 'x:v1'])).stdout.trim();
    const job = JSON.parse((await runCliOk(home, ['--url', a, 'inspect', id, '-o', 'json'])).stdout);
    expect(job.queue).toBe('research');
    // Not in the default database.
    expect((await runCli(home, ['--url', home.dataUrl, 'inspect', id])).code).toBe(5);
  });

  it("the context's queue scopes every command that takes --queue; -A looks at every queue", async () => {
    const a = `sqlite:${join(home.dir, 'a.db')}`;
    writeUser({ currentContext: 'a', contexts: { a: { url: a, queue: 'research' } } });
    for (const queue of ['research', 'billing']) {
      await runCliOk(home, ['submit', 'x:v1', '--queue', queue, '--max-attempts', '1']);
      await runCliOk(home, ['worker', '--queue', queue, '--drain', '--', process.execPath, '-e', 'process.exit(1)']);
    }
    const queuesOf = (out: string, col: number) => [...new Set(out.trim().split('\n').map((l) => l.split('\t')[col]))].sort();
    expect(queuesOf((await runCliOk(home, ['list'])).stdout, 1)).toEqual(['research']);
    expect(queuesOf((await runCliOk(home, ['list', '-A'])).stdout, 1)).toEqual(['billing', 'research']);
    expect(queuesOf((await runCliOk(home, ['dlq', 'list'])).stdout, 1)).toEqual(['research']);
    expect(queuesOf((await runCliOk(home, ['dlq', 'list', '--all-queues'])).stdout, 1)).toEqual(['billing', 'research']);
    expect(queuesOf((await runCliOk(home, ['stats', '-o', 'plain'])).stdout, 0)).toEqual(['research']);
    expect(queuesOf((await runCliOk(home, ['tail'])).stdout, 3)).toEqual(['research']);
    // A bulk action acts on the context's queue only: billing's entry stays in the DLQ.
    await runCliOk(home, ['dlq', 'redrive', '--all', '--yes']);
    expect(queuesOf((await runCliOk(home, ['dlq', 'list', '-A'])).stdout, 1)).toEqual(['billing']);
    expect((await runCliOk(home, ['dlq', 'list', '--queue', 'billing'])).stdout).toContain('billing');
    // A check narrowed by the context says which queue it checked.
    expect((await runCliOk(home, ['dlq', 'check'])).stderr).toBe("ok: queue research within limits (the context's queue)\n");
    const both = await runCli(home, ['list', '-A', '--queue', 'billing']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--queue and --all-queues exclude each other');
  });

  it('a project file found upward from the working directory wins over the user file', async () => {
    writeUser({ currentContext: 'user', contexts: { user: { url: `sqlite:${join(home.dir, 'user.db')}` } } });
    const project = join(home.dir, 'repo');
    mkdirSync(join(project, 'src', 'deep'), { recursive: true });
    writeFileSync(join(project, '.agentq.json'), JSON.stringify({ url: `sqlite:${join(home.dir, 'project.db')}` }));
    const show = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'], { cwd: join(project, 'src', 'deep') })).stdout);
    // The user file's current context still applies (its url is a context url, which beats a bare project url) ...
    expect(show.context).toBe('user');
    // ... unless the project names its own current context.
    writeFileSync(join(project, '.agentq.json'), JSON.stringify({ currentContext: 'proj', contexts: { proj: { url: `sqlite:${join(home.dir, 'project.db')}` } } }));
    const show2 = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'], { cwd: join(project, 'src', 'deep') })).stdout);
    expect(show2).toMatchObject({ context: 'proj', context_source: 'project', url: `sqlite:${join(home.dir, 'project.db')}` });
  });
});

describe('project files', () => {
  it('a relative sqlite: path is relative to the file: the same database from any subdirectory', async () => {
    const project = join(home.dir, 'repo');
    mkdirSync(join(project, 'src', 'deep'), { recursive: true });
    writeFileSync(join(project, '.agentq.json'), JSON.stringify({ url: 'sqlite:./agentq.db' }));
    const id = (await runCliOk(home, ['submit', 'x:v1'], { cwd: project })).stdout.trim();
    const fromDeep = await runCliOk(home, ['inspect', id, '-o', 'json'], { cwd: join(project, 'src', 'deep') });
    expect(JSON.parse(fromDeep.stdout).job_id).toBe(id);
    expect(existsSync(join(project, 'src', 'deep', 'agentq.db'))).toBe(false);
    const show = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'], { cwd: join(project, 'src', 'deep') })).stdout);
    expect(show).toMatchObject({ url: `sqlite:${join(project, 'agentq.db')}`, url_source: 'project' });
  });

  it('one in a world-writable directory is ignored with a warning; the user file applies', async () => {
    writeUser({ currentContext: 'mine', contexts: { mine: { url: `sqlite:${join(home.dir, 'mine.db')}` } } });
    const shared = join(home.dir, 'shared');
    mkdirSync(shared);
    writeFileSync(join(shared, '.agentq.json'), JSON.stringify({ currentContext: 'x', contexts: { x: { url: `sqlite:${join(home.dir, 'theirs.db')}` } } }));
    chmodSync(shared, 0o777);
    const r = await runCliOk(home, ['context', 'show', '-o', 'json'], { cwd: shared });
    expect(JSON.parse(r.stdout)).toMatchObject({ context: 'mine', project_file: null });
    expect(r.stderr).toContain(`warning: project file ${join(shared, '.agentq.json')} ignored: its directory ${shared} is world-writable`);
  });
});

describe('getting out of a bad state through the CLI', () => {
  it('context list and context use work with an unknown current context', async () => {
    writeUser({ currentContext: 'gone', contexts: { dev: { url: `sqlite:${join(home.dir, 'dev.db')}` } } });
    expect((await runCli(home, ['list'])).code).toBe(78);
    const list = await runCliOk(home, ['context', 'list']);
    expect(list.stdout).toMatch(/^\tdev\t/m);
    expect(list.stderr).toContain('unknown context "gone"');
    const env = await runCliOk(home, ['context', 'list'], { env: { AGENTQ_CONTEXT: 'nope' } });
    expect(env.stdout).toMatch(/\tdev\t/);
    // The way out named is the one that works: the variable, not `context use`.
    expect(env.stderr).toContain('Unset AGENTQ_CONTEXT or set it to one of them');
    const stillSet = await runCliOk(home, ['context', 'use', 'dev'], { env: { AGENTQ_CONTEXT: 'nope' } });
    expect(stillSet.stderr).toContain('AGENTQ_CONTEXT=nope is set in this environment and still selects the context');
    await runCliOk(home, ['context', 'use', 'dev']);
    // dev is in force: its store is the one named (a reading command does not create it)
    expect((await runCli(home, ['list'])).stderr).toContain(`no agentq store at ${join(home.dir, 'dev.db')}`);
    await runCliOk(home, ['submit', 'w:v1', '--input', '{}']);
    expect((await runCliOk(home, ['list'])).code).toBe(0);
  });

  it('context use keeps the config file\'s own mode (a new file is 0600: it may hold credentials)', async () => {
    writeUser({ contexts: { dev: { url: `sqlite:${join(home.dir, 'dev.db')}` }, prod: { url: `sqlite:${join(home.dir, 'prod.db')}` } } });
    chmodSync(userFile, 0o640);
    await runCliOk(home, ['context', 'use', 'dev']);
    expect(statSync(userFile).mode & 0o777).toBe(0o640);
    expect(JSON.parse(readFileSync(userFile, 'utf8'))).toMatchObject({ currentContext: 'dev' });
  });

  it('context use of a context only a project file defines is refused: the user file could not resolve it', async () => {
    writeUser({ contexts: { dev: {} } });
    const project = join(home.dir, 'repo');
    mkdirSync(project);
    writeFileSync(join(project, '.agentq.json'), JSON.stringify({ contexts: { proj: { url: 'sqlite:./p.db' } } }));
    const r = await runCli(home, ['context', 'use', 'proj'], { cwd: project });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`context "proj" is defined only in ${join(project, '.agentq.json')}`);
    expect(JSON.parse(readFileSync(userFile, 'utf8')).currentContext).toBeUndefined();
    await runCliOk(home, ['--context', 'proj', 'submit', 'w:v1', '--input', '{}'], { cwd: project });
    expect((await runCliOk(home, ['--context', 'proj', 'list'], { cwd: project })).code).toBe(0);
    expect(existsSync(join(project, 'p.db'))).toBe(true);
  });

  it('a broken config file does not stop --url / AGENTQ_URL (with a warning); with --context it does', async () => {
    writeUser('{ "contexts": ');
    const r = await runCliOk(home, ['--url', home.dataUrl, 'list']);
    expect(r.stderr).toContain(`warning: config file ${userFile}: is not valid JSON`);
    expect((await runCliOk(home, ['list'], { env: { AGENTQ_URL: home.dataUrl } })).code).toBe(0);
    const ctx = await runCli(home, ['--url', home.dataUrl, '--context', 'prod', 'list']);
    expect(ctx.code).toBe(78);
    expect(ctx.stderr).toContain('and no --context');
  });
});

describe('contexts', () => {
  beforeEach(() => {
    writeUser({
      contexts: {
        dev: { url: `sqlite:${join(home.dir, 'dev.db')}` },
        prod: { url: `sqlite:${join(home.dir, 'prod.db')}`, readOnly: true },
      },
    });
  });

  it('context list / use / show', async () => {
    const list = await runCliOk(home, ['context', 'list']);
    expect(list.stdout.trimEnd().split('\n').map((l) => l.split('\t').slice(0, 2))).toEqual([['', 'dev'], ['', 'prod']]);
    const use = await runCliOk(home, ['context', 'use', 'prod']);
    expect(use.stderr).toContain('current context is now prod');
    expect(JSON.parse(readFileSync(userFile, 'utf8')).currentContext).toBe('prod');
    expect((await runCliOk(home, ['context', 'list'])).stdout).toMatch(/^\*\tprod\t/m);
    expect((await runCliOk(home, ['context', 'show'])).stdout).toMatch(/^context\tprod \(from user\)$/m);
    expect((await runCli(home, ['context', 'use', 'nope'])).code).toBe(78);
  });

  it('a read-only context refuses mutations with exit 4 and names the context; reads still work', async () => {
    const id = (await runCliOk(home, ['--context', 'dev', 'submit', 'x:v1'])).stdout.trim();
    const prodUrl = `sqlite:${join(home.dir, 'prod.db')}`;
    await runCliOk(home, ['--url', prodUrl, 'submit', 'x:v1']);
    for (const args of [['submit', 'x:v1'], ['cancel', id]]) {
      const r = await runCli(home, ['--context', 'prod', ...args]);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('context "prod" is read-only');
    }
    expect((await runCliOk(home, ['--context', 'prod', 'list'])).stdout.trim().split('\n')).toHaveLength(1);
    // demo into a store named with --url under a read-only context: refused as a submit is.
    const demo = await runCli(home, ['--context', 'prod', '--url', prodUrl, 'demo']);
    expect(demo.code).toBe(4);
    expect((await runCliOk(home, ['--url', prodUrl, 'list'])).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('an unknown context exits 78 and lists the known ones', async () => {
    const r = await runCli(home, ['--context', 'staging', 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('unknown context "staging"');
    expect(r.stderr).toContain('dev, prod');
    const env = await runCli(home, ['list'], { env: { AGENTQ_CONTEXT: 'staging' } });
    expect(env.code).toBe(78);
  });
});

describe("a context's scheduling policy", () => {
  it('admission: a submit over the backlog limit exits 75, a job over it by itself 2; --url without the context is not limited', async () => {
    const db = `sqlite:${join(home.dir, 'adm.db')}`;
    writeUser({ currentContext: 'prod', contexts: { prod: { url: db, admission: { batchMaxBacklogSeconds: 100 } } } });
    await runCliOk(home, ['submit', 'x:v1', '--class', 'batch', '--estimated-seconds', '60']);
    const refused = await runCli(home, ['submit', 'x:v1', '--class', 'batch', '--estimated-seconds', '60']);
    expect(refused.code).toBe(75);
    expect(refused.stderr).toContain('refused: the batch backlog of queue default is 60s of work and this job adds 60s (limit 100s)');
    await runCliOk(home, ['--url', db, 'submit', 'x:v1', '--class', 'batch', '--estimated-seconds', '60']);
    // A job larger than the limit by itself never fits: a usage error naming the rule, not "retry later".
    const never = await runCli(home, ['submit', 'x:v1', '--class', 'batch', '--estimated-seconds', '101']);
    expect(never.code).toBe(2);
    expect(never.stderr).toContain('error: refused: this job alone is 101s of estimated work, more than the batch backlog limit of queue default (100s): it can never be admitted');
    expect(never.stderr).toContain('hint: Give a smaller --estimated-seconds, or raise batchMaxBacklogSeconds in the admission settings.');
    const show = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout);
    expect(show).toMatchObject({ admission: { batchMaxBacklogSeconds: 100 }, fairness: null });
    expect((await runCliOk(home, ['context', 'show'])).stdout).toMatch(/^admission\tbatch 100s$/m);
  });

  it("fairness: the context's tenant cap and the worker's --tenant-cap hold across the worker's slots", async () => {
    const db = `sqlite:${join(home.dir, 'fair.db')}`;
    writeUser({ currentContext: 'prod', contexts: { prod: { url: db, fairness: { tenantConcurrency: 1 } } } });
    for (const tenant of ['acme', 'acme', 'beta', 'beta']) await runCliOk(home, ['submit', 'x:v1', '--tenant', tenant]);
    const marks = join(home.dir, 'marks');
    mkdirSync(marks);
    // Each handler notes its start. A beta job (two may run) waits until the other is running or
    // has met it: with the cap honoured they always meet, however slow the machine. An acme job
    // (capped at one) waits until both beta jobs have met — three jobs in four slots, so that
    // always comes — and then says whether another acme job is running: never, with the cap
    // honoured. No handler decides anything by how long it has waited.
    const handler = `
      const fs = require('fs'), path = require('path'), dir = ${JSON.stringify(marks)}, t = process.env.AGENTQ_TENANT, me = t + '.' + process.env.AGENTQ_JOB_ID;
      const said = (f) => fs.readFileSync(path.join(dir, f), 'utf8');
      const others = (tenant, states) => fs.readdirSync(dir).filter((f) => f.startsWith(tenant + '.') && f !== me && states.includes(said(f))).length;
      fs.writeFileSync(path.join(dir, me), 'running');
      const met = () => t === 'beta' ? (others('beta', ['running', 'met']) > 0 ? 'met' : null) : others('beta', ['met']) < 2 ? null : others('acme', ['running', 'met']) > 0 ? 'met' : 'alone';
      (function wait() { const m = met(); if (m) { fs.writeFileSync(path.join(dir, me), m); process.stdout.write(m); } else setTimeout(wait, 20); })();`;
    const run = await runCliOk(home, ['worker', '--concurrency', '4', '--tenant-cap', 'beta=2', '--drain', '--', process.execPath, '-e', handler]);
    expect(run.stderr).toContain('tenant cap 1 (beta 2)');
    const results = JSON.parse((await runCliOk(home, ['list', '-o', 'json'])).stdout) as Array<{ tenant_id: string; state: string; result: string }>;
    const by = (tenant: string) => results.filter((j) => j.tenant_id === tenant).map((j) => [j.state, j.result]);
    expect(by('acme')).toEqual([['succeeded', 'alone'], ['succeeded', 'alone']]);
    expect(by('beta')).toEqual([['succeeded', 'met'], ['succeeded', 'met']]);
  });

  it('a bad setting exits 78 naming the file, the context and the rule', async () => {
    writeUser({ contexts: { prod: { url: 'sqlite::memory:', fairness: { tenantConcurency: 2 } } } });
    const r = await runCli(home, ['--context', 'prod', 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(userFile);
    expect(r.stderr).toContain('context "prod": fairness: unknown key "tenantConcurency"');
    const flag = await runCli(home, ['--url', 'sqlite::memory:', 'worker', '--tenant-cap', 'acme', '--', 'true']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--tenant-cap "acme" must be TENANT=N');
  });

  // Regression: an empty --classes (an unset variable) was refused as "classes must be a non-empty list …, got []", naming no flag.
  it('an empty --classes exits 2 naming the flag and the classes', async () => {
    for (const value of ['', ' , ']) {
      const r = await runCli(home, ['--url', 'sqlite::memory:', 'worker', '--classes', value, '--', 'true']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: --classes ${JSON.stringify(value)} names no class: use interactive, batch, maintenance (comma-separated), or leave it out for all`);
    }
  });

  // Regression: `--worker-version "$GIT_SHA"` with the variable unset recorded "" on every attempt, and 10 KB were taken too.
  it('an empty or overlong --worker-version exits 2; an empty AGENTQ_WORKER_VERSION counts as unset', async () => {
    const empty = await runCli(home, ['--url', 'sqlite::memory:', 'worker', '--worker-version', '', '--', 'true']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('error: --worker-version is empty (an unset variable?): give a version, or leave the flag out');
    const long = await runCli(home, ['--url', 'sqlite::memory:', 'worker', '--worker-version', 'v'.repeat(129), '--', 'true']);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('error: --worker-version must be at most 128 characters (got 129)');
    const db = `sqlite:${join(home.dir, 'wv.db')}`;
    await runCliOk(home, ['--url', db, 'submit', 'x:v1', '--queue', 'wv']);
    await runCliOk(home, ['--url', db, 'worker', '--queue', 'wv', '--drain', '--', 'true'], { env: { AGENTQ_WORKER_VERSION: '' } });
    const [job] = JSON.parse((await runCliOk(home, ['--url', db, 'list', '--queue', 'wv', '-o', 'json'])).stdout) as Array<{ attempts: Array<{ worker_version: string | null }> }>;
    expect(job!.attempts[0]!.worker_version).toBeNull();
  });

  // Regression: the second of two caps for one tenant silently won.
  it('--tenant-cap twice for one tenant exits 2 naming both values, rather than one silently winning', async () => {
    const r = await runCli(home, ['--url', 'sqlite::memory:', 'worker', '--tenant-cap', 'acme=3', '--tenant-cap', 'beta=1', '--tenant-cap', 'acme=4', '--', 'true']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --tenant-cap acme is given twice (3 and 4): give one cap per tenant');
  });
});

describe('context names that are Object.prototype members', () => {
  it('are unknown unless defined; defined, their url and readOnly apply', async () => {
    for (const name of ['hasOwnProperty', 'toString', 'valueOf', 'constructor', '__proto__']) {
      expect((await runCli(home, ['--context', name, 'list'])).code).toBe(78);
      expect((await runCli(home, ['list'], { env: { AGENTQ_CONTEXT: name } })).code).toBe(78);
      expect((await runCli(home, ['context', 'use', name])).code).toBe(78);
    }
    writeUser(`{ "contexts": { "__proto__": { "url": "sqlite:${join(home.dir, 'p.db')}", "readOnly": true } } }`);
    await runCliOk(home, ['context', 'use', '__proto__']);
    const show = JSON.parse((await runCliOk(home, ['context', 'show', '-o', 'json'])).stdout);
    expect(show).toMatchObject({ context: '__proto__', url: `sqlite:${join(home.dir, 'p.db')}`, read_only: true });
    expect((await runCli(home, ['submit', 'x:v1'])).code).toBe(4);
  });
});

describe('configuration errors exit 78', () => {
  it.each([
    ['unparseable', '{ "contexts": '],
    ['wrong type', '{ "contexts": [] }'],
  ])('%s user file', async (_what, text) => {
    writeUser(text);
    const r = await runCli(home, ['list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(userFile);
  });

  it('an unsupported URL scheme', async () => {
    const r = await runCli(home, ['--url', 'mongodb://db/x', 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('unsupported backend URL');
    // The hint names every kind of URL agentq takes, SQS included.
    expect(r.stderr).toContain('hint: Use sqlite:PATH (the embedded default), redis://HOST:PORT, rediss://HOST:PORT, redis+cluster://HOST:PORT or sqs://REGION/PREFIX.');
  });

  // Regression: a sqlite: URL naming a directory said only "unable to open database file".
  it('a sqlite: URL that names a directory says so, for reading and writing commands', async () => {
    for (const args of [['list'], ['submit', 'x:v1']]) {
      const r = await runCli(home, ['--url', `sqlite:${home.dir}`, ...args]);
      expect(r.code).toBe(78);
      expect(r.stderr).toContain(`error: the URL sqlite:${home.dir} names a directory, not a database file`);
    }
  });

  // Regression: `--url ""` (an unset variable) said "unsupported backend URL " with nothing after it.
  it('an empty --url says it is empty', async () => {
    const r = await runCli(home, ['--url', '', 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('error: --url is empty: give a backend URL');
  });

  it('a broken config does not break --help, --version or help exit-codes', async () => {
    writeUser('nope');
    for (const args of [['--help'], ['--version'], ['help', 'exit-codes']]) expect((await runCli(home, args)).code).toBe(0);
  });
});

describe('credentials are redacted in every message', () => {
  it('in errors, in context show and in context list', async () => {
    const secretUrl = 'mongodb://admin:hunter2@db.example:27017/x?authSource=admin&token=s3cr3t';
    const r = await runCli(home, ['--url', secretUrl, 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('admin:***@');
    expect(r.stderr + r.stdout).not.toContain('hunter2');
    expect(r.stderr + r.stdout).not.toContain('s3cr3t');

    writeUser({ contexts: { prod: { url: 'redis://default:hunter2@redis.example:6379' } } });
    const list = await runCliOk(home, ['context', 'list', '-o', 'json']);
    expect(list.stdout).toContain('redis://default:***@redis.example:6379');
    expect(list.stdout).not.toContain('hunter2');
    const show = await runCliOk(home, ['context', 'show'], { env: { AGENTQ_URL: 'redis://:hunter2@127.0.0.1:1' } });
    expect(show.stdout).not.toContain('hunter2');
    expect(show.stdout).toContain('redis://:***@127.0.0.1:1');
  });
});
