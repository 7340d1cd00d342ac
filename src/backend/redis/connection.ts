/**
 * The connection to Redis (one server, or a Cluster's nodes) and what its failures mean to the
 * person or program that made the call.
 *
 * Two phases, because a worker and a one-shot command need different things:
 * - **Before the first successful connection** the client tries for at most FIRST_CONNECT_MS and
 *   then gives up, so `agentq dlq list` against a wrong port or a stopped server says why within a
 *   couple of seconds instead of after ioredis's 20 retries (about 12 s; minutes when each attempt
 *   times out). The next call tries again (`wake`): a worker started before its Redis keeps
 *   polling, backing off in its claim loop, and runs once Redis is up.
 * - **Once connected**, it reconnects without limit (each call still fails after ioredis's 20
 *   retries): a Redis restart in the middle of a worker run or a redrive is waited out.
 *
 * Failures that retrying cannot mend end the attempt at once and keep their own message: a TLS
 * certificate this machine does not trust (exit 78, config) and refused credentials or a missing
 * ACL permission (exit 4, auth). A write refused for the server's state (OOM at maxmemory, a
 * read-only replica, a failing snapshot) is exit 75 and says so. Everything else about reaching
 * Redis is exit 75 (retry later) with the cause (`connect ECONNREFUSED 10.0.0.5:6379`, not
 * ioredis's retry count) and, where the cause suggests it, the likely mix-up of `redis://` and
 * `rediss://`.
 */
import { Cluster, Redis } from 'ioredis';
import { AgentqError, ConfigError, ExitCode, PermissionError, RetryLaterError, isAgentqError } from '../../core/errors.js';
import type { RedisUrlOptions } from './url.js';

export type Client = Redis | Cluster;

/** How long a first connection is tried before the call fails (a later call tries again). */
export const FIRST_CONNECT_MS = 2_000;
/**
 * A Cluster client's first load of the slot map (a connection to a node and CLUSTER SLOTS), per
 * node tried. ioredis allows 1 s: on a busy machine (thirty CLIs started at once, a CPU hog) a
 * healthy Cluster's answer sat unread past it, and `agentq submit` failed with exit 75 "could not
 * load the Cluster's slots (timeout)". A node that really does not answer costs this long before
 * the next seed is tried; once the client is ready, later reloads use ioredis's 1 s again
 * (RELOAD_SLOTS_MS), so a worker that loses a node finds the new topology as fast as before.
 */
export const FIRST_SLOTS_LOAD_MS = 4_000;
const RELOAD_SLOTS_MS = 1_000;
/** Per attempt, for the TCP connection and the TLS handshake (ioredis's default is 10 s). */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a call waits for its answer on an open connection. A server that is stopped (SIGSTOP,
 * a frozen VM, a network that drops packets without resetting) keeps the socket open and never
 * answers: without a limit every command, the TUI and `close()` waited for ever, and a first
 * SIGTERM could not end the process. No agentq call is slow on a healthy server (scripts read
 * bounded pages; blocking reads block for 1 s), so a call unanswered after this is a server that
 * is not there; like a dropped connection, the caller sees exit 75 and a write it re-sends is
 * fenced (see the worker's and the redrive's failure rules).
 */
export const COMMAND_TIMEOUT_MS = 15_000;
/** `close()` waits this long for QUIT's answer (calls in flight answer first), then drops the socket. */
const QUIT_WAIT_MS = 2_000;
/**
 * ioredis's `disconnectTimeout`: after `disconnect()` ends a socket, how long before it is
 * destroyed. ioredis's 2 s default timer is never cleared for a socket that had already closed
 * (a refused connection), so a script that closed a client which never reached Redis stayed
 * alive 2 s more. Nothing is waited for at that point (QUIT was answered, or gave up).
 */
const DISCONNECT_WAIT_MS = 100;

/**
 * Node's codes for a certificate the TLS client refused (tls.TLSSocket#authorizationError, and
 * the host name check): retrying cannot help, the trust store or the URL's host must change.
 */
const UNTRUSTED_CERT = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE', 'CERT_CHAIN_TOO_LONG', 'INVALID_CA', 'INVALID_PURPOSE', 'PATH_LENGTH_EXCEEDED', 'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** ioredis's message for a command on a client that gave up (standalone), which UNAVAILABLE matches. */
const CONNECTION_CLOSED = 'Connection is closed.';

