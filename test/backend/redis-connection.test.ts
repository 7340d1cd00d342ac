/**
 * Reaching Redis, and failing to, as an operator sees it through the built CLI: `rediss://` to a
 * real TLS redis-server (its certificate signed by a CA made here with openssl), refused
 * credentials and ACL permissions, a port where nothing listens, the redis:// / rediss:// mix-ups,
 * a worker started before its Redis, a Cluster and a standalone server mistaken for each other, a
 * database the server lacks, a full Redis, and an evicting maxmemory-policy. Each failure
 * must exit with the right code and name its cause, and never hang.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { Job } from '../../src/core/schemas.js';
import { collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';

let home: CliHome;
let certs: string;
let tlsServer: RedisServer;
let tlsPort: number;
let authServer: RedisServer;
let plainServer: RedisServer;
let tlsCluster: RedisCluster;
let otherNameServer: RedisServer;
let otherNamePort: number;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

beforeAll(async () => {
  home = makeCliHome('agentq-redis-conn-');
  certs = mkdtempSync(join(tmpdir(), 'agentq-redis-tls-'));
  const f = (n: string) => join(certs, n);
  // A private CA, and a server certificate it signs for 127.0.0.1 (as a managed Redis would have)
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=agentq test CA', '-days', '2', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', f('server.key'), '-out', f('server.csr'));
  writeFileSync(f('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f('san.cnf'), '-out', f('server.pem'));
  // a second server certificate, for a name that is not the one the tests connect by
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=other.example', '-keyout', f('other.key'), '-out', f('other.csr'));
  writeFileSync(f('other.cnf'), 'subjectAltName=DNS:other.example\n');
  openssl('x509', '-req', '-in', f('other.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f('other.cnf'), '-out', f('other.pem'));
  tlsPort = await freePort();
  // TLS on a port of its own; the server keeps its plain port for the harness's PING readiness check
  tlsServer = await startRedisServer({
    args: ['--tls-port', String(tlsPort), '--tls-cert-file', f('server.pem'), '--tls-key-file', f('server.key'), '--tls-ca-cert-file', f('ca.pem'), '--tls-auth-clients', 'no'],
  });
  otherNamePort = await freePort();
  otherNameServer = await startRedisServer({
    args: ['--tls-port', String(otherNamePort), '--tls-cert-file', f('other.pem'), '--tls-key-file', f('other.key'), '--tls-ca-cert-file', f('ca.pem'), '--tls-auth-clients', 'no'],
  });
  // the password is set once the server answers (the harness's readiness check is a PING without one)
  authServer = await startRedisServer();
  authServer.cli('ACL', 'SETUSER', 'pinger', 'on', '>pingpw', '~*', '+ping'); // agentq's first read is refused
  // a read-only user: agentq's scripts run, but their writes are refused inside them
  authServer.cli('ACL', 'SETUSER', 'reader', 'on', '>readpw', '~*', '+@read', '+@connection', '+evalsha', '+eval', '+script', '+info');
  // `+@read` alone: plain reads work, agentq's scripts (and INFO) are refused
  authServer.cli('ACL', 'SETUSER', 'plainreader', 'on', '>plainpw', '~*', '+@read', '+@connection');
  authServer.cli('CONFIG', 'SET', 'requirepass', 's3cret');
  plainServer = await startRedisServer();
  tlsCluster = await startRedisCluster(3, { cert: f('server.pem'), key: f('server.key'), ca: f('ca.pem') });
});

afterAll(async () => {
  await Promise.all([tlsServer?.stop(), otherNameServer?.stop(), authServer?.stop(), plainServer?.stop(), tlsCluster?.stop()]);
  rmSync(certs, { recursive: true, force: true });
  home?.cleanup();
});

const trustCa = () => ({ NODE_EXTRA_CA_CERTS: join(certs, 'ca.pem') });

describe('rediss:// against a real TLS redis-server', () => {
  it('with the CA trusted (NODE_EXTRA_CA_CERTS): submit, a worker runs the job, inspect sees it succeeded', async () => {
    const url = `rediss://127.0.0.1:${tlsPort}`;
    const id = (await runCliOk(home, ['--url', url, 'submit', 'task:v1', '--queue', 'tls'], { env: trustCa() })).stdout.trim();
    await runCliOk(home, ['--url', url, 'worker', '--queue', 'tls', '--drain', '--', '/bin/echo', 'over tls'], { env: trustCa() });
    const job = Job.parse(JSON.parse((await runCliOk(home, ['--url', url, 'inspect', id, '-o', 'json'], { env: trustCa() })).stdout));
    expect(job.state).toBe('succeeded');
    expect(job.result).toBe('over tls\n');
  });

  it('a certificate this machine does not trust: exit 78 at once, naming the certificate and how to trust its CA', async () => {
    const r = await runCli(home, ['--url', `rediss://127.0.0.1:${tlsPort}`, 'list', '--queue', 'tls']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`error: TLS: the certificate of Redis at 127.0.0.1:${tlsPort} is not trusted here`);
    expect(r.stderr).toContain('SELF_SIGNED_CERT_IN_CHAIN');
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
  });

  it('a trusted certificate for another host name: exit 78, naming the mismatch', async () => {
    const r = await runCli(home, ['--url', `rediss://127.0.0.1:${otherNamePort}`, 'list', '--queue', 'tls'], { env: trustCa() });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`error: TLS: the certificate of Redis at 127.0.0.1:${otherNamePort} does not name the host in the URL`);
    expect(r.stderr).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('redis:// to the TLS port: exit 75 naming the reset connection, with the hint to use rediss://', async () => {
    const r = await runCli(home, ['--url', `redis://127.0.0.1:${tlsPort}`, 'list', '--queue', 'tls']);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain(`error: Redis at 127.0.0.1:${tlsPort} is unavailable: `);
    expect(r.stderr).toContain('ECONNRESET');
    expect(r.stderr).toContain('use rediss://');
  });

  it('rediss:// to a plain-text port: exit 75 once the handshake times out, with the hint to check the scheme', async () => {
    const r = await runCli(home, ['--url', `rediss://127.0.0.1:${plainServer.port}`, 'list', '--queue', 'tls']);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain('ETIMEDOUT');
    expect(r.stderr).toContain('does not speak TLS never completes the handshake');
  });
});

describe('rediss+cluster:// against a real 3-master Cluster over TLS', () => {
  it('with the CA trusted: a queue split in 3 shards over the nodes, submit, worker, inspect', async () => {
    const url = tlsCluster.tlsUrl;
    const ids: string[] = [];
    for (const tenant of ['a', 'b', 'c', 'd']) {
      ids.push((await runCliOk(home, ['--url', `${url}?shards=3`, 'submit', 'task:v1', '--queue', 'ctls', '--tenant', tenant], { env: trustCa() })).stdout.trim());
    }
    await runCliOk(home, ['--url', url, 'worker', '--queue', 'ctls', '--drain', '--', '/bin/echo', 'cluster over tls'], { env: trustCa() });
    for (const id of ids) {
      const job = Job.parse(JSON.parse((await runCliOk(home, ['--url', url, 'inspect', id, '-o', 'json'], { env: trustCa() })).stdout));
      expect(job.state).toBe('succeeded');
      expect(job.result).toBe('cluster over tls\n');
    }
  });

  it('without the CA: exit 75, the hint naming TLS ports and NODE_EXTRA_CA_CERTS', async () => {
    const r = await runCli(home, ['--url', tlsCluster.tlsUrl, 'list', '--queue', 'ctls']);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain('is unavailable: none of its seed nodes could be reached');
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
  });
});

describe('credentials and permissions', () => {
  const list = (url: string) => runCli(home, ['--url', url, 'list', '--queue', 'auth']);

  it('no password for a server that needs one: exit 4 naming NOAUTH, with where the password goes', async () => {
    const r = await list(authServer.url);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`error: Redis at 127.0.0.1:${authServer.port} refused the credentials: NOAUTH`);
    expect(r.stderr).toContain('user:password@');
    expect(r.stderr).not.toContain('internal error');
  });

  it('a wrong password: exit 4 naming WRONGPASS, the password never printed', async () => {
    const r = await list(`redis://:not-the-password@127.0.0.1:${authServer.port}`);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('WRONGPASS');
    expect(r.stderr).not.toContain('not-the-password');
  });

  it('an ACL user without the commands agentq runs: exit 4 naming NOPERM', async () => {
    const r = await list(`redis://pinger:pingpw@127.0.0.1:${authServer.port}`);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('refused a command agentq needs: NOPERM');
  });

  it('a read-only ACL user, whose writes are refused inside a script (Redis 7.0: ERR, not NOPERM): exit 4 with the ACL hint', async () => {
    await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'submit', 'w:v1', '--queue', 'ro']);
    const r = await runCli(home, ['--url', `redis://reader:readpw@127.0.0.1:${authServer.port}`, 'submit', 'w:v1', '--queue', 'ro']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("refused a command agentq needs: ERR The user executing the script can't run this command");
    expect(r.stderr).toContain('The ACL user needs');
    expect(r.stderr).not.toContain('bug in agentq');
  });

  it('a +@read user (no EVAL): inspect exits 4 naming NOPERM, not an internal error', async () => {
    const id = (await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'submit', 'w:v1', '--queue', 'ro-inspect'])).stdout.trim();
    const r = await runCli(home, ['--url', `redis://plainreader:plainpw@127.0.0.1:${authServer.port}`, 'inspect', id]);
    expect(r.stderr).not.toContain('bug in agentq');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("refused a command agentq needs: NOPERM this user has no permissions to run the 'eval' command");
    expect(r.stderr).toContain('The ACL user needs');
  });

  it("a user without INFO: the read works, with no ioredis line about its ready check on stderr", async () => {
    await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'submit', 'w:v1', '--queue', 'ro-noinfo']);
    const r = await runCliOk(home, ['--url', `redis://plainreader:plainpw@127.0.0.1:${authServer.port}`, 'dlq', 'list', '--queue', 'ro-noinfo']);
    expect(r.stderr).not.toContain('ready check');
    // (the empty listing's one line, and nothing else)
    expect(r.stderr).toBe('The DLQ has no entries matching this selection.\n');
  });

  it('a worker of a read-only ACL user stops by itself with exit 4 instead of retrying for ever', async () => {
    await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'submit', 'w:v1', '--queue', 'ro-worker']);
    const r = await runCli(home, ['--url', `redis://reader:readpw@127.0.0.1:${authServer.port}`, 'worker', '--queue', 'ro-worker', '--', '/bin/true'], { timeoutMs: 60_000 });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('worker: stopping — the store has refused this worker for 10s');
  }, 60_000);

  it('a worker whose credentials stay refused stops by itself with exit 4 instead of polling on', async () => {
    const r = await runCli(home, ['--url', `redis://:not-the-password@127.0.0.1:${authServer.port}`, 'worker', '--queue', 'auth', '--', '/bin/true'], { timeoutMs: 60_000 });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('worker: stopping — the store has refused this worker for 10s');
    expect(r.stderr).toContain('error: Redis at');
    expect(r.stderr).toContain('WRONGPASS');
  }, 60_000);

  it('the right password works', async () => {
    await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'list', '--queue', 'auth']);
  });

  // Regression: with DEBUG=* left in the environment (for another tool), ioredis's debug log wrote
  // every command to stderr, the AUTH command with the password in clear among them.
  it('DEBUG=* in the environment prints no password (nor ioredis\'s debug log)', async () => {
    const r = await runCliOk(home, ['--url', `redis://:s3cret@127.0.0.1:${authServer.port}`, 'list', '--queue', 'auth'], { env: { DEBUG: '*' } });
    expect(r.stderr).not.toContain('s3cret');
    expect(r.stderr).not.toContain('ioredis:');
  });
});

describe('a password the server does not need', () => {
  it("is said once in agentq's words, not as ioredis's raw [WARN] line, and the command works", async () => {
    const r = await runCliOk(home, ['--url', `redis://:unneeded@127.0.0.1:${plainServer.port}`, 'list', '--queue', 'nopw']);
    expect(r.stderr).not.toContain('[WARN]');
    expect(r.stderr.match(/warning: Redis at 127\.0\.0\.1:\d+ does not require a password, but the URL gives one: it is ignored/g)).toHaveLength(1);
    expect(r.stderr).not.toContain('unneeded');
  });
});

describe('nothing listening', () => {
  it('standalone: exit 75 naming the refused connection and the address; the process ends', async () => {
    const port = await freePort();
    const r = await runCli(home, ['--url', `redis://127.0.0.1:${port}`, 'dlq', 'list', '--queue', 'q']);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain(`error: Redis at 127.0.0.1:${port} is unavailable: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(r.stderr).not.toContain('maxRetriesPerRequest');
  });

  // Regression: ioredis's disconnect() of a socket that had already closed (refused) left a 2 s
  // timer behind, so a script that closed its client went on running for 2 s more. Proven by what
  // is left to keep the process alive once close() resolved: nothing of the client's.
  it('a library script whose client failed to reach Redis ends as soon as it closes the client: close() leaves no timer or socket behind', async () => {
    const port = await freePort();
    const script = `
      import { createClient } from ${JSON.stringify(join(process.cwd(), 'dist', 'index.js'))};
      const c = await createClient({ url: 'redis://127.0.0.1:${port}' });
      await c.submit({ workflow: 'a:v1' }).catch((e) => process.stdout.write(e.code + '\\n'));
      await c.close();
      // (the events ioredis emits on closing come on the next turns)
      await new Promise((r) => setImmediate(r));
      process.stdout.write(JSON.stringify(process.getActiveResourcesInfo()) + '\\n');
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    const [code, left] = out.trim().split('\n');
    expect(code).toBe('BACKEND_UNAVAILABLE');
    // (the pipes of its stdio to this test are all that is left: no timer, no socket)
    expect((JSON.parse(left!) as string[]).filter((r) => r !== 'PipeWrap')).toEqual([]);
  });

  // Regression: a worker waits for a store that is not there (yet); with --drain (a CI job, a wrong
  // URL) it waited for ever.
  it('worker --drain gives up after 30 s of claims the store did not answer: exit 75, saying the queue was not drained', async () => {
    const port = await freePort();
    const startedAt = Date.now();
    const child = spawnCli(home, ['--url', `redis://127.0.0.1:${port}`, 'worker', '--queue', 'q', '--drain', '--', '/bin/true']);
    let stopSaidAfterMs: number | null = null;
    let said = '';
    child.stderr.on('data', (b: Buffer) => {
      said += b.toString();
      if (stopSaidAfterMs === null && said.includes('worker: stopping')) stopSaidAfterMs = Date.now() - startedAt;
    });
    const r = await collect(child, 90_000);
    const tookMs = Date.now() - startedAt;
    expect(r.code).toBe(75);
    // Regression: it gave up after about 37 s: the 30 s were counted from the first failed claim's
    // answer, which came once the client's own connection retries had given up (5 s after start), and
    // were looked at only at the next failed claim (every 2-3 s). They now count from the worker's
    // start, and the stop comes when they are up; the exit follows once the claim in flight has ended.
    expect(stopSaidAfterMs).toBeGreaterThanOrEqual(30_000);
    expect(stopSaidAfterMs).toBeLessThan(31_500);
    expect(tookMs).toBeLessThan(36_000);
    expect(r.stderr).toContain('worker: stopping — --drain, and the store has not answered a claim for 30s');
    expect(r.stderr).toContain(`error: --drain: queue q was not drained: its claims have failed for 30s (Redis at 127.0.0.1:${port} is unavailable`);
  }, 90_000);

  // The 30 s of a store lost after it had answered count from the first failed claim, not from the
  // worker's start: a --drain worker whose job ran longer than 30 s before the outage does not give up at once.
  it('worker --drain, the store lost after it answered: the 30 s count from the first claim that failed', async () => {
    const server = await startRedisServer();
    try {
      const started = join(home.dir, `started-${server.port}`);
      const release = join(home.dir, `release-${server.port}`);
      const handler = join(home.dir, `wait-${server.port}.sh`);
      writeFileSync(handler, `#!/bin/sh\ntouch '${started}'\nwhile [ ! -e '${release}' ]; do sleep 0.05; done\n`, { mode: 0o755 });
      await runCliOk(home, ['--url', server.url, 'submit', 'x:v1', '--queue', 'later']);
      const child = spawnCli(home, ['--url', server.url, 'worker', '--queue', 'later', '--drain', '--', handler]);
      let stopSaidAt: number | null = null;
      let claimFailedAt: number | null = null;
      let said = '';
      child.stderr.on('data', (b: Buffer) => {
        said += b.toString();
        if (claimFailedAt === null && said.includes('store error during claim')) claimFailedAt = Date.now();
        if (stopSaidAt === null && said.includes('worker: stopping')) stopSaidAt = Date.now();
      });
      const done = collect(child, 140_000);
      await pollUntil(() => existsSync(started), { what: 'the handler started', timeoutMs: 30_000 });
      await server.kill();
      const lostAt = Date.now();
      writeFileSync(release, '');
      const r = await done;
      expect(r.code, r.stderr).toBe(75);
      expect(r.stderr).toContain('error: --drain: queue later was not drained: its claims have failed for 30s');
      expect(stopSaidAt! - lostAt).toBeGreaterThanOrEqual(30_000);
      // Not at the first failed claim's answer (as if counted from the worker's start, which stopped
      // at that answer or the next, 0-3 s later): 30 s from the claim's start, less the time it
      // took to fail, which is the client's connection retries (a few seconds) or, when it met the
      // dead server's connection still open, its 15 s answer timeout first (seen: the stop 11.5 s
      // after the answer, under load). So at least 10 s; 5 s leaves room for a loaded machine.
      expect(stopSaidAt! - claimFailedAt!).toBeGreaterThanOrEqual(5_000);
    } finally {
      await server.stop();
    }
  }, 160_000);

  it('Cluster seed nodes: exit 75 saying none of them could be reached, and why for each', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const r = await runCli(home, ['--url', `redis+cluster://127.0.0.1:${a},127.0.0.1:${b}`, 'list', '--queue', 'q']);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain(
      `error: Redis Cluster at 127.0.0.1:${a},127.0.0.1:${b} is unavailable: none of its seed nodes could be reached ` +
        `(127.0.0.1:${a}: connect ECONNREFUSED 127.0.0.1:${a}; 127.0.0.1:${b}: connect ECONNREFUSED 127.0.0.1:${b})`,
    );
  });

  it('a worker stopped (SIGTERM) while its claim waits on a server that stopped answering ends after its --grace, not when the call gives up', async () => {
    const frozen = await startRedisServer();
    const worker = spawnCli(home, ['--url', frozen.url, 'worker', '--queue', 'frozen-stop', '--grace', '1s', '-o', 'ndjson', '--', '/bin/true']);
    const done = collect(worker, 60_000);
    let stdout = '';
    let stderr = '';
    worker.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      // (its claims have started: the calls before them would wait out the freeze)
      await pollUntil(() => stdout.includes('"type":"idle"'), { timeoutMs: 20_000, what: 'the worker to find the queue empty' });
      frozen.signal('SIGSTOP');
      // a claim is in flight and unanswered
      await pollUntil(() => stderr.includes('the store is not answering (1 call waiting'), { timeoutMs: 20_000, what: 'the worker to see its claim unanswered' });
      worker.kill('SIGTERM');
      const r = await done;
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('worker: stopped');
      // it did not wait for the claim to give up (the 15 s command timeout)
      expect(r.stderr).not.toContain('did not answer within');
    } finally {
      worker.kill('SIGKILL');
      await done.catch(() => undefined);
      frozen.signal('SIGCONT');
      await frozen.stop();
    }
  }, 60_000);

  it('a server that stops answering with its socket open (SIGSTOP): exit 75 saying it did not answer, never a hang', async () => {
    const frozen = await startRedisServer();
    try {
      await runCliOk(home, ['--url', frozen.url, 'submit', 'task:v1', '--queue', 'frozen']);
      frozen.signal('SIGSTOP');
      const r = await runCli(home, ['--url', frozen.url, 'list', '--queue', 'frozen'], { timeoutMs: 60_000 });
      expect(r.code).toBe(75);
      expect(r.stderr).toContain(`error: Redis at ${frozen.host}:${frozen.port} is unavailable: it did not answer within 15 s`);
    } finally {
      frozen.signal('SIGCONT');
      await frozen.stop();
    }
  });

  it('a worker started before its Redis keeps trying, and runs the job once Redis is up', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const worker = spawnCli(home, ['--url', url, 'worker', '--queue', 'late', '--', '/bin/echo', 'late start']);
    const done = collect(worker, 60_000);
    let stderr = '';
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    let redis: RedisServer | null = null;
    try {
      // the worker has failed to reach Redis at least once before Redis starts
      await pollUntil(() => stderr.includes('ECONNREFUSED'), { timeoutMs: 20_000, what: 'the worker to report the refused connection' });
      redis = await startRedisServer({ port });
      const id = (await runCliOk(home, ['--url', url, 'submit', 'task:v1', '--queue', 'late'])).stdout.trim();
      await pollUntil(
        async () => JSON.parse((await runCliOk(home, ['--url', url, 'inspect', id, '-o', 'json'])).stdout).state === 'succeeded',
        { timeoutMs: 30_000, intervalMs: 200, what: 'the worker to run the job' },
      );
    } finally {
      worker.kill('SIGTERM');
      await done;
      await redis?.stop();
    }
  });
});

describe('an ACL user on a Cluster', () => {
  it('without CLUSTER INFO (the client checks the Cluster with it): exit 4 naming NOPERM, not "none of its seed nodes could be reached"', async () => {
    for (const port of tlsCluster.ports) tlsCluster.cli(port, 'ACL', 'SETUSER', 'noinfo', 'on', '>noinfopw', '~*', '+@read', '+@connection', '+eval', '+evalsha', '+cluster|slots');
    const url = `redis+cluster://noinfo:noinfopw@${tlsCluster.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
    const r = await runCli(home, ['--url', url, 'list', '--queue', 'acl']);
    expect(r.stderr).not.toContain('none of its seed nodes');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("refused a command agentq needs: NOPERM this user has no permissions to run the 'cluster|info' command");
    expect(r.stderr).toContain('CLUSTER INFO');
  });

  it('a worker without CLUSTER INFO stops by itself with exit 4 naming the refused command, instead of waiting on a claim for ever', async () => {
    // (after its first refused claim ioredis's client ended and then reported itself closed, with no
    // attempt to come: the next claim waited in its offline queue, where no command timeout applies)
    for (const port of tlsCluster.ports) tlsCluster.cli(port, 'ACL', 'SETUSER', 'noinfo', 'on', '>noinfopw', '~*', '+@read', '+@connection', '+eval', '+evalsha', '+cluster|slots');
    const url = `redis+cluster://noinfo:noinfopw@${tlsCluster.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
    const r = await runCli(home, ['--url', url, 'worker', '--queue', 'acl-worker', '--', '/bin/true'], { timeoutMs: 60_000 });
    expect(r.stderr).not.toContain('the store is not answering');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('worker: stopping — the store has refused this worker for 10s');
    expect(r.stderr).toContain('error: Redis at 127.0.0.1:');
    expect(r.stderr).toContain("refused a command agentq needs: NOPERM this user has no permissions to run the 'cluster|info' command");
  }, 60_000);

  // Regression: after a call failed, ioredis's Cluster client reports `close` once its nodes'
  // sockets are gone, with no attempt to come; a command sent then waits in its offline queue, where
  // no command timeout applies. events() (not a guarded call, so it did not start another attempt)
  // and any command of the raw client waited for ever; a standalone client rejects them at once.
  it('a Cluster client that gave up: events() tries again and fails as any call does, and a raw command is rejected as on a standalone server, instead of waiting for ever', async () => {
    for (const port of tlsCluster.ports) tlsCluster.cli(port, 'ACL', 'SETUSER', 'noinfo', 'on', '>noinfopw', '~*', '+@read', '+@connection', '+eval', '+evalsha', '+cluster|slots');
    const url = `redis+cluster://noinfo:noinfopw@${tlsCluster.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
    const backend = new RedisBackend(parseRedisUrl(url), { clock: new ManualClock() });
    try {
      await expect(backend.list({ queue: 'gaveup' }, { limit: 10 })).rejects.toMatchObject({ exitCode: 4 });
      await pollUntil(() => backend.redis.status === 'close', { timeoutMs: 20_000, what: 'the client to report close after end' });
      const reading = (async () => {
        for await (const _ of backend.events({ queue: 'gaveup' })) break;
        return 'ended';
      })();
      await expect(reading).rejects.toMatchObject({ exitCode: 4, message: expect.stringContaining("NOPERM this user has no permissions to run the 'cluster|info' command") });
      await pollUntil(() => backend.redis.status === 'close', { timeoutMs: 20_000, what: 'the client to report close after end again' });
      await expect(backend.redis.get('aq:anything')).rejects.toThrow('Connection is closed.');
    } finally {
      await backend.close();
    }
  }, 60_000);

  it('with CLUSTER INFO but not CLUSTER NODES: reads work', async () => {
    for (const port of tlsCluster.ports) tlsCluster.cli(port, 'ACL', 'SETUSER', 'nonodes', 'on', '>nonodespw', '~*', '+@read', '+@connection', '+eval', '+evalsha', '+cluster|slots', '+cluster|info');
    const url = `redis+cluster://nonodes:nonodespw@${tlsCluster.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
    await runCliOk(home, ['--url', url, 'list', '--queue', 'acl']);
    await runCliOk(home, ['--url', url, 'stats', '--queue', 'acl']);
  });
});

describe('a Cluster and a standalone server mistaken for each other', () => {
  /** The slot ranges the node on `port` serves (its `myself` line of CLUSTER NODES). */
  function ownSlots(port: number): Array<[number, number]> {
    const line = tlsCluster.cli(port, 'CLUSTER', 'NODES').split('\n').find((l) => l.includes('myself'))!;
    return line.trim().split(' ').slice(8).filter((r) => /^\d/.test(r)).map((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return [lo!, hi ?? lo!];
    });
  }

  it('redis:// naming a node of a Cluster: exit 78 at once, saying so and to use redis+cluster:// (no internal error)', async () => {
    const port = tlsCluster.ports[0]!;
    const own = ownSlots(port);
    const served = (key: string) => {
      const slot = Number(tlsCluster.cli(port, 'CLUSTER', 'KEYSLOT', key).trim());
      return own.some(([lo, hi]) => slot >= lo && slot <= hi);
    };
    // a queue none of whose keys this node serves, so the first command is answered MOVED
    let queue = '';
    for (let i = 0; queue === ''; i++) if (!served(`aq:q:elsewhere${i}`) && !served(`{aq:elsewhere${i}:0}`)) queue = `elsewhere${i}`;
    for (const args of [['submit', 'task:v1', '--queue', queue], ['list', '--queue', queue]]) {
      const r = await runCli(home, ['--url', `redis://127.0.0.1:${port}`, ...args]);
      expect(r.code).toBe(78);
      expect(r.stderr).toContain(`error: Redis at 127.0.0.1:${port} is a node of a Redis Cluster (it answered "MOVED`);
      expect(r.stderr).toContain(`hint: Use redis+cluster://127.0.0.1:${port}`);
      expect(r.stderr).not.toContain('internal error');
    }
  });

  it('redis+cluster:// naming a standalone server: exit 78 at once, saying to use redis://', async () => {
    const r = await runCli(home, ['--url', `redis+cluster://127.0.0.1:${plainServer.port}`, 'list', '--queue', 'q']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`error: Redis at 127.0.0.1:${plainServer.port} is not a Cluster node (ERR This instance has cluster support disabled)`);
    expect(r.stderr).toContain(`hint: Use redis://127.0.0.1:${plainServer.port} for it.`);
  });
});

