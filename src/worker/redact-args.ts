/**
 * The handler command as the worker shows it: recognisable, without the secrets operators pass in
 * its arguments (`-- ./agent.sh --api-key sk-…`). The worker's stderr goes to journald, CI logs and
 * log shippers; a key printed there has leaked. Only what is shown is redacted: the child still
 * gets its arguments as given.
 */

/** Shown instead of a secret. */
export const REDACTED = '***';

/**
 * A name is secret-looking when one of its words (split at `-`, `_`, `.`) ends in key or token, or
 * names a secret, password or credential: `--api-key`, `--apikey`, `--auth-token`, `--client-secret`,
 * `--db-password`, `OPENAI_API_KEY`. (`--keyboard`, `--tokenizer` are not.)
 */
const SECRET_WORD_RE = /(?:keys?|tokens?|secrets?|passwords?|passwd|pwd|passphrase|credentials?)$/i;

function secretName(name: string): boolean {
  return name.split(/[-_.]+/).some((word) => word !== '' && SECRET_WORD_RE.test(word));
}

/** `scheme://user:password@host`: the password part. */
const URL_PASSWORD_RE = /([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/@]*@/gi;

function redactUrls(arg: string): string {
  return arg.replace(URL_PASSWORD_RE, `$1${REDACTED}@`);
}

/**
 * The arguments with the values of secret-looking options redacted: `--api-key V` (the next
 * argument, unless it is itself an option), `--api-key=V`, `NAME_TOKEN=V` (an `env` assignment),
 * and the password of every URL with `user:password@`.
 */
export function redactArgs(args: readonly string[]): string[] {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const joined = /^(-{0,2}[A-Za-z][\w.-]*)=/.exec(arg);
    if (joined && secretName(joined[1]!.replace(/^-+/, ''))) {
      shown.push(`${joined[1]}=${REDACTED}`);
      continue;
    }
    shown.push(redactUrls(arg));
    const flag = /^--?([A-Za-z][\w.-]*)$/.exec(arg);
    const next = args[i + 1];
    if (flag && secretName(flag[1]!) && next !== undefined && !next.startsWith('-')) {
      shown.push(REDACTED);
      i++;
    }
  }
  return shown;
}

/** The command line as the worker prints it (joined with spaces, secrets redacted). */
export function shownCommand(command: string, args: readonly string[]): string {
  return [redactUrls(command), ...redactArgs(args)].join(' ');
}
