/**
 * The link from a job to its trace in the operator's tracing UI (Grafana, Jaeger, Honeycomb,
 * Datadog...): a URL template with `{trace_id}` in it, set as `traceUrl` in a config file or a
 * context, or `AGENTQ_TRACE_URL` (see `config.ts`). `dlq show`, `inspect` and the TUI's detail
 * view print the link under the trace id; their `-o json` carries it as `trace_url`.
 *
 * The template is checked where it is read (a bad one is a ConfigError, exit 78, naming the
 * setting): only http and https, since the link is meant to be opened by whoever reads it; no
 * spaces or control characters, which would end the link early or reach the terminal; and no
 * credentials, which would be printed with every link. The trace id is untrusted (any text a
 * producer gave): it is substituted URL-encoded, so it can neither leave its place in the URL
 * nor put a raw control byte on the screen.
 */

export const TRACE_ID_PLACEHOLDER = '{trace_id}';

/** Why `template` cannot be used, as a rule to print after the setting's name; null when it can. */
export function checkTraceUrlTemplate(template: string): string | null {
  if (!template.includes(TRACE_ID_PLACEHOLDER)) return `must contain ${TRACE_ID_PLACEHOLDER}, where the trace id goes (got ${JSON.stringify(template)})`;
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f-\x9f]/.test(template)) return 'must not contain spaces or control characters (percent-encode them: %20)';
  let url: URL;
  try {
    url = new URL(template.split(TRACE_ID_PLACEHOLDER).join('TRACE'));
  } catch {
    return `must be an http:// or https:// URL (got ${JSON.stringify(template)})`;
  }
  // spelled out: the URL parser would take `https:host/...` too, which not every terminal or chat client links
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !/^https?:\/\//i.test(template)) return `must be an http:// or https:// URL (got ${JSON.stringify(template)})`;
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password: the link is printed with every job';
  if (!template.slice(url.protocol.length + 2).split(/[/?#]/)[0]!.replace(TRACE_ID_PLACEHOLDER, '')) return 'must name a host (https://HOST/...{trace_id})';
  return null;
}

/** The link to `traceId`'s trace, or null without a template or a trace id. */
export function traceLink(template: string | null | undefined, traceId: string | null | undefined): string | null {
  if (!template || !traceId) return null;
  // split/join, not replace: a `$&` in the id must not be read as a replacement pattern
  return template.split(TRACE_ID_PLACEHOLDER).join(encodeURIComponent(traceId));
}
