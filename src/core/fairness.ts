/**
 * Fair claiming, the pure part: which class, then which tenant, gets the next
 * job. The backend persists `FairnessState` per queue and feeds in what is
 * claimable right now; this module only decides.
 *
 * - Across classes: smooth weighted round robin (interactive 6, batch 3,
 *   maintenance 1 by default). Every class with claimable work gets its
 *   share over each cycle of `sum(weights)` picks, so batch never starves
 *   behind a stream of interactive jobs.
 * - Within a class: deficit round robin across tenants, with the cost of a
 *   job counted as one unit and a tenant's quantum its weight (default 1).
 *   A tenant with 10,000 queued jobs gets one turn per round like a tenant
 *   with 10, so the small tenant is not held back.
 * - Per-tenant concurrency caps are applied by the caller, which drops a
 *   tenant at its cap from the candidates before asking.
 */
import { JOB_CLASSES } from './model.js';
import type { JobClass } from './schemas.js';

export const DEFAULT_CLASS_WEIGHTS: Readonly<Record<JobClass, number>> = { interactive: 6, batch: 3, maintenance: 1 };

export interface FairnessOptions {
  /** Relative share of each class; missing classes keep their default weight. */
  classWeights?: Partial<Record<JobClass, number>>;
  /** Relative share (jobs per round) of a tenant within its class; default 1. */
  tenantWeights?: Record<string, number>;
  /** Jobs one tenant may have running at once in a queue; unlimited when absent. */
  tenantConcurrency?: number;
  /** Per-tenant overrides of `tenantConcurrency`. */
  tenantConcurrencyOverrides?: Record<string, number>;
}

export interface TenantTurn {
  /** The tenant currently being served in this class. */
  tenant: string;
  /** Jobs it may still take in its current turn. */
  deficit: number;
}

export interface FairnessState {
  /** Smooth weighted round robin credit per class. */
  classCredit: Record<JobClass, number>;
  /** Per class: whose turn it is. Null before the first pick. */
  turn: Record<JobClass, TenantTurn | null>;
}

/** Claimable work right now: per class, the tenants (any order) with a job ready. */
export type Candidates = Partial<Record<JobClass, readonly string[]>>;

export interface Pick {
  class: JobClass;
  tenant: string;
}

export function initialFairnessState(): FairnessState {
  return {
    classCredit: { interactive: 0, batch: 0, maintenance: 0 },
    turn: { interactive: null, batch: null, maintenance: null },
  };
}

/** Reads a persisted state, tolerating an old or damaged document (fairness is best effort, never fatal). */
export function parseFairnessState(text: string | null | undefined): FairnessState {
  const s = initialFairnessState();
  if (!text) return s;
  try {
    const o = JSON.parse(text) as Partial<FairnessState>;
    for (const c of JOB_CLASSES) {
      const credit = o.classCredit?.[c];
      if (typeof credit === 'number' && Number.isFinite(credit)) s.classCredit[c] = credit;
      const t = o.turn?.[c];
      if (t && typeof t.tenant === 'string' && typeof t.deficit === 'number') s.turn[c] = { tenant: t.tenant, deficit: t.deficit };
    }
  } catch {
    // start over
  }
  return s;
}

export function classWeight(c: JobClass, opts: FairnessOptions = {}): number {
  const w = opts.classWeights?.[c] ?? DEFAULT_CLASS_WEIGHTS[c];
  return w > 0 ? w : 0;
}

function tenantWeight(t: string, opts: FairnessOptions): number {
  const w = opts.tenantWeights?.[t] ?? 1;
  return w >= 1 ? Math.floor(w) : 1;
}

/** The concurrency cap of a tenant, or Infinity. */
export function tenantCap(tenant: string, opts: FairnessOptions = {}): number {
  return opts.tenantConcurrencyOverrides?.[tenant] ?? opts.tenantConcurrency ?? Infinity;
}

/**
 * Chooses the next (class, tenant) among the candidates and returns the state
 * to persist if that pick is used. The input state is not modified, so a
 * caller whose pick turns out to have nothing ready can drop the candidate
 * and ask again from the same state.
 */
export function nextPick(state: FairnessState, candidates: Candidates, opts: FairnessOptions = {}): { pick: Pick; state: FairnessState } | null {
  const active = JOB_CLASSES.filter((c) => (candidates[c]?.length ?? 0) > 0 && classWeight(c, opts) > 0);
  if (active.length === 0) return null;
  const next: FairnessState = { classCredit: { ...state.classCredit }, turn: { ...state.turn } };

  // Smooth weighted round robin (as in nginx): every active class earns its
  // weight, the richest is served and pays the total. Idle classes neither
  // earn nor pay, so returning work does not get a burst of saved-up credit.
  let total = 0;
  let best: JobClass = active[0]!;
  for (const c of active) {
    const w = classWeight(c, opts);
    total += w;
    next.classCredit[c] += w;
    if (next.classCredit[c] > next.classCredit[best]) best = c;
  }
  next.classCredit[best] -= total;
  // Keep idle classes from carrying a stale debt or credit forever.
  for (const c of JOB_CLASSES) if (!active.includes(c)) next.classCredit[c] = 0;

  const tenants = candidates[best]!;
  const turn = state.turn[best];
  let tenant: string;
  let deficit: number;
  if (turn && turn.deficit >= 1 && tenants.includes(turn.tenant)) {
    tenant = turn.tenant;
    deficit = turn.deficit;
  } else {
    // The next tenant after the current one in name order, wrapping around: one
    // linear pass (no sort), as a queue may have thousands of tenants waiting.
    let first = tenants[0]!;
    let after: string | undefined;
    for (const t of tenants) {
      if (t < first) first = t;
      if (turn && t > turn.tenant && (after === undefined || t < after)) after = t;
    }
    tenant = after ?? first;
    deficit = tenantWeight(tenant, opts);
  }
  next.turn[best] = { tenant, deficit: deficit - 1 };
  return { pick: { class: best, tenant }, state: next };
}
