/**
 * A real local Redis Cluster of 3 masters (and, with `replicas`, that many replicas per master)
 * for integration tests: `redis-server --cluster-enabled yes` processes on free loopback
 * ports (each port + 10000 free too, for the cluster bus), joined with
 * `redis-cli --cluster create … --cluster-yes`, torn down afterwards.
 * Start it once per test file: creating a cluster takes about a second.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killChild, RedisExitedError, serverArgs, spawnRedis, waitForPing } from './redis-server.js';

export interface RedisCluster {
  /** Every node's port: the masters first, then the replicas (as `redis-cli --cluster create` assigned them). */
  ports: number[];
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3` */
  url: string;
  /** With `tls`: each node's TLS port, and `rediss+cluster://` over them (Redis 7 tells TLS clients the TLS ports). */
  tlsPorts: number[];
  tlsUrl: string;
  stop(): Promise<void>;
  cli(port: number, ...args: string[]): string;
  /** SIGKILLs the node on `port` (its data dir and nodes.conf stay). */
  killNode(port: number): Promise<void>;
  /** Starts a killed node again with the same arguments; resolves once it answers PING. */
  startNode(port: number): Promise<void>;
  /** Sends the node on `port` a signal (SIGSTOP freezes it with its sockets open; SIGCONT resumes it). */
  signalNode(port: number, sig: NodeJS.Signals): void;
}

function cli(port: number, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** PEM files for TLS nodes: the server certificate and key, and the CA the nodes trust on the (TLS) cluster bus. */
export interface ClusterTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * `aof`: the nodes keep an append-only file (appendfsync always), so a killed node restarts with its
 * keys. `replicas`: replicas per master (default 0); `nodeTimeoutMs`: cluster-node-timeout (how long
 * before a dead master's replica is promoted; default 5000).
 */
export interface ClusterOptions {
  aof?: boolean;
  replicas?: number;
  nodeTimeoutMs?: number;
}

export async function startRedisCluster(masters = 3, tls?: ClusterTls, o: ClusterOptions = {}): Promise<RedisCluster> {
  // A node whose port (or bus port) was taken before it bound exits at once: start over on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisClusterOnce(masters, tls, o);
    } catch (e) {
      if (!(e instanceof RedisExitedError) || attempt >= 3) throw e;
    }
  }
}

async function startRedisClusterOnce(masters: number, tls: ClusterTls | undefined, o: ClusterOptions): Promise<RedisCluster> {
  const replicas = o.replicas ?? 0;
  const root = mkdtempSync(join(tmpdir(), 'agentq-cluster-'));
  const children: ChildProcess[] = [];
  const nodeArgs: string[][] = [];
  const ports: number[] = [];
  const tlsPorts: number[] = [];
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await freePort(10000);
      const dir = join(root, String(port));
      mkdirSync(dir);
      ports.push(port);
      // (a TLS node keeps its plain port too: the harness creates the cluster and checks it over that)
      const tlsArgs: string[] = [];
      if (tls) {
        const tlsPort = await freePort();
        tlsPorts.push(tlsPort);
        tlsArgs.push('--tls-port', String(tlsPort), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no', '--tls-cluster', 'yes');
      }
      nodeArgs.push(serverArgs(port, dir, { aof: o.aof ?? false, args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-node-timeout', String(o.nodeTimeoutMs ?? 5000), ...tlsArgs] }));
      children.push(spawnRedis(nodeArgs[i]!));
    }
    await Promise.all(ports.map((p, i) => waitForPing(p, undefined, join(root, String(p), 'redis.log'), children[i])));
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr}${create.stdout}`);
    // Every node must agree the cluster is up (and each replica have synced) before clients connect.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok =
        ports.every((p) => cli(p, 'cluster', 'info').includes('cluster_state:ok')) &&
        ports.every((p) => !/^role:slave/m.test(cli(p, 'info', 'replication')) || /^master_link_status:up/m.test(cli(p, 'info', 'replication')));
      if (ok) break;
      if (Date.now() > deadline) throw new Error('cluster did not reach cluster_state:ok');
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (e) {
    await Promise.all(children.map((c) => killChild(c)));
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  return {
    ports,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    tlsPorts,
    tlsUrl: `rediss+cluster://${tlsPorts.map((p) => `127.0.0.1:${p}`).join(',')}`,
    cli,
    killNode: async (port) => {
      await killChild(children[ports.indexOf(port)]!);
    },
    startNode: async (port) => {
      const i = ports.indexOf(port);
      children[i] = spawnRedis(nodeArgs[i]!);
      await waitForPing(port);
    },
    signalNode: (port, sig) => {
      children[ports.indexOf(port)]!.kill(sig);
    },
    stop: async () => {
      await Promise.all(children.map((c) => killChild(c)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
