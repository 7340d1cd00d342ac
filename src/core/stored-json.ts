/**
 * What a worker hands the store to keep as JSON (a checkpoint, an effect's result) is checked
 * here, once for every backend, before anything is written. `JSON.stringify` throws for some
 * values (a BigInt, a circular object) and returns nothing at all for others (a function, a
 * Symbol, a `toJSON` that returns undefined): a store that wrote that nothing kept an empty
 * string the job record could not be read back from, another dropped the value silently.
 */
import { ValidationError } from './errors.js';

/**
 * The most a checkpoint or an effect's result may take, as `agentq job checkpoint` and `job effect`
 * keep them: they live in the job record, which every read of the job (list, inspect, the DLQ)
 * carries. Large state belongs elsewhere, with a reference checkpointed.
 */
export const STORED_JSON_MAX_BYTES = 64 * 1024;

/**
 * The JSON text to store for `value` (`undefined` is stored as `null`), or a `ValidationError`
 * saying that `what` is not JSON-serialisable and why, or is over `maxBytes` (a string counts its
 * UTF-8 bytes, as the CLI measures the text it is given; any other value its JSON text).
 */
export function storedJson(value: unknown, what: string, maxBytes?: number): string {
  if (value === undefined) return 'null';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw notJson(what, e instanceof Error ? e.message : String(e));
  }
  if (text === undefined) throw notJson(what, `JSON has no text for ${typeof value === 'object' ? 'an object whose toJSON returns undefined' : `a ${typeof value}`}`);
  if (maxBytes !== undefined) {
    const bytes = Buffer.byteLength(typeof value === 'string' ? value : text);
    if (bytes > maxBytes) {
      throw new ValidationError(
        `${what} is ${bytes} bytes${typeof value === 'string' ? '' : ' as JSON'}; the limit is ${maxBytes} bytes (${maxBytes / 1024} KiB)`,
        'Store large data elsewhere (a file, an object store) and keep a reference to it.',
      );
    }
  }
  return text;
}

function notJson(what: string, why: string): ValidationError {
  return new ValidationError(`${what} is not JSON-serialisable (${why})`, 'Store plain data: objects, arrays, strings, finite numbers, booleans and null.');
}