/** How long a Cluster node is given to answer when a call fails, to name the cause. */
const SEED_PROBE_MS = 1_000;
/** A Cluster probe's answer is reused for this long (a worker's failing calls do not each ask again). */
const CLUSTER_PROBE_FRESH_MS = 5_000;

/** Errors of an unreachable or restarting Redis, as ioredis reports them: worth retrying later. */
const UNAVAILABLE = /Command timed out|Too many Cluster redirections|Cluster is ended|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|Connection is closed|MaxRetriesPerRequest|max retries per request|CLUSTERDOWN|TRYAGAIN|LOADING|UNBLOCKED|EPIPE|ENOTFOUND|EAI_AGAIN|Failed to refresh slots cache|None of startup nodes is available/i;
/** How `probeCluster` words a slot being exported by a node it asked (the slots follow in brackets). */
const MIGRATING_CAUSE = 'a hash slot is being migrated between nodes';

export class RedisConnection {
  readonly client: Client;
  /** Where, for messages: `host:port` of the server or of the Cluster's seed nodes. */
  readonly where: string;
  private everReady = false;
  /** How many times the client became ready: a call that saw no change and started unready was never sent (`neverSent`). */
  private readyCount = 0;
  private attemptsSince = Date.now();
  /** The latest connection-level error: the cause a failed call reports. */
  private lastError: Error | null = null;
  /** A failure retrying cannot mend, seen since the current attempt began. */
  private fatal: ConfigError | PermissionError | null = null;
  private closing = false;
  /** The client gave up (ioredis's `end`) and has not started connecting since: see `wake`. */
  private ended = false;
  /**
   * What the Cluster's nodes say for themselves (`probeCluster`): ioredis's Cluster client reports
   * only "Connection is closed." or "Too many Cluster redirections" for a node it could not reach
   * (the node's own error is dropped), which names neither the node nor the cause. Looked up when a
   * call fails for it, at most every CLUSTER_PROBE_FRESH_MS.
   */
  private clusterCause: string | null = null;
  /** A seed refused the user (`probeCluster`): what a call that failed for being unavailable reports. */
  private clusterDenied: PermissionError | null = null;
  private clusterProbe: Promise<void> | null = null;
  private clusterProbedAt = 0;
  /** The URL's database was selected once (`dbGate`); always true for database 0. */
  private dbSelected: boolean;
  private dbCheck: Promise<void> | null = null;

  /** unpipelined: commands (scripts) sent at once rather than through the auto-pipeline. */
  constructor(
    private readonly o: RedisUrlOptions,
    private readonly unpipelined: string[] = [],
  ) {
    this.where = o.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    routeIoredisWarnings(this.where);
    this.dbSelected = o.db === 0;
    this.client = this.connect();
    // (with a listener, ioredis does not print each connection error to the console)
    this.client.on('error', (e: Error) => this.noteError(e));
    this.client.on('ready', () => {
      if (this.client instanceof Cluster) this.client.options.slotsRefreshTimeout = RELOAD_SLOTS_MS;
      this.everReady = true;
      this.readyCount++;
      this.lastError = null;
    });
    this.client.on('end', () => (this.ended = true));
    this.client.on('connecting', () => (this.ended = false));
    if (this.client instanceof Cluster) this.rejectWhileGivenUp(this.client);
  }

  /**
   * A Cluster client that gave up (`end`) reports `close` again once its nodes' sockets are gone
   * (see `wake`), and from then on queues every command in its offline queue, where no command
   * timeout applies, for an attempt that never comes: a command not preceded by `wake` (events(),
   * a raw command, a batch sent while closing) waited for ever. A standalone client that gave up
   * rejects commands at once ("Connection is closed."); so does this one now, which `errorOf`
   * reports as for any call (unavailable, or the refusal that made it give up).
   */
  private rejectWhileGivenUp(cluster: Cluster): void {
    const givenUp = () => this.ended && cluster.status === 'close';
    const send = cluster.sendCommand.bind(cluster);
    cluster.sendCommand = (command, stream, node) => {
      if (!givenUp()) return send(command, stream, node);
      command.reject(new Error(CONNECTION_CLOSED));
      return command.promise;
    };
    // (and what was queued between the attempt's end and its `close`)
    cluster.on('close', () => {
      if (givenUp()) (cluster as unknown as { flushQueue(e: Error): void }).flushQueue(new Error(CONNECTION_CLOSED));
    });
  }

