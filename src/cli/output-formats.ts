/**
 * The values of the global `-o`. The root parses `-o` wherever it appears, so
 * it accepts every format; a format only some commands understand is listed
 * here with them, so help text and completions offer it only there (the
 * other commands refuse it).
 */
import { ValidationError } from '../core/errors.js';

export const COMMON_OUTPUTS = ['table', 'wide', 'plain', 'json', 'ndjson'] as const;

/** Formats understood by one command only, by command path (`stats` takes `-o prometheus`: commands/ops-register.ts). */
export const COMMAND_OUTPUTS: Readonly<Record<string, readonly string[]>> = { stats: ['prometheus'] };

export const OUTPUT_CHOICES: string[] = [...COMMON_OUTPUTS, ...new Set(Object.values(COMMAND_OUTPUTS).flat())];

export const OUTPUT_HELP = `output format: ${COMMON_OUTPUTS.join(', ')}${Object.entries(COMMAND_OUTPUTS)
  .map(([cmd, f]) => `; ${f.join(', ')} with ${cmd} only`)
  .join('')} (default: table on a terminal, plain otherwise)`;

/** `-o X --json`: two formats asked for; refused (exit 2) rather than one silently winning. */
export function jsonConflict(requested: string): ValidationError {
  return new ValidationError(`-o ${requested} and --json ask for two output formats: give one of them (--json is -o json)`);
}
