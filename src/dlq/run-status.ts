/**
 * The status `dlq runs` shows for a run. A run's record says `running` from
 * the moment its apply starts until it ends; a process killed with `kill -9`
 * (or a lost machine) never gets to write `interrupted`, so the record alone
 * would say `running` for ever. The queue's lock tells the truth: a running
 * run holds it, and the lock names the run and its process. A `running` run
 * whose lock is gone, held by another run, or held by a dead process on this
 * host is shown as `interrupted` (what it is: resumable with `--resume`). A
 * holder on another host cannot be checked from here and is left `running`.
 */
import type { Backend, LockHolder, RunRecord } from '../backend/contract.js';
import { holderLiveness, probeProcess, type Identity, type ProcessProbe } from './lock.js';

/** `incomplete`: a run left `creating` by a process that is gone (its ledger may lack items; it moved nothing). */
export type RunStatus = RunRecord['status'] | 'incomplete';

/** Pure: the status to show, given the run's record and its queue's lock as read after it. */
export function observedStatus(run: Pick<RunRecord, 'run_id' | 'status'>, lock: LockHolder | null, me: Identity, probe: ProcessProbe): RunStatus {
  if (run.status === 'creating') {
    const creatorAlive = lock !== null && lock.run_id === run.run_id && holderLiveness(lock, me, probe) !== 'dead';
    return creatorAlive ? 'creating' : 'incomplete';
  }
  if (run.status !== 'running') return run.status;
  if (lock === null || lock.run_id !== run.run_id) return 'interrupted';
  return holderLiveness(lock, me, probe) === 'dead' ? 'interrupted' : 'running';
}

/**
 * Each run as shown: the lock of every queue with a `running` run is read
 * once. A run that finished between reading it and reading its lock (its lock
 * released just after its final status was written) is read again, so it is
 * shown finished rather than interrupted.
 */
export async function withObservedStatus(
  backend: Pick<Backend, 'readLock' | 'getRun'>,
  runs: RunRecord[],
  me: Identity,
  probe: ProcessProbe = probeProcess,
): Promise<RunRecord[]> {
  const locks = new Map<string, LockHolder | null>();
  const out: RunRecord[] = [];
  for (const run of runs) {
    if (run.status !== 'running' && run.status !== 'creating') {
      out.push(run);
      continue;
    }
    if (!locks.has(run.queue)) locks.set(run.queue, await backend.readLock(run.queue));
    if (observedStatus(run, locks.get(run.queue)!, me, probe) === 'running') {
      out.push(run);
      continue;
    }
    const again = (await backend.getRun(run.run_id)) ?? run;
    out.push({ ...again, status: observedStatus(again, locks.get(run.queue)!, me, probe) as RunRecord['status'] });
  }
  return out;
}