  /**
   * Called before each call: a client that gave up its first connection (status `end`) starts
   * another attempt, so the call waits for it rather than failing on the old one. A Cluster client
   * that gave up after a refused ready check (an ACL user without CLUSTER INFO) reports `close`,
   * not `end`, once its nodes' sockets are gone (ioredis sets `close` again for each of them after
   * `end`): with no attempt left to come, a call would wait in its offline queue for ever, where no
   * command timeout applies.
   */
  wake(): void {
    if (this.closing || !(this.client.status === 'end' || (this.ended && this.client.status === 'close'))) return;
    this.attemptsSince = Date.now();
    this.fatal = null;
    this.clusterCause = null;
    this.clusterDenied = null;
    this.clusterProbe = null;
    this.client.connect().catch(() => undefined);
  }

  /**
   * Null, or a promise to await before the first call: with a database other than 0 in the URL, a
   * SELECT of it. ioredis selects the database on connecting, but when the server has no such
   * database (`ERR DB index is out of range`) it only emits an error and carries on in database
   * 0, where agentq would read and write someone else's keys. The answer is awaited once; a
   * database the server lacks is a ConfigError (exit 78) for this and every later call.
   */
  dbGate(): Promise<void> | null {
    if (this.dbSelected) return null;
    this.dbCheck ??= (this.client as Redis).select(this.o.db).then(
      () => {
        this.dbSelected = true;
      },
      (e: unknown) => {
        this.dbCheck = null;
        const msg = e instanceof Error ? e.message : String(e);
        if (/DB index is out of range|invalid DB index/i.test(msg)) {
          this.fatal = new ConfigError(
            `Redis at ${this.where} has no database ${this.o.db} (${msg})`,
            'The number after the host in the URL selects a database: Redis has 0 to 15 unless its `databases` setting says otherwise.',
          );
          throw this.fatal;
        }
        throw e;
      },
    );
    return this.dbCheck;
  }

  /**
   * Resolves once what the message of the failure `e` needs is known: for a Cluster that could not
   * be reached or served the call, what its nodes say (`probeCluster`). Await it before `errorOf`
   * where a call fails.
   */
  async settled(e?: unknown): Promise<void> {
    if (!this.o.cluster || this.fatal || this.closing || isAgentqError(e)) return;
    const msg = e instanceof Error ? e.message : String(e ?? '');
    if (this.everReady && !UNAVAILABLE.test(msg)) return;
    if (!this.clusterProbe || Date.now() - this.clusterProbedAt > CLUSTER_PROBE_FRESH_MS) {
      this.clusterProbedAt = Date.now();
      this.clusterProbe = this.probeCluster();
    }
    await this.clusterProbe;
  }

  /** Taken when a call starts; `unsent` tells afterwards whether it can have reached the server. */
  callStart(): { ready: boolean; readyCount: number } {
    return { ready: this.client.status === 'ready', readyCount: this.readyCount };
  }

  /**
   * `error` (from `errorOf`) marked as never sent when the connection was not up when the call
   * started and did not come up before it failed: ioredis holds a command in its offline queue
   * until the connection is ready and writes it only then, so such a call never reached the
   * server (a refused connection). A fresh error, as one instance may be shared by calls.
   */
  unsent(error: Error, start: { ready: boolean; readyCount: number }): Error {
    if (!(error instanceof RetryLaterError) || start.ready || this.readyCount !== start.readyCount) return error;
    const copy = new RetryLaterError(error.message, error.code, error.hint, error.retryAfterMs === undefined ? undefined : { afterMs: error.retryAfterMs, at: error.retryAt ?? 0 });
    copy.notSent = true;
    return copy;
  }