describe('a Cluster node that goes down', () => {
  it('while it is down a call ends with exit 75 naming the cause (never an internal error); once it is back, the jobs are there', async () => {
    const cluster = await startRedisCluster(3, undefined, { aof: true });
    try {
      const port = cluster.ports[0]!;
      const own = cluster.cli(port, 'CLUSTER', 'NODES').split('\n').find((l) => l.includes('myself'))!.trim().split(' ').slice(8);
      const [lo, hi] = own[0]!.split('-').map(Number);
      // a queue whose shard lives on that node
      let queue = '';
      for (let i = 0; queue === ''; i++) {
        const slot = Number(cluster.cli(port, 'CLUSTER', 'KEYSLOT', `{aq:down${i}:0}`).trim());
        if (slot >= lo! && slot <= hi!) queue = `down${i}`;
      }
      const id = (await runCliOk(home, ['--url', cluster.url, 'submit', 'task:v1', '--queue', queue])).stdout.trim();
      await cluster.killNode(port);
      const down = await runCli(home, ['--url', cluster.url, 'list', '--queue', queue]);
      expect(down.code).toBe(75);
      expect(down.stderr).toContain(`error: Redis Cluster at ${cluster.url.slice('redis+cluster://'.length)} is unavailable: `);
      // (which of these depends on how far the other nodes have got in marking it failed)
      expect(down.stderr).toMatch(new RegExp(`its node 127\\.0\\.0\\.1:${port}, which holds the keys of this call, is not answering|CLUSTERDOWN|Connection is closed`));
      expect(down.stderr).not.toContain('internal error');

      // A command started while the Cluster is down fails within the first-connection limit, saying so.
      const fresh = await runCli(home, ['--url', cluster.url, 'list', '--queue', queue]);
      expect(fresh.code).toBe(75);
      expect(fresh.stderr).not.toContain('internal error');
      await cluster.startNode(port);
      await pollUntil(() => cluster.ports.every((p) => cluster.cli(p, 'CLUSTER', 'INFO').includes('cluster_state:ok')), { timeoutMs: 30_000, what: 'the Cluster to be ok again' });
      const after = JSON.parse((await runCliOk(home, ['--url', cluster.url, 'list', '--queue', queue, '-o', 'json'])).stdout) as Array<{ job_id: string }>;
      expect(after.map((j) => j.job_id)).toEqual([id]);
    } finally {
      await cluster.stop();
    }
  }, 90_000);
});

