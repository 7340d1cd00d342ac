import type { z } from 'zod';
import { ValidationError } from './errors.js';

/** One line per issue: `field: rule`. zod's default message is a JSON dump, which is not for people. */
export function formatZodError(err: z.ZodError, what: string): string {
  const lines = err.issues.slice(0, MAX_ISSUES).map((i) => {
    const path = i.path.length ? i.path.join('.') : what;
    return `${path}: ${i.message}`;
  });
  // (a plan file with a thousand bad items is one readable message, not a thousand)
  const more = err.issues.length - lines.length;
  return `invalid ${what}: ${lines.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** Issues named in one message; the rest are counted. */
const MAX_ISSUES = 5;

/**
 * An option name nothing reads (a typo, an option of another library, options from a config file)
 * is refused: `leaseMS: 300_000` otherwise ran with the 60 s default lease without a word.
 */
export function checkOptionKeys(what: string, o: object, known: readonly string[]): void {
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) throw new ValidationError(`${what}: unknown option ${JSON.stringify(k)} (known: ${known.join(', ')})`);
  }
}
