/**
 * What a worker hands the store to keep as JSON (a checkpoint, an effect's result) is checked
 * here, once for every backend, before anything is written. `JSON.stringify` throws for some
 * values (a BigInt, a circular object) and returns nothing at all for others (a function, a
 * Symbol, a `toJSON` that returns undefined): a store that wrote that nothing kept an empty
 * string the job record could not be read back from, another dropped the value silently.
 */
import { ValidationError } from './errors.js';

/**
 * The JSON text to store for `value` (`undefined` is stored as `null`), or a `ValidationError`
 * saying that `what` is not JSON-serialisable and why.
 */
export function storedJson(value: unknown, what: string): string {
  if (value === undefined) return 'null';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw notJson(what, e instanceof Error ? e.message : String(e));
  }
  if (text === undefined) throw notJson(what, `JSON has no text for ${typeof value === 'object' ? 'an object whose toJSON returns undefined' : `a ${typeof value}`}`);
  return text;
}

function notJson(what: string, why: string): ValidationError {
  return new ValidationError(`${what} is not JSON-serialisable (${why})`, 'Store plain data: objects, arrays, strings, finite numbers, booleans and null.');
}
