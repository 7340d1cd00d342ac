/**
 * Credentials never reach a screen or a log: every message the CLI prints
 * (errors included) goes through `redactCredentials`, which finds URLs in free
 * text and hides their user-info and secret-looking query parameters. A
 * backend error that quotes its connection string (`redis://:hunter2@db`) is
 * the usual way a password ends up in a CI log.
 */

// scheme://user:password@   or   scheme://token@ — up to the LAST @ of the authority (greedy, not past
// a blank, `/`, `?` or `#`): a password with an unencoded @ (`redis://admin:Xy@9f@host`) is hidden whole.
const USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#]*)@/gi;
const SECRET_PARAM_RE =
  /([?&;](?:password|passwd|pwd|pass|token|auth|secret|secret_key|access_key|access_key_id|secret_access_key|aws_secret_access_key|session_token|security_token|x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature|api_key|apikey|key)=)[^&;#\s]*/gi;

// The same, percent-encoded inside another URL's query (`sqs://…?store=redis%3A%2F%2Fuser%3Apw%40host`):
// scheme%3A%2F%2F, then the user-info up to %40 (never past a `/`, `%2F`, `&` or `#`).
const ENCODED_USERINFO_RE = /\b([a-z](?:[a-z0-9+.-]|%2B)*%3A%2F%2F)((?:(?!%2F|%40)[^\s/@&#])*)%40/gi;

export function redactCredentials(text: string): string {
  return text
    .replace(USERINFO_RE, (_m, scheme: string, userinfo: string) => {
      // `user:secret@` keeps the user name (useful when debugging which account), hides the secret;
      // `token@` (no colon) is usually a bare token, so it goes entirely.
      const colon = userinfo.indexOf(':');
      const user = colon < 0 ? '' : userinfo.slice(0, colon);
      if (colon >= 0 && !user.includes('@')) return `${scheme}${user}:***@`;
      return `${scheme}***@`;
    })
    .replace(ENCODED_USERINFO_RE, (_m, scheme: string, info: string) => {
      const colon = info.search(/%3A/i);
      return colon < 0 ? `${scheme}***%40` : `${scheme}${info.slice(0, colon)}%3A***%40`;
    })
    .replace(SECRET_PARAM_RE, '$1***');
}
