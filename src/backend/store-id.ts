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
  if (i < 0) return recorded === backend.storeId;
  return recorded.slice(i + MARK.length) === ((await backend.storeIdentity?.()) ?? null);
}