describe('the database in the URL', () => {
  it('a database the server does not have: exit 78 naming it, and nothing written to database 0', { timeout: 60_000 }, async () => {
    const r = await startRedisServer();
    try {
      for (const args of [['submit', 'task:v1', '--queue', 'db'], ['list', '--queue', 'db']]) {
        const res = await runCli(home, ['--url', `redis://127.0.0.1:${r.port}/99`, ...args]);
        expect(res.code).toBe(78);
        expect(res.stderr).toContain(`error: Redis at 127.0.0.1:${r.port} has no database 99 (ERR DB index is out of range)`);
      }
      const worker = await runCli(home, ['--url', `redis://127.0.0.1:${r.port}/99`, 'worker', '--queue', 'db', '--', '/bin/true'], { timeoutMs: 60_000 });
      expect(worker.code).toBe(78);
      expect(r.cli('DBSIZE').trim()).toBe('0');
    } finally {
      await r.stop();
    }
  });

  it('a database it has: the jobs are kept there, not in database 0', async () => {
    const r = await startRedisServer();
    try {
      const id = (await runCliOk(home, ['--url', `redis://127.0.0.1:${r.port}/3`, 'submit', 'task:v1', '--queue', 'db'])).stdout.trim();
      expect(r.cli('DBSIZE').trim()).toBe('0');
      expect(Number(r.cli('-n', '3', 'DBSIZE').trim())).toBeGreaterThan(0);
      const job = JSON.parse((await runCliOk(home, ['--url', `redis://127.0.0.1:${r.port}/3`, 'inspect', id, '-o', 'json'])).stdout);
      expect(job.state).toBe('queued');
    } finally {
      await r.stop();
    }
  });
});

