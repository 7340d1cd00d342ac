/**
 * Credentials never reach a screen or a log: every message the CLI prints
 * (errors included) goes through `redactCredentials`, which finds URLs in free
 * text and hides their user-info and secret-looking query parameters. A
 * backend error that quotes its connection string (`redis://:hunter2@db`) is
 * the usual way a password ends up in a CI log.
 */

// scheme://user:password@   or   scheme://token@
const USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*)(?::([^\s/@]*))?@/gi;
const SECRET_PARAM_RE =
  /([?&;](?:password|passwd|pwd|pass|token|auth|secret|secret_key|access_key|access_key_id|secret_access_key|aws_secret_access_key|session_token|security_token|x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature|api_key|apikey|key)=)[^&;#\s]*/gi;

export function redactCredentials(text: string): string {
  return text
    .replace(USERINFO_RE, (_m, scheme: string, user: string, password: string | undefined) => {
      // `user:secret@` keeps the user name (useful when debugging which account), hides the secret;
      // `token@` (no colon) is usually a bare token, so it goes entirely.
      if (password !== undefined) return `${scheme}${user}:***@`;
      return `${scheme}***@`;
    })
    .replace(SECRET_PARAM_RE, '$1***');
}