  /** A call's failure as agentq's typed error (exit code, message naming the cause, hint). */
  errorOf(e: unknown): Error {
    if (isAgentqError(e)) return e;
    const msg = e instanceof Error ? e.message : String(e);
    if (this.fatal) return this.fatal;
    const denied = deniedError(msg, this.where, this.o.cluster);
    if (denied) return denied;
    const refused = refusedWrite(msg, this.where);
    if (refused) return refused;
    const damaged = /^AQDAMAGED (.*?)(?: script: \S+, on @user_script:\d+\.)?$/s.exec(msg);
    if (damaged) {
      // A script's own check (lua/prelude.ts checkCounters), made before it wrote anything.
      return new AgentqError(
        'STORE_DAMAGED',
        `Redis at ${this.where}: ${damaged[1]} (changed outside agentq?); nothing was written`,
        ExitCode.config,
        'Set the field back to a number (HSET), or delete it (HDEL: it is counted from 0 again, and the figure it fed is off until the jobs it counted end).',
      );
    }
    if (/^(ERR hash value is not an? (integer|float)|ERR value is not a valid float|WRONGTYPE)\b/.test(msg) && / script: \S+, on @user_script:\d+\.$/.test(msg)) {
      // The same damage met by a script that does not check first: Redis names no key, and what
      // the script wrote before the refused command stays.
      return new AgentqError(
        'STORE_DAMAGED',
        `Redis at ${this.where}: one of agentq's keys holds what agentq never writes there (changed outside agentq?): ${msg}; part of the call may have been written`,
        ExitCode.config,
        "Find the damaged counter: `agentq submit` to the same queue names it, or HGETALL the queue's counter hashes ({aq:QUEUE:SHARD}:n, :tot, :blc, :blt, :rt, :sts, :act) and look for a field that is not a number.",
      );
    }
    if (!this.o.cluster && /^(MOVED|ASK|CROSSSLOT)\b/.test(msg)) {
      // A redis:// URL naming a node of a Cluster: the node serves only its own slots.
      return new ConfigError(
        `Redis at ${this.where} is a node of a Redis Cluster (it answered "${msg}"): a Cluster is reached with redis+cluster://`,
        `Use redis+cluster://${this.where}${this.o.tls ? ' (rediss+cluster:// for TLS)' : ''}, with more of its nodes after a comma as seeds.`,
      );
    }
    if (UNAVAILABLE.test(msg) && this.clusterDenied) return this.clusterDenied;
    // The call's slot stayed in migration for all of ioredis's retries (its last answer ASK or
    // TRYAGAIN, lua/prelude.ts; or MOVED, bounced between the two nodes, when the nodes asked say a
    // slot is being exported): every node answers, so "is not answering" and "check that Redis is
    // up" sent the operator after the wrong thing. A reshard stopped half way leaves it so for good.
    const redirected = this.o.cluster ? /^Too many Cluster redirections\. Last error: (?:ReplyError: )?(?:(ASK|TRYAGAIN|MOVED)\b)/.exec(msg) : null;
    if (redirected && (redirected[1] !== 'MOVED' || this.clusterCause?.startsWith(MIGRATING_CAUSE))) {
      const where = this.clusterCause?.startsWith(MIGRATING_CAUSE) ? this.clusterCause.slice(MIGRATING_CAUSE.length) : '';
      return new RetryLaterError(
        `Redis Cluster at ${this.where} is unavailable for this call: its keys are in a hash slot being migrated between nodes${where}, and the migration did not end while the call was retried (${msg})`,
        'BACKEND_UNAVAILABLE',
        'Retry once the reshard is done. A migration stopped half way leaves the slot migrating: `redis-cli --cluster check HOST:PORT` shows it, and `redis-cli --cluster fix HOST:PORT` finishes it.',
      );
    }
    if (UNAVAILABLE.test(msg)) {
      let cause =
        this.o.cluster && !this.everReady
          ? (this.clusterCause ?? 'none of its seed nodes could be reached')
          : /Command timed out/i.test(msg)
            ? `it did not answer within ${COMMAND_TIMEOUT_MS / 1000} s (the connection is open, but the server is stopped, frozen or unreachable)`
            : (this.lastError?.message ?? msg);
      // (a node that does not answer sends a Cluster call round its redirections: name that node)
      const node = /^Too many Cluster redirections.*(?:MOVED|ASK) \d+ (\S+)/.exec(msg)?.[1];
      if (node) cause = `its node ${node}, which holds the keys of this call, is not answering (${msg})`;
      // once connected, what the nodes say names the one at fault; ioredis's words follow
      else if (this.o.cluster && this.everReady && this.clusterCause) cause = `${this.clusterCause} (${msg})`;
      const what = this.o.cluster ? 'Redis Cluster' : 'Redis';
      return new RetryLaterError(`${what} at ${this.where} is unavailable: ${cause}`, 'BACKEND_UNAVAILABLE', this.unavailableHint());
    }
    return e instanceof Error ? e : new Error(msg);
  }

