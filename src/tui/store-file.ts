/**
 * The SQLite store file the app opened, watched for being removed or replaced.
 *
 * An open SQLite connection keeps reading and writing the file it opened even
 * after that file is deleted, or after another file is moved to its path (a
 * backup restored with `mv`, a store reset with `rm`). The app stays open for
 * hours: its reloads then showed the old file's entries as if they were the
 * store, and a redrive changed a file no other process can see any more (its
 * run reported finished, its audit gone with the process). Each load, entry
 * read and redrive step first checks that the path still names the file that
 * was opened, and says so when it does not.
 */
import { statSync, type Stats } from 'node:fs';
import type { Backend } from '../backend/contract.js';
import { ConfigError } from '../core/errors.js';
import type { RedrivePort } from './redrive-port.js';
import type { TriageSource } from './source.js';

export interface StoreFile {
  /** Throws a ConfigError when the path no longer names the file that was opened. */
  check(): void;
}

/**
 * The watch for `backend`'s file, taken now (just after the backend opened it), or null when
 * there is no file to watch (another backend, an in-memory store, a path that cannot be read).
 */
export function watchStoreFile(backend: Pick<Backend, 'kind' | 'description'>, command = 'agentq dlq browse'): StoreFile | null {
  if (backend.kind !== 'sqlite') return null;
  const path = backend.description.slice('sqlite:'.length);
  if (path === ':memory:') return null;
  const opened = identity(path);
  if (opened === null) return null;
  return {
    check() {
      const now = identity(path);
      if (now !== null && now.dev === opened.dev && now.ino === opened.ino) return;
      const what = now === null ? 'was removed' : 'was replaced by another file';
      throw new ConfigError(
        `the agentq store at ${path} ${what} since ${command} opened it: the list shows the old file, and a redrive would change only that file`,
        `Quit (q) and start ${command} again to read the store now at that path.`,
      );
    },
  };
}

function identity(path: string): Pick<Stats, 'dev' | 'ino'> | null {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return null;
  }
}

/** `source`, checking the file before each load and each read of an entry. */
export function watchedSource(source: TriageSource, file: StoreFile | null): TriageSource {
  if (file === null) return source;
  return {
    ...source,
    async *pages(signal) {
      file.check();
      yield* source.pages(signal);
    },
    async get(jobId) {
      file.check();
      return source.get(jobId);
    },
  };
}

/** `port`, checking the file before a plan is built and before it is applied. */
export function watchedRedrive(port: RedrivePort, file: StoreFile | null): RedrivePort {
  if (file === null) return port;
  return {
    async plan(jobIds, signal, context) {
      file.check();
      return port.plan(jobIds, signal, context);
    },
    async apply(planned, onProgress, signal, reason) {
      file.check();
      return port.apply(planned, onProgress, signal, reason);
    },
  };
}
