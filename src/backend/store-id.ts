/**
 * The store a redrive plan names, and whether a plan's store is the one a command points at.
 *
 * A backend that keeps an identity in the store itself (`Backend.storeIdentity`: Redis) is named
 * by it, so the same Redis is the same store however it is reached (another seed list of the same
 * Cluster, `localhost` for `127.0.0.1`). The recorded text is `<storeId>#store=<identity>`: the
 * URL-derived part keeps messages readable, the identity decides. A plan recorded without an
 * identity (SQLite, SQS, or a Redis plan made before identities existed) is compared by `storeId`,
 * as it was made: an older plan still applies through the URL it was made with.
 */
import { statSync } from 'node:fs';
import type { Backend } from './contract.js';

const MARK = '#store=';

/** What a plan made now records for the store. */
export async function planStoreId(backend: Backend): Promise<string> {
  const identity = (await backend.storeIdentity?.()) ?? null;
  return identity === null ? backend.storeId : `${backend.storeId}${MARK}${identity}`;
}

/** Whether `recorded` (a plan's `store`) names the store `backend` points at. */
export async function isSameStore(backend: Backend, recorded: string): Promise<boolean> {
  const i = recorded.lastIndexOf(MARK);
  if (i < 0) return recorded === backend.storeId || sameSqliteFile(recorded, backend.storeId);
  return recorded.slice(i + MARK.length) === ((await backend.storeIdentity?.()) ?? null);
}

/**
 * Two `sqlite:` store ids naming one file by different paths (a symlinked directory, a bind mount:
 * the path a plan recorded is how it was reached then). Compared by device and inode, so a copy of
 * the file (a restored backup) is still another store. False when either cannot be checked.
 */
function sameSqliteFile(a: string, b: string): boolean {
  const prefix = 'sqlite:';
  if (!a.startsWith(prefix) || !b.startsWith(prefix) || a === `${prefix}:memory:` || b === `${prefix}:memory:`) return false;
  try {
    const x = statSync(a.slice(prefix.length));
    const y = statSync(b.slice(prefix.length));
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
