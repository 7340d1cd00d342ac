/**
 * Which store this invocation talks to, as the global flags that chose it
 * (`--context NAME`, `--url URL`), for the resume commands the DLQ engine
 * prints. Set once per invocation by the CLI (`cli/resume-flags.ts` renders
 * it: shell-quoted, credentials redacted); empty when the store came from the
 * environment or the config's default, which a resume in the same shell finds again.
 */
export interface ResumeTarget {
  /** E.g. `--context prod` or `--url 'redis://host:6379'`, or empty. */
  flags: string;
  /** What the operator must know to run the command (a redacted password), or null. */
  note: string | null;
}

const NO_TARGET: ResumeTarget = { flags: '', note: null };
let current: ResumeTarget = NO_TARGET;

export function setResumeTarget(target: ResumeTarget | null): void {
  current = target ?? NO_TARGET;
}

export function resumeTarget(): ResumeTarget {
  return current;
}