  /**
   * QUIT when connected (the answers of calls in flight arrive first); otherwise just drop the
   * socket: a QUIT would wait for a connection. `now` (see the contract's close) drops it at once:
   * on a frozen server the QUIT held a Ctrl-C'd `tail --follow` for QUIT_WAIT_MS.
   */
  async close(opts: { now?: boolean } = {}): Promise<void> {
    this.closing = true;
    // A standalone client that gave up has no socket and no attempt to come: ioredis's
    // disconnect() would only arm a timer for the socket already gone (DISCONNECT_WAIT_MS), which
    // kept a script alive that long after close().
    if (this.client instanceof Redis && this.client.status === 'end') return;
    if (opts.now || this.client.status !== 'ready') {
      this.client.disconnect();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([this.client.quit(), new Promise((resolve) => (timer = setTimeout(resolve, QUIT_WAIT_MS)))]);
    } catch {
      // dropped below
    } finally {
      clearTimeout(timer);
      this.client.disconnect();
    }
  }

  private connect(): Client {
    const o = this.o;
    const tls = o.tls ? {} : undefined;
    if (o.cluster) {
      // No auto-pipelining on a Cluster: ioredis groups an auto-pipeline by the
      // first argument, which for EVALSHA is the key count, not a key.
      return new Cluster(o.nodes, {
        enableAutoPipelining: false,
        // A node that restarts is waited for about as long as a standalone server (ioredis's 20
        // reconnect attempts, about 12 s): every retry of a call spends one redirection. With
        // ioredis's defaults (16, and MOVED retried at once) a call gave up within a second of a
        // node going down, often with "Too many Cluster redirections … MOVED".
        maxRedirections: 120,
        retryDelayOnMoved: 50,
        slotsRefreshTimeout: FIRST_SLOTS_LOAD_MS,
        redisOptions: { username: o.username, password: o.password, tls, connectTimeout: CONNECT_TIMEOUT_MS, commandTimeout: COMMAND_TIMEOUT_MS, disconnectTimeout: DISCONNECT_WAIT_MS },
        clusterRetryStrategy: (times) => this.retryDelay(Math.min(100 + times * 100, 2000)),
      });
    }
    const node = o.nodes[0]!;
    return new Redis({
      username: o.username,
      password: o.password,
      tls,
      host: node.host,
      port: node.port,
      db: o.db,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      disconnectTimeout: DISCONNECT_WAIT_MS,
      // Commands issued in the same tick go out as one pipeline: bulk submits and claims cost
      // one round trip, not one each.
      enableAutoPipelining: true,
      autoPipeliningIgnoredCommands: this.unpipelined,
      lazyConnect: false,
      retryStrategy: (times) => this.retryDelay(Math.min(50 + times * 50, 1000)),
    });
  }

  /** The delay before the next attempt, or null to stop (see the phases above). */
  private retryDelay(delay: number): number | null {
    if (this.closing || this.fatal) return null;
    if (!this.everReady && Date.now() - this.attemptsSince >= FIRST_CONNECT_MS) return null;
    return delay;
  }