describe('a Redis that refuses writes', () => {
  it('at maxmemory (noeviction): submit exits 75 saying Redis is full, nothing is half-written, reads still work', async () => {
    const r = await startRedisServer(); // the harness runs every server with maxmemory-policy noeviction
    try {
      const first = (await runCliOk(home, ['--url', r.url, 'submit', 'task:v1', '--queue', 'full'])).stdout.trim();
      const used = Number(/used_memory:(\d+)/.exec(r.cli('INFO', 'memory'))![1]);
      r.cli('CONFIG', 'SET', 'maxmemory', String(Math.floor(used / 2)));
      const refused = await runCli(home, ['--url', r.url, 'submit', 'task:v1', '--queue', 'full']);
      expect(refused.code).toBe(75);
      expect(refused.stderr).toContain(`error: Redis at 127.0.0.1:${r.port} is full and refused the write (maxmemory reached): OOM`);
      expect(refused.stderr).toContain('hint: Nothing was written.');
      const listed = await runCliOk(home, ['--url', r.url, 'list', '--queue', 'full', '-o', 'json']);
      expect((JSON.parse(listed.stdout) as Array<{ job_id: string }>).map((j) => j.job_id)).toEqual([first]);
      r.cli('CONFIG', 'SET', 'maxmemory', '0');
      await runCliOk(home, ['--url', r.url, 'submit', 'task:v1', '--queue', 'full']);
    } finally {
      await r.stop();
    }
  });
});

