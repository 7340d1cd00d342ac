/**
 * The jobs of `agentq submit --file`: one JSON object a line (NDJSON), each with the fields of the
 * library's submit request (`SubmitRequest` in core/schemas.ts, the job envelope's names). Every
 * line is checked before anything is submitted, so a file with one bad line submits nothing: a
 * half-submitted file is harder to mend than a refused one.
 *
 * Memory stays bounded: the input is split into lines as it is read (never held whole), a line
 * over MAX_LINE_BYTES is skipped to its end rather than kept, and reading stops at MAX_JOBS jobs or
 * MAX_HELD_BYTES of job text, since every checked job is held until all lines have been checked.
 */
import { ValidationError } from '../core/errors.js';
import { INLINE_INPUT_MAX_BYTES } from '../core/model.js';
import { SubmitRequest as SubmitRequestSchema, type NormalizedSubmit, type SubmitRequest } from '../core/schemas.js';
import { checkSubmit, requestFingerprint } from '../core/submit.js';
import { sanitize } from './output/sanitize.js';

/** Jobs (non-blank lines) one file may hold. */
export const MAX_JOBS = 100_000;
/** One line: a 64 KiB input written with JSON escapes (`\u0001` is six bytes for one) fits with room to spare. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The text of all jobs together (they are held until every line is checked). */
export const MAX_HELD_BYTES = 128 * 1024 * 1024;
/** A deadline closer than this could pass before a worker claims the job (the same rule as `--deadline`). */
const MIN_DEADLINE_MS = 1000;

/** What the command-line flags give to lines that leave a field out. */
export type JobDefaults = Omit<SubmitRequest, 'workflow' | 'input' | 'input_ref' | 'input_sha256' | 'idempotency_key'>;

export interface JobLine {
  /** 1-based line number in the file (blank lines counted). */
  line: number;
  req: NormalizedSubmit;
}

export interface LineError {
  line: number;
  /** The rule the line broke; untrusted parts already sanitised. */
  message: string;
}

const FIELDS = Object.keys(SubmitRequestSchema.shape);

/**
 * One line's text → the request it asks for, the flags' defaults filled in where the line leaves a
 * field out (a field given as null is given: `"deadline_at": null` is "no deadline" even with
 * `--deadline`). Throws ValidationError naming the rule broken, in the wire's field names.
 */
export function parseJobLine(text: string, defaults: JobDefaults, now: number): NormalizedSubmit {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ValidationError(`not JSON: ${clip((e as Error).message)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(`must be a JSON object (one job's fields), not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`);
  }
  for (const k of Object.keys(value)) {
    if (!FIELDS.includes(k)) {
      const meant = meantField(k);
      throw new ValidationError(`unknown field ${quote(k)}${meant ? ` (did you mean ${meant}?)` : ''}; the fields are ${FIELDS.join(', ')}`);
    }
  }
  const obj = value as Record<string, unknown>;
  if (!('workflow' in obj)) throw new ValidationError('workflow is missing (every line names its workflow, as name:vN)');
  const merged: Record<string, unknown> = { ...defaults, ...obj };
  // (before the schema: its message for a 3 MB input would be about the type, not the size)
  if (typeof merged.input === 'string') {
    const bytes = Buffer.byteLength(merged.input, 'utf8');
    if (bytes > INLINE_INPUT_MAX_BYTES) {
      throw new ValidationError(`input is ${bytes} bytes; inline input is limited to ${INLINE_INPUT_MAX_BYTES} bytes (64 KiB): store the document elsewhere and give input_ref with input_sha256`);
    }
  }
  const parsed = SubmitRequestSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join('.');
    const bad = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | null)?.[k as PropertyKey], merged);
    throw new ValidationError(`${path}${typeof bad === 'string' ? ` ${quote(bad)}` : ''}: ${issue.message}`);
  }
  // The rules across fields (input or input_ref, a reference's checksum, deadline after run_at):
  // the library's own check, so a line means what the same request means to `backend.submit`
  // (on the schema's output above: normalizeSubmit would parse the line a second time).
  const req = checkSubmit(parsed.data, now);
  if (req.deadline_at !== null && Date.parse(req.deadline_at) - now < MIN_DEADLINE_MS) {
    throw new ValidationError(`deadline_at ${req.deadline_at} is less than 1s away: the job would expire before a worker could claim it`);
  }
  return req;
}

/** `tenant` → `tenant_id`, `idempotency-key` → `idempotency_key`: the flag's name where a field's is wanted. */
function meantField(k: string): string | undefined {
  const snake = k.toLowerCase().replace(/-/g, '_');
  if (snake === 'budget_tokens' || snake === 'budget_usd') return 'budget: {"tokens": N, "cost_usd": X}';
  return [snake, `${snake}_id`, `${snake}_at`, `${snake}s`].find((f) => f !== k && FIELDS.includes(f));
}

/** Untrusted text quoted in a message: at most 80 characters, its escapes visible (JSON's, then sanitize's for what JSON leaves, as bidi controls). */
function quote(s: string): string {
  return sanitize(JSON.stringify(s.length > 80 ? `${s.slice(0, 79)}…` : s));
}

