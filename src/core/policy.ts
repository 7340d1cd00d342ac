/**
 * A store's scheduling policy as a user gives it: `fairness` (per-tenant
 * concurrency caps, class and tenant weights; claims honour them, so they
 * matter to workers) and `admission` (backlog limits in seconds of work;
 * submits honour them). The same shapes come from a config file's context
 * (cli/config.ts) and from the library's options (index.ts), and are checked
 * here for both, by hand and in full, so a typo fails naming the rule instead
 * of silently meaning "no cap".
 */
import type { AdmissionLimits } from './admission.js';
import type { FairnessOptions } from './fairness.js';
import { JOB_CLASSES, NAME_RE, NAME_RULE } from './model.js';
import { ValidationError } from './errors.js';
import type { JobClass } from './schemas.js';

/** What a command's backend is opened with from the context (OpenOptions' policy half). */
export interface BackendPolicy {
  fairness?: FairnessOptions;
  admission?: AdmissionLimits;
}

export const FAIRNESS_KEYS = ['tenantConcurrency', 'tenantConcurrencyOverrides', 'classWeights', 'tenantWeights'] as const;
export const ADMISSION_KEYS = ['interactiveMaxBacklogSeconds', 'batchMaxBacklogSeconds', 'maintenanceMaxBacklogSeconds', 'tenantMaxBacklogSeconds'] as const;

/** The rule a bad value broke, as a sentence fragment; the caller adds the file and context. */
export class PolicyRuleError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Own members only (a parsed `"__proto__"` key is an own member, and is then refused as a name). */
function entries(o: Record<string, unknown>): Array<[string, unknown]> {
  return Object.keys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)!.value as unknown]);
}

/** A refused value as the user wrote it, near enough: JSON.stringify shows Infinity (`1e400` in a file) as "null". */
function shown(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v) && !Number.isNaN(v)) return 'a number too large to hold (it reads as Infinity)';
  return String(JSON.stringify(v));
}

function positiveInteger(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new PolicyRuleError(`${what} must be a whole number of at least 1, got ${shown(v)}`);
  return v;
}

function positiveNumber(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new PolicyRuleError(`${what} must be a number greater than 0, got ${shown(v)}`);
  return v;
}

/** tenant → value, every tenant name checked as submit checks it (a misspelt name would cap nobody). */
function perTenant(v: unknown, what: string, check: (v: unknown, what: string) => number): Record<string, number> {
  if (!isObject(v)) throw new PolicyRuleError(`${what} must be an object of tenant → number`);
  // A null-prototype record: tenant names are data, looked up with `?.[tenant]`.
  const out: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [tenant, n] of entries(v)) {
    if (!NAME_RE.test(tenant)) throw new PolicyRuleError(`${what}: tenant ${JSON.stringify(tenant)} ${NAME_RULE}`);
    out[tenant] = check(n, `${what}.${tenant}`);
  }
  return out;
}

export function parseFairness(v: unknown): FairnessOptions {
  if (!isObject(v)) throw new PolicyRuleError(`fairness must be an object with ${FAIRNESS_KEYS.join(', ')}`);
  const out: FairnessOptions = {};
  for (const [k, value] of entries(v)) {
    switch (k) {
      case 'tenantConcurrency':
        out.tenantConcurrency = positiveInteger(value, 'fairness.tenantConcurrency');
        break;
      case 'tenantConcurrencyOverrides':
        out.tenantConcurrencyOverrides = perTenant(value, 'fairness.tenantConcurrencyOverrides', positiveInteger);
        break;
      case 'tenantWeights':
        // Jobs per turn within the class: whole (core/fairness floors it).
        out.tenantWeights = perTenant(value, 'fairness.tenantWeights', positiveInteger);
        break;
      case 'classWeights': {
        if (!isObject(value)) throw new PolicyRuleError(`fairness.classWeights must be an object of class (${JOB_CLASSES.join(', ')}) → weight`);
        const weights: Partial<Record<JobClass, number>> = {};
        for (const [c, w] of entries(value)) {
          if (!(JOB_CLASSES as readonly string[]).includes(c)) throw new PolicyRuleError(`fairness.classWeights: unknown class ${JSON.stringify(c)} (known: ${JOB_CLASSES.join(', ')})`);
          weights[c as JobClass] = positiveNumber(w, `fairness.classWeights.${c}`);
        }
        out.classWeights = weights;
        break;
      }
      default:
        throw new PolicyRuleError(`fairness: unknown key ${JSON.stringify(k)} (known: ${FAIRNESS_KEYS.join(', ')})`);
    }
  }
  return out;
}

export function parseAdmission(v: unknown): AdmissionLimits {
  if (!isObject(v)) throw new PolicyRuleError(`admission must be an object with ${ADMISSION_KEYS.join(', ')}`);
  const out: AdmissionLimits = {};
  for (const [k, value] of entries(v)) {
    if (!(ADMISSION_KEYS as readonly string[]).includes(k)) throw new PolicyRuleError(`admission: unknown key ${JSON.stringify(k)} (known: ${ADMISSION_KEYS.join(', ')})`);
    out[k as (typeof ADMISSION_KEYS)[number]] = positiveNumber(value, `admission.${k}`);
  }
  return out;
}

/**
 * The fairness a worker runs with: the context's, with the worker's own flags on top
 * (a flag's per-tenant caps are added to the context's, a tenant named in both gets the flag's).
 */
export function mergeFairness(base: FairnessOptions | undefined, over: FairnessOptions | undefined): FairnessOptions | undefined {
  if (!over) return base;
  if (!base) return over;
  const merged: FairnessOptions = { ...base, ...over };
  if (base.tenantConcurrencyOverrides || over.tenantConcurrencyOverrides) {
    merged.tenantConcurrencyOverrides = Object.assign(Object.create(null) as Record<string, number>, base.tenantConcurrencyOverrides, over.tenantConcurrencyOverrides);
  }
  return merged;
}

/**
 * The library's `fairness` / `admission` options, checked by the same rules as a config file's
 * (a ValidationError naming the rule), in fresh objects the caller's later edits cannot change.
 */
export function checkedPolicy(o: BackendPolicy): BackendPolicy {
  try {
    return {
      ...(o.fairness !== undefined ? { fairness: parseFairness(o.fairness) } : {}),
      ...(o.admission !== undefined ? { admission: parseAdmission(o.admission) } : {}),
    };
  } catch (e) {
    if (e instanceof PolicyRuleError) throw new ValidationError(e.message);
    throw e;
  }
}

/** "2 (acme 4, beta 1)", "none (acme 4)", or null without caps: for `context show` and a worker's start line. */
export function describeTenantCaps(f: FairnessOptions | undefined): string | null {
  const overrides = Object.entries(f?.tenantConcurrencyOverrides ?? {});
  if (!f || (f.tenantConcurrency === undefined && overrides.length === 0)) return null;
  const each = overrides.map(([t, n]) => `${t} ${n}`).join(', ');
  return `${f.tenantConcurrency ?? 'none'}${each ? ` (${each})` : ''}`;
}

/** "batch 3600s, tenant 600s", or null without limits. */
export function describeAdmission(a: AdmissionLimits | undefined): string | null {
  const parts = ADMISSION_KEYS.filter((k) => a?.[k] !== undefined).map((k) => `${k.replace('MaxBacklogSeconds', '')} ${a![k]}s`);
  return parts.length ? parts.join(', ') : null;
}