  private noteError(e: Error): void {
    // A Cluster reports its nodes' failures wrapped ("Failed to refresh slots cache"): the node's is the cause.
    const cause = (e as Error & { lastNodeError?: Error }).lastNodeError ?? e;
    this.lastError = cause;
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== undefined && UNTRUSTED_CERT.has(code)) {
      const otherHost = code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH';
      this.fatal = new ConfigError(
        `TLS: the certificate of Redis at ${this.where} ${otherHost ? 'does not name the host in the URL' : 'is not trusted here'}: ${cause.message} (${code})`,
        otherHost
          ? 'Connect by a host name (or IP address) the certificate names.'
          : 'If the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate (a PEM file) and connect by a host name the certificate names.',
      );
    } else if (/cluster support disabled/i.test(cause.message)) {
      // redis+cluster:// naming a standalone server: retrying cannot make it a Cluster.
      this.fatal = new ConfigError(
        `Redis at ${this.where} is not a Cluster node (${cause.message}): a standalone server is reached with redis://`,
        `Use ${this.o.tls ? 'rediss' : 'redis'}://${this.o.nodes[0]!.host}:${this.o.nodes[0]!.port} for it.`,
      );
    } else {
      this.fatal = deniedError(cause.message, this.where, this.o.cluster) ?? this.fatal;
    }
  }

  /**
   * Asks each seed node (a connection of its own, CLUSTER INFO and CLUSTER NODES, SEED_PROBE_MS
   * each) and the nodes they mark failing, and sets `clusterCause`: none of the seeds answered (and
   * why, per seed), or what is wrong with the Cluster: its state when not ok, and each node that
   * fails or does not answer, with why (`node 10.0.0.3:7000 refuses connections (connect
   * ECONNREFUSED …)`, `… does not answer within 1 s` for a stopped one).
   */
  private async probeCluster(): Promise<void> {
    const key = (h: string, p: number) => `${h}:${p}`;
    const seeds = [...new Map(this.o.nodes.map((n) => [key(n.host, n.port), n])).values()];
    const answers = await Promise.all(seeds.map((n) => this.askNode(n.host, n.port)));
    this.clusterDenied = null;
    const seedAnswers = new Map(seeds.map((n, i) => [key(n.host, n.port), answers[i]!]));
    const reached = answers.filter((a) => a.error === null);
    // A node that refuses the user (no CLUSTER INFO: ioredis's ready check is refused the same way,
    // and it reconnects without a word until it gives up): retrying cannot mend it.
    // (kept apart from `fatal`, which would stop the client's retries: a client ended that way mid
    // ready check is left closed, and the next call waited on it for ever)
    const denied = answers.map((a) => (a.raw === null ? null : deniedError(a.raw, this.where, true))).find((d) => d !== null);
    if (denied) {
      this.clusterDenied = denied;
      return;
    }
    if (reached.length === 0) {
      this.clusterCause = `none of its seed nodes could be reached (${[...seedAnswers].map(([at, a]) => `${at}: ${a.raw}`).join('; ')})`;
      return;
    }
    // The nodes at fault: seeds that did not answer, and nodes a seed that answered marks failing.
    const faulty = new Map<string, string | null>();
    for (const [at, a] of seedAnswers) if (a.error !== null) faulty.set(at, a.error);
    for (const a of reached) for (const at of a.failing) if (!faulty.has(at)) faulty.set(at, null);
    await Promise.all(
      [...faulty].filter(([, why]) => why === null).map(async ([at]) => {
        const i = at.lastIndexOf(':');
        const a = await this.askNode(at.slice(0, i), Number(at.slice(i + 1)));
        faulty.set(at, a.error ?? 'is marked failing by the other nodes');
      }),
    );
    const state = reached.find((a) => a.state !== null && a.state !== 'ok')?.state ?? reached[0]!.state;
    const nodes = [...faulty].map(([at, why]) => `node ${at} ${why}`);
    if (state !== null && state !== 'ok') this.clusterCause = `the Cluster is not ready (cluster_state:${state})${nodes.length > 0 ? `: ${nodes.join('; ')}` : ''}`;
    else if (nodes.length > 0) this.clusterCause = nodes.join('; ');
    else if (reached.some((a) => a.migrating.length > 0)) this.clusterCause = `${MIGRATING_CAUSE} (${[...new Set(reached.flatMap((a) => a.migrating))].join('; ')})`;
    else this.clusterCause = this.everReady ? null : `its nodes answer and report cluster_state:${state ?? 'unknown'}, but the client could not load the Cluster's slots${this.lastError ? ` (${this.lastError.message})` : ''}`;
  }

  /** One node's view: its cluster_state and the nodes it marks failing, or why it could not be asked. */
  private async askNode(host: string, port: number): Promise<{ error: string | null; raw: string | null; state: string | null; failing: string[]; migrating: string[] }> {
    const o = this.o;
    const probe = new Redis({
      host, port, username: o.username, password: o.password, tls: o.tls ? {} : undefined,
      connectTimeout: SEED_PROBE_MS, commandTimeout: SEED_PROBE_MS, disconnectTimeout: DISCONNECT_WAIT_MS, lazyConnect: true, enableReadyCheck: false,
      maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: true,
    });
    let lastError: Error | null = null;
    probe.on('error', (e: Error) => (lastError = e));
    try {
      await probe.connect();
      const info = String(await probe.call('CLUSTER', 'INFO'));
      // (CLUSTER NODES only names failing nodes: a user refused it still gets the Cluster's state)
      const nodes = await probe.call('CLUSTER', 'NODES').then(String, (e: unknown) => {
        if (e instanceof Error && /^NOPERM\b/.test(e.message)) return '';
        throw e;
      });
      const failing = nodes
        .split('\n')
        .map((line) => line.split(' '))
        .filter((f) => f.length > 2 && /(^|,)fail\??(,|$)/.test(f[2]!) && !f[2]!.includes('myself'))
        .map((f) => f[1]!.split('@')[0]!);
      // The slots this node is exporting to another or importing from one (`[slot->-id]`,
      // `[slot-<-id]` on its own line): a reshard in progress, or one stopped half way.
      const lines = nodes.split('\n').map((line) => line.split(' '));
      const addressOf = (id: string) => lines.find((f) => f[0] === id)?.[1]?.split('@')[0] ?? id;
      const migrating = (lines.find((f) => f[2]?.includes('myself'))?.slice(8) ?? []).flatMap((r) => {
        const m = /^\[(\d+)-([<>])-(\S+)\]$/.exec(r);
        if (!m) return [];
        const [me, other] = [`${host}:${port}`, addressOf(m[3]!)];
        return [`slot ${m[1]} from ${m[2] === '>' ? me : other} to ${m[2] === '>' ? other : me}`];
      });
      return { error: null, raw: null, state: /^cluster_state:(\S+)/m.exec(info)?.[1] ?? null, failing, migrating };
    } catch (e) {
      const err = (lastError ?? e) as NodeJS.ErrnoException;
      const timedOut = /timed out|ETIMEDOUT/i.test(err.message);
      const why = err.code === 'ECONNREFUSED' ? `refuses connections (${err.message})` : timedOut ? `does not answer within ${SEED_PROBE_MS / 1000} s` : err.message;
      return { error: why, raw: timedOut ? `no answer within ${SEED_PROBE_MS / 1000} s` : err.message, state: null, failing: [], migrating: [] };
    } finally {
      probe.disconnect();
    }
  }

  private unavailableHint(): string {
    if (this.o.cluster && !this.everReady) {
      return this.o.tls
        ? 'Check that the seed nodes are up and reachable there, that their ports speak TLS, and that their certificate is trusted (NODE_EXTRA_CA_CERTS for a private CA).'
        : 'Check that the seed nodes are up and reachable there (a Cluster node, not a standalone server; rediss+cluster:// if they expect TLS).';
    }
    const code = (this.lastError as NodeJS.ErrnoException | null)?.code;
    if (!this.everReady && code === 'ECONNRESET' && !this.o.tls) {
      return 'Check that Redis is up and reachable there. The server hung up at once: if that port expects TLS, use rediss://.';
    }
    if (!this.everReady && code === 'ETIMEDOUT' && this.o.tls) {
      return 'Check that Redis is up and reachable there. With rediss://, a port that does not speak TLS never completes the handshake: check the scheme and the port.';
    }
    return 'Check that Redis is up and reachable there, then retry.';
  }
}

