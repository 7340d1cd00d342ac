/**
 * One record's fields as the human views print them (`inspect`, `dlq show`, `dlq runs show`,
 * `context show`), one layout for all, as `kubectl describe` prints them: `label:` and the
 * value, the values aligned two spaces past the longest label of the record. Plain output
 * (`-o plain`, or stdout not a terminal) is `label<TAB>value`, for `cut -f2` and `awk -F'\t'`.
 * Values are shown as given: the caller sanitises untrusted text.
 */
export function fieldLines(fields: ReadonlyArray<readonly [label: string, value: string]>, plain: boolean): string[] {
  if (plain) return fields.map(([k, v]) => `${k}\t${v}`);
  const width = Math.max(0, ...fields.map(([k]) => k.length)) + 3; // the colon and two spaces
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${v}`);
}