describe('server settings', () => {
  it('a worker warns once at start when Redis may evict its keys (maxmemory-policy), and not under noeviction', async () => {
    const work = () => runCliOk(home, ['--url', plainServer.url, 'worker', '--queue', 'settings', '--drain', '--', '/bin/echo']);
    expect((await work()).stderr).not.toContain('maxmemory-policy');
    plainServer.cli('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const r = await work();
      expect(r.stderr).toContain(`warning: Redis at 127.0.0.1:${plainServer.port} has maxmemory-policy allkeys-lru: when it fills up it will delete jobs`);
      expect(r.stderr.match(/maxmemory-policy/g)).toHaveLength(2); // the policy, and the command that fixes it, in one line
    } finally {
      plainServer.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('on a Cluster every master is asked, and the one that evicts is named', async () => {
    const [first, second] = tlsCluster.ports;
    tlsCluster.cli(second!, 'CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru');
    try {
      const r = await runCliOk(home, ['--url', tlsCluster.url, 'worker', '--queue', 'settings', '--drain', '--', '/bin/echo']);
      expect(r.stderr).toContain(`warning: Redis at 127.0.0.1:${second} has maxmemory-policy volatile-lru`);
      expect(r.stderr).not.toContain(`127.0.0.1:${first} has maxmemory-policy`);
    } finally {
      tlsCluster.cli(second!, 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
  });
});
