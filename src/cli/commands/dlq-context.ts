/**
 * Builds the dlq commands' `DlqIo` from the CLI's `CommandContext`: the one
 * place where the dlq commands meet the process (pid, host, user, files,
 * timers).
 */
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname, userInfo } from 'node:os';
import { randomBytes } from 'node:crypto';
import { systemRandom } from '../../core/clock.js';
import { createIdFactory, RUN_ID_PREFIX } from '../../core/ids.js';
import { ValidationError } from '../../core/errors.js';
import { chromeFor } from '../output/charset.js';
import { streamDrained, type CommandContext } from '../context.js';
import type { DlqIo } from './dlq-io.js';
import { processStartTime } from '../../dlq/lock.js';
import { abortableSleep } from '../../util/sleep.js';

function osUser(env: Readonly<Record<string, string | undefined>>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.LOGNAME ?? 'unknown';
  }
}

/**
 * No dlq command creates a missing SQLite store, not even a bulk action that applies: a store that
 * does not exist has an empty DLQ, so a mistyped path could only answer "nothing to redrive", exit 0
 * (and leave an empty database behind) while the real DLQ waits. It exits 78 naming the path instead.
 */
export function dlqIoFrom(ctx: CommandContext): DlqIo {
  const stdout = ctx.io.stdout as NodeJS.WritableStream & { isTTY?: boolean; writableNeedDrain?: boolean };
  const newId = createIdFactory(ctx.clock, systemRandom);
  return {
    backend: () => ctx.openBackend(),
    clock: ctx.clock,
    out: {
      ...ctx.out,
      isTTY: ctx.io.stdout.isTTY === true,
      drain: () => streamDrained(ctx.io.stdout),
      async writeBytes(b: Uint8Array) {
        stdout.write(b as unknown as string);
        await streamDrained(ctx.io.stdout);
      },
    },
    formatChosen: ctx.globals.output !== undefined || ctx.globals.json === true,
    err: { write: (s) => void ctx.io.stderr.write(chromeFor(ctx.charset, s)), isTTY: ctx.io.stderr.isTTY === true },
    interactive: ctx.isInteractive,
    prompt: (q) => ctx.prompt(q),
    signal: ctx.signal,
    sleep: abortableSleep,
    newRunId: () => newId(RUN_ID_PREFIX),
    identity: { user: osUser(ctx.env), host: hostname(), pid: process.pid, pidStart: processStartTime(process.pid), context: contextName(ctx) },
    assertMutable: (what) => ctx.assertMutable(what),
    interruptNote: (note) => ctx.interruptNote(note),
    contextName: contextName(ctx),
    traceUrlTemplate: () => ctx.config().traceUrl ?? null,
    readFile: async (path) => {
      if (path === '-') return readStdin(ctx);
      try {
        return await readFile(path, 'utf8');
      } catch (e) {
        throw new ValidationError(`cannot read ${path}: ${(e as Error).message}`);
      }
    },
    writeFile: async (path, text) => {
      // Write aside, flush, then rename: a reviewer never finds half a plan (nor, after a crash,
      // an empty one), and a write that fails leaves no temporary file beside the target.
      const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        const fh = await open(tmp, 'w', 0o644);
        try {
          await fh.writeFile(text);
          await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(tmp, path);
      } catch (e) {
        await unlink(tmp).catch(() => undefined);
        throw new ValidationError(`cannot write ${path}: ${(e as Error).message}`);
      }
    },
  };
}

/** `--plan -`: the plan piped in (`… --plan - < plan.json`); a terminal is refused, not waited on. */
function readStdin(ctx: CommandContext): Promise<string> {
  const stdin = ctx.io.stdin;
  if (stdin.isTTY === true) {
    return Promise.reject(new ValidationError('--plan - reads the plan from stdin, which is a terminal', 'Pipe the plan in: agentq dlq redrive --plan - --yes < plan.json, or give its file name.'));
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stdin.on('data', (b: Buffer | string) => chunks.push(typeof b === 'string' ? Buffer.from(b) : b));
    stdin.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stdin.once('error', (e: Error) => reject(new ValidationError(`cannot read the plan from stdin: ${e.message}`)));
    stdin.resume?.();
  });
}

function contextName(ctx: CommandContext): string | null {
  try {
    return ctx.config().context?.name ?? null;
  } catch {
    return null;
  }
}
