/**
 * The SQLite store file a process opened, watched for being removed or replaced.
 *
 * An open SQLite connection keeps reading and writing the file it opened even
 * after that file is deleted, or after another file is moved to its path (a
 * backup restored with `mv`, a store reset with `rm`). A long-running process
 * (a worker, `metrics serve`, `tail --follow`, the TUI) then went on in a file
 * no other process can see: a worker claimed and completed jobs there and
 * their results were lost with it. So the path is compared, by device and
 * inode, with the file that was opened, and a mismatch is refused with
 * `StoreFileReplacedError` (exit 78): nothing mends it but opening the store
 * again, so a worker stops instead of polling on.
 *
 * Cost: a stat is about 3-4 µs, a write transaction (BEGIN IMMEDIATE ... COMMIT)
 * 25 µs at the least and one per group commit, so every write transaction is
 * checked (a write to the old file after the swap is exactly what loses
 * results); reads, far more frequent and harmless one at a time, at most once
 * a second (`checkSometimes`).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentqError, ExitCode } from '../../core/errors.js';

/** How often reads look at the path (writes always do). */
export const READ_CHECK_MS = 1_000;

export interface FileIdentity {
  dev: number;
  ino: number;
}

/** The device and inode `path` names now, or null when it names nothing (or cannot be read). */
export function fileIdentity(path: string): FileIdentity | null {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return null;
  }
}

/** The store's path no longer names the file this process opened. Exit 78: start the process again. */
export class StoreFileReplacedError extends AgentqError {
  constructor(message: string, hint?: string) {
    super('STORE_REPLACED', message, ExitCode.config, hint);
  }
}

/** The SQLite store's path no longer names the file the process opened (`StoreFileReplacedError`, exit 78). */
export function isStoreReplaced(error: unknown): error is AgentqError {
  return error instanceof AgentqError && error.code === 'STORE_REPLACED';
}

export class StoreFile {
  private readonly opened: FileIdentity;
  private checkedAt = -Infinity;

  /**
   * The watch of `path`, taken now (just after it was opened), or null when there is no file to
   * watch (an in-memory store, a path that cannot be read).
   */
  static watch(path: string): StoreFile | null {
    if (path === ':memory:' || path === '') return null;
    const opened = fileIdentity(path);
    return opened === null ? null : new StoreFile(resolve(path), opened);
  }

  private constructor(
    readonly path: string,
    opened: FileIdentity,
  ) {
    this.opened = opened;
  }

  /** What became of the file since it was opened: null while the path still names it. */
  change(): 'removed' | 'replaced' | null {
    const now = fileIdentity(this.path);
    if (now === null) return 'removed';
    return now.dev === this.opened.dev && now.ino === this.opened.ino ? null : 'replaced';
  }

  /**
   * Throws `StoreFileReplacedError` when the path no longer names the opened file. `by` names the
   * process in the message; `consequence` says what going on would have done.
   */
  check(
    by = 'this process',
    consequence = 'its reads and writes would go to the old file, which no other process sees',
    hint = 'Start the command again to use the store now at that path.',
  ): void {
    this.checkedAt = monotonicMs();
    const change = this.change();
    if (change === null) return;
    const what = change === 'removed' ? 'was removed' : 'was replaced by another file';
    throw new StoreFileReplacedError(`the agentq store at ${this.path} ${what} since ${by} opened it: ${consequence}`, hint);
  }

  /** `check`, at most once per READ_CHECK_MS (by the process's monotonic clock, not the store's, which tests may freeze). */
  checkSometimes(): void {
    if (monotonicMs() - this.checkedAt < READ_CHECK_MS) return;
    this.check();
  }
}

function monotonicMs(): number {
  return performance.now();
}