/**
 * ioredis prints its own lines with console.warn, raw on stderr between agentq's lines. When the
 * URL gives a password the server does not need (`[WARN] This Redis server's \`default\` user does
 * not require a password, but a password was supplied`), that line is replaced by one in agentq's
 * words and format, once per process. When the user may not run INFO (an ACL user with `+@read`),
 * ioredis skips its ready check and says so, with advice about its own options the user cannot
 * act on: that line is dropped (a command agentq needs and is refused is reported as such, exit 4).
 * Anything else written with console.warn passes through.
 */
const IOREDIS_PASSWORD_WARNING = /^\[WARN\] (?:This Redis server's `default` user|Redis server) does not require a password/;
const IOREDIS_READY_CHECK_SKIPPED = /^Skipping the ready check because INFO command fails/;
let passwordWarningWhere: string | null = null;
let passwordWarned = false;

function routeIoredisWarnings(where: string): void {
  if (passwordWarningWhere !== null) return;
  passwordWarningWhere = where;
  const original = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && IOREDIS_READY_CHECK_SKIPPED.test(args[0])) return;
    if (typeof args[0] !== 'string' || !IOREDIS_PASSWORD_WARNING.test(args[0])) return original(...args);
    if (passwordWarned) return;
    passwordWarned = true;
    process.stderr.write(
      `warning: Redis at ${passwordWarningWhere} does not require a password, but the URL gives one: it is ignored ` +
        '(remove it from the URL, or set one on the server: requirepass, or an ACL user)\n',
    );
  };
}

