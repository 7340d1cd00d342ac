/**
 * The SQLite store file the app opened, watched for being removed or replaced.
 *
 * The SQLite backend refuses a write into a file that was removed or replaced
 * (backend/sqlite/store-file.ts, the one implementation of the check); the app
 * checks the same way before each load, entry read and redrive step, so that
 * a reload says so too and in the app's words (quit and start again).
 */
import type { Backend } from '../backend/contract.js';
import { StoreFile as WatchedFile } from '../backend/sqlite/store-file.js';
import type { RedrivePort } from './redrive-port.js';
import type { TriageSource } from './source.js';

export interface StoreFile {
  /** Throws a StoreFileReplacedError (exit 78) when the path no longer names the file that was opened. */
  check(): void;
}

/**
 * The watch for `backend`'s file, taken now (just after the backend opened it), or null when
 * there is no file to watch (another backend, an in-memory store, a path that cannot be read).
 */
export function watchStoreFile(backend: Pick<Backend, 'kind' | 'description'>, command = 'agentq dlq browse'): StoreFile | null {
  if (backend.kind !== 'sqlite') return null;
  const file = WatchedFile.watch(backend.description.slice('sqlite:'.length));
  if (file === null) return null;
  return {
    check: () =>
      file.check(
        command,
        'the list shows the old file, and a redrive would change only that file',
        `Quit (q) and start ${command} again to read the store now at that path.`,
      ),
  };
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
