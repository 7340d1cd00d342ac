import { describe, expect, it } from 'vitest';
import { checkTraceUrlTemplate, traceLink, TRACE_ID_PLACEHOLDER } from '../../src/cli/trace-link.js';

describe('trace URL template: validation', () => {
  it('accepts http and https templates holding {trace_id}', () => {
    expect(checkTraceUrlTemplate('https://grafana.example/explore?traceId={trace_id}')).toBeNull();
    expect(checkTraceUrlTemplate('http://jaeger:16686/trace/{trace_id}')).toBeNull();
    // more than once is fine (Honeycomb wants the id in the path and the query)
    expect(checkTraceUrlTemplate('https://ui.honeycomb.io/t/{trace_id}?trace_id={trace_id}')).toBeNull();
    expect(TRACE_ID_PLACEHOLDER).toBe('{trace_id}');
  });

  it('names the rule a bad template breaks', () => {
    expect(checkTraceUrlTemplate('https://grafana.example/explore')).toMatch(/must contain \{trace_id\}/);
    expect(checkTraceUrlTemplate('javascript:alert({trace_id})')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(checkTraceUrlTemplate('file:///etc/{trace_id}')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(checkTraceUrlTemplate('grafana.example/{trace_id}')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(checkTraceUrlTemplate('https:grafana.example/{trace_id}')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(checkTraceUrlTemplate('HTTPS://grafana.example/{trace_id}')).toBeNull();
    expect(checkTraceUrlTemplate('https://{trace_id}')).toMatch(/must name a host/);
    expect(checkTraceUrlTemplate('')).toMatch(/must contain \{trace_id\}/);
    // a control character would reach the terminal with every link; a space would end the link early
    expect(checkTraceUrlTemplate('https://g.example/\x1b]8;;x\x07{trace_id}')).toMatch(/spaces or control characters/);
    expect(checkTraceUrlTemplate('https://g.example/{trace_id} ')).toMatch(/spaces or control characters/);
    // printed with every link: a password in it would be shown to everyone looking at a job
    expect(checkTraceUrlTemplate('https://admin:hunter2@g.example/{trace_id}')).toMatch(/must not carry a user name or password/);
  });
});

describe('trace URL template: rendering', () => {
  const t = 'https://grafana.example/explore?traceId={trace_id}&orgId=1';

  it('substitutes the trace id, URL-encoded, everywhere it is asked for', () => {
    expect(traceLink(t, '4bf92f3577b34da6a3ce929d0e0e4736')).toBe('https://grafana.example/explore?traceId=4bf92f3577b34da6a3ce929d0e0e4736&orgId=1');
    expect(traceLink(t, 'a b&c=d/e?#')).toBe('https://grafana.example/explore?traceId=a%20b%26c%3Dd%2Fe%3F%23&orgId=1');
    expect(traceLink('https://x.example/{trace_id}/{trace_id}', 'a/b')).toBe('https://x.example/a%2Fb/a%2Fb');
    // untrusted bytes in a trace id end up as percent escapes, never raw in the link
    expect(traceLink(t, '\x1b[31mred\x07')).toBe('https://grafana.example/explore?traceId=%1B%5B31mred%07&orgId=1');
    // a `$&` in the id is not a replacement pattern
    expect(traceLink('https://x.example/{trace_id}', '$&$1')).toBe('https://x.example/%24%26%241');
  });

  it('is null without a template or without a trace id', () => {
    expect(traceLink(null, 'abc')).toBeNull();
    expect(traceLink(t, null)).toBeNull();
    expect(traceLink(t, undefined)).toBeNull();
    expect(traceLink(t, '')).toBeNull();
  });
});