/**
 * A write Redis refused for the state it is in (exit 75: retrying later can succeed). A script is
 * refused before its first write (Redis checks OOM only until a script has written), so nothing
 * of the call was applied.
 */
function refusedWrite(msg: string, where: string): RetryLaterError | null {
  if (/^OOM\b/.test(msg)) {
    return new RetryLaterError(
      `Redis at ${where} is full and refused the write (maxmemory reached): ${msg}`,
      'BACKEND_FULL',
      'Nothing was written. Raise maxmemory first (until Redis is under it, every agentq write is refused, purges included; reads still work), then make room: `agentq prune --older-than D` deletes finished jobs, and DLQ entries that will not be redriven can be purged.',
    );
  }
  if (/^(READONLY|MISCONF|BUSY|MASTERDOWN|NOREPLICAS)\b/.test(msg)) {
    return new RetryLaterError(`Redis at ${where} refused the call for now: ${msg}`, 'BACKEND_UNAVAILABLE', 'Nothing was written. Retry once Redis is writable again.');
  }
  return null;
}

/** Refused credentials (exit 4) or a command the ACL user may not run; null for anything else. */
function deniedError(msg: string, where: string, cluster = false): PermissionError | null {
  if (/^(NOAUTH|WRONGPASS)\b/.test(msg)) {
    return new PermissionError(
      `Redis at ${where} refused the credentials: ${msg}`,
      "Put the user and password in the URL before the host, as user:password@ (or :password@ for Redis's default user).",
    );
  }
  // (a command refused inside a script: Redis 7.0 answers with a plain ERR, later versions with NOPERM)
  if (/^NOPERM\b|^ERR The user executing the script can't run this command/.test(msg)) {
    return new PermissionError(
      `Redis at ${where} refused a command agentq needs: ${msg}`,
      "The ACL user needs agentq's keys (~{aq:* and ~aq:*, with the URL's prefix for aq) and the commands on them, scripts (EVALSHA, EVAL) included" +
        (cluster ? ', and on a Cluster CLUSTER SLOTS and CLUSTER INFO (how the client finds and checks the nodes).' : '.'),
    );
  }
  return null;
}

/**
 * What a server's `INFO memory` says about the setting agentq needs most (README, "Production
 * settings"): an evicting `maxmemory-policy` drops jobs, leases and ledgers without a word. (AOF
 * is not checked: managed services without it keep data by replication instead, and a warning
 * nobody can act on teaches people to skip warnings.)
 */
export function settingWarnings(where: string, info: string): string[] {
  const policy = /^maxmemory_policy:(.*)$/m.exec(info)?.[1]?.trim();
  if (policy === undefined || policy === 'noeviction') return [];
  return [
    `Redis at ${where} has maxmemory-policy ${policy}: when it fills up it will delete jobs, leases and ledgers without a word. agentq expects noeviction (CONFIG SET maxmemory-policy noeviction).`,
  ];
}
