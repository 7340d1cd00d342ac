import { createHash } from 'node:crypto';
import { ValidationError } from './errors.js';
import { INLINE_INPUT_MAX_BYTES, SubmitRequest, type NormalizedSubmit } from './schemas.js';
import { formatZodError } from './validate.js';

/**
 * Validates and fills defaults. Pure apart from hashing. Enforces the rules a
 * schema cannot express: the inline input cap, and that a reference comes
 * with its checksum.
 */
export function normalizeSubmit(raw: unknown, now: number): NormalizedSubmit {
  const parsed = SubmitRequest.safeParse(raw);
  if (!parsed.success) throw new ValidationError(formatZodError(parsed.error, 'submit request'));
  return checkSubmit(parsed.data, now);
}

/**
 * The rules across fields, for a request the schema has already parsed (its output, which this
 * normalises in place): what `normalizeSubmit` checks after the schema. For a caller that runs the
 * schema itself for its own messages (`submit --file`), so a request is not parsed twice.
 */
export function checkSubmit(req: NormalizedSubmit, now: number): NormalizedSubmit {
  if (req.input !== null) {
    const bytes = Buffer.byteLength(req.input, 'utf8');
    if (bytes > INLINE_INPUT_MAX_BYTES) {
      throw new ValidationError(
        `inline input is ${bytes} bytes; the limit is ${INLINE_INPUT_MAX_BYTES} bytes (64 KiB)`,
        'Store the document elsewhere and pass a reference: --input-ref s3://bucket/key --input-sha256 <hex>, or --input-file PATH.',
        'INPUT_TOO_LARGE',
      );
    }
    if (req.input_ref !== null) {
      throw new ValidationError('give either inline input or input_ref, not both');
    }
  }
  if (req.input_ref !== null && req.input_sha256 === null) {
    throw new ValidationError('input_ref needs input_sha256: a reference must carry the checksum of what it points to');
  }
  if (req.input_sha256 !== null && req.input_ref === null) {
    throw new ValidationError('input_sha256 is only meaningful with input_ref');
  }
  if (req.deadline_at !== null && Date.parse(req.deadline_at) <= now) {
    throw new ValidationError(`deadline_at ${req.deadline_at} is not in the future`);
  }
  if (req.deadline_at !== null && req.run_at !== null && Date.parse(req.run_at) >= Date.parse(req.deadline_at)) {
    // it would wait until its deadline had passed, then expire without ever running
    throw new ValidationError(`run_at ${req.run_at} is not before deadline_at ${req.deadline_at}: the job could never run`);
  }
  // Normalise times to UTC ISO so the fingerprint does not depend on how the zone was written.
  if (req.deadline_at !== null) req.deadline_at = new Date(req.deadline_at).toISOString();
  if (req.run_at !== null) req.run_at = new Date(req.run_at).toISOString();
  return req;
}

/**
 * Fingerprint of the request body for idempotency: the same key with a
 * different fingerprint is refused. Keys are sorted so field order does not matter.
 * The times (`deadline_at`, `run_at`) are left out: a retry computes them again
 * from its own "now" (`--deadline 2h`, `Date.now() + …`), so they differ between
 * two tries of the same request; the existing job keeps the times it was given.
 */
export function requestFingerprint(req: NormalizedSubmit): string {
  // (as null, not left out: a request without times hashes as it always did, so keys stored before
  // this rule still match)
  return createHash('sha256').update(stableStringify({ ...req, deadline_at: null, run_at: null })).digest('hex');
}

/**
 * Whether a stored fingerprint is this request's: the current one, or the one stored before the
 * times were left out (times and all), so a key stored by an earlier agentq keeps working.
 */
export function sameRequest(stored: string, req: NormalizedSubmit, fingerprint = requestFingerprint(req)): boolean {
  return stored === fingerprint || stored === createHash('sha256').update(stableStringify(req)).digest('hex');
}

export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
    .join(',')}}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