/** Untrusted text in a message: made visible (sanitize) and at most 80 characters. */
function clip(s: string): string {
  return sanitize(s.length > 80 ? `${s.slice(0, 79)}…` : s);
}

/**
 * Checks lines as they arrive and keeps the jobs of the good ones. `add` returns false when the
 * input is over a cap (`overCap` says which): reading stops there.
 */
export class JobLineChecker {
  readonly jobs: JobLine[] = [];
  readonly errors: LineError[] = [];
  /** Lines that broke a rule, also past the errors kept. */
  errorCount = 0;
  overCap: string | null = null;
  private held = 0;
  private jobCount = 0;
  /** idempotency key → the first line that gave it, per queue and tenant (the scope where two bodies surely conflict). */
  private readonly keys = new Map<string, { line: number; fingerprint: string }>();

  constructor(
    private readonly defaults: JobDefaults,
    private readonly now: number,
    private readonly maxErrors: number,
  ) {}

  /** `bytes` null: the line was over MAX_LINE_BYTES (its bytes were not kept). */
  add(line: number, bytes: Buffer | null): boolean {
    if (bytes === null) {
      this.fail(line, `is over ${MAX_LINE_BYTES} bytes (1 MiB); inline input is limited to ${INLINE_INPUT_MAX_BYTES} bytes (64 KiB): store large documents elsewhere and give input_ref with input_sha256`);
      return this.counted();
    }
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      this.fail(line, 'is not UTF-8 text');
      return this.counted();
    }
    if (line === 1 && text.startsWith('\ufeff')) text = text.slice(1); // a byte-order mark some editors write
    if (text.trim() === '') return true;
    if (!this.counted()) return false;
    this.held += bytes.length;
    if (this.held > MAX_HELD_BYTES) {
      this.overCap = `is over ${MAX_HELD_BYTES / 1024 / 1024} MiB of jobs`;
      return false;
    }
    try {
      const req = parseJobLine(text, this.defaults, this.now);
      if (req.idempotency_key !== null && this.sameKeyOtherBody(line, req)) return true;
      // (once a line is bad nothing is submitted: the jobs need not be kept)
      if (this.errorCount === 0) this.jobs.push({ line, req });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      this.fail(line, e.message);
    }
    return true;
  }

  /** A job line more; false (and `overCap`) past MAX_JOBS. */
  private counted(): boolean {
    if (++this.jobCount > MAX_JOBS) {
      this.overCap = `has more than ${MAX_JOBS} jobs (non-blank lines)`;
      return false;
    }
    return true;
  }

  /** The same key with another body within one file would fail half way (an idempotency conflict): refused up front. */
  private sameKeyOtherBody(line: number, req: NormalizedSubmit): boolean {
    const scope = `${req.queue}\u0000${req.tenant_id}\u0000${req.idempotency_key!}`;
    const fingerprint = requestFingerprint(req);
    const first = this.keys.get(scope);
    if (first === undefined) {
      this.keys.set(scope, { line, fingerprint });
      return false;
    }
    if (first.fingerprint === fingerprint) return false;
    this.fail(line, `idempotency_key ${quote(req.idempotency_key!)} was given on line ${first.line} with other fields (queue ${req.queue}, tenant ${req.tenant_id}); the same key must mean the same job`);
    return true;
  }

  private fail(line: number, message: string): void {
    this.errorCount++;
    this.jobs.length = 0;
    if (this.errors.length < this.maxErrors) this.errors.push({ line, message });
  }
}

/** Fatal: a byte that is not UTF-8 refuses the line rather than becoming U+FFFD in a job's input. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Cuts chunks into lines (`\n`, a trailing `\r` dropped) without holding more than one line;
 * `onLine` returns false to stop. A line over MAX_LINE_BYTES is passed as null once its end is found.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private bytes = 0;
  private overlong = false;
  private line = 0;

  constructor(private readonly onLine: (line: number, bytes: Buffer | null) => boolean) {}

  /** False once `onLine` asked to stop. */
  push(chunk: Buffer): boolean {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      this.take(chunk.subarray(start, nl === -1 ? chunk.length : nl));
      if (nl === -1) return true;
      if (!this.flush()) return false;
      start = nl + 1;
    }
  }

  /** The last line, when the input does not end with a line break. */
  end(): boolean {
    return this.bytes > 0 || this.overlong ? this.flush() : true;
  }

  private take(piece: Buffer): void {
    if (this.overlong || piece.length === 0) return;
    if (this.bytes + piece.length > MAX_LINE_BYTES + 1) {
      // (+1: the `\r` of a CRLF line exactly at the limit)
      this.overlong = true;
      this.parts = [];
      this.bytes = 0;
      return;
    }
    // A copy: the reader reuses its buffer for the next chunk.
    this.parts.push(Buffer.from(piece));
    this.bytes += piece.length;
  }

  private flush(): boolean {
    this.line++;
    let bytes: Buffer | null = null;
    if (!this.overlong) {
      bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
      if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
      if (bytes.length > MAX_LINE_BYTES) bytes = null;
    }
    this.parts = [];
    this.bytes = 0;
    this.overlong = false;
    return this.onLine(this.line, bytes);
  }
}
