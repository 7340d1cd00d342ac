/** `1 job`, `2 jobs`: counts in messages read as English ("DLQ holds 1 jobs" did not). */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
