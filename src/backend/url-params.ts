/**
 * The query parameters a backend URL may carry. An unknown one, or one given twice, is refused, not ignored: a typo
 * such as `endpiont=` would otherwise send an SQS backend meant for a local emulator to AWS, and
 * `shard=4` would leave a queue with one shard without a word.
 */
import { ConfigError } from '../core/errors.js';

/**
 * Throws a ConfigError naming the first parameter of `params` that is not in `known`, or that is
 * given more than once (`?shards=2&shards=3`: whichever one a parser read, the other was silently
 * ignored).
 */
export function refuseUnknownParams(params: URLSearchParams, known: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (seen.has(name) && known.includes(name)) {
      throw new ConfigError(`${what} gives the parameter ${JSON.stringify(name)} more than once`, 'Give each parameter once.');
    }
    seen.add(name);
    if (known.includes(name)) continue;
    const near = known.find((k) => editDistance(k, name.toLowerCase()) <= 2);
    throw new ConfigError(
      `${what} has an unknown parameter ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ''}`,
      `Its parameters are: ${known.join(', ')}.`,
    );
  }
}

/** Levenshtein distance (the names are a few characters long). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
