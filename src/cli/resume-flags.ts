/**
 * The global flags a printed resume command needs (`agentq --context prod dlq redrive --resume
 * RUN`): the store the run lives in was chosen by `--context` or `--url`, and without them the
 * printed command talks to the default store and fails ("no such run").
 *
 * A URL with a password is printed redacted (never a secret on the screen or in a scrollback or a
 * CI log), with a note saying so: a context, or AGENTQ_URL in the environment, resumes without
 * typing it.
 */
import type { ResumeTarget } from '../core/resume-target.js';
import { redactCredentials } from './output/redact.js';

/** Quotes a word for a POSIX shell when it needs it (`prod` stays as is). */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function resumeTargetOf(globals: { context?: string; url?: string }): ResumeTarget {
  const flags: string[] = [];
  let note: string | null = null;
  if (globals.context !== undefined) flags.push(`--context ${shellWord(globals.context)}`);
  if (globals.url !== undefined) {
    const shown = redactCredentials(globals.url);
    flags.push(`--url ${shellWord(shown)}`);
    if (shown !== globals.url) note = '*** stands for the credentials in --url, not printed: put them back, or resume through a context or AGENTQ_URL';
  }
  return { flags: flags.join(' '), note };
}
