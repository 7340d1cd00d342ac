import type { z } from 'zod';

/** One line per issue: `field: rule`. zod's default message is a JSON dump, which is not for people. */
export function formatZodError(err: z.ZodError, what: string): string {
  const lines = err.issues.map((i) => {
    const path = i.path.length ? i.path.join('.') : what;
    return `${path}: ${i.message}`;
  });
  return `invalid ${what}: ${lines.join('; ')}`;
}
