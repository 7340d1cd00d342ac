/**
 * Validates a Prometheus text exposition with a real parser of the format
 * (parse-prometheus-text-format), plus what that parser leaves unchecked:
 * every value is a float the format allows, every family is typed, appears
 * once, and has a valid name, and no series (name and label set) appears twice (Prometheus
 * rejects the whole scrape then).
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$/;
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

export type Families = ReturnType<typeof parsePrometheusTextFormat>;

export function parseAndValidate(text: string): Families {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = parsePrometheusTextFormat(text);
  const seen = new Set<string>();
  for (const f of families) {
    if (!NAME.test(f.name)) throw new Error(`bad metric name ${f.name}`);
    if (seen.has(f.name)) throw new Error(`family ${f.name} appears twice (samples of a family must be together)`);
    seen.add(f.name);
    if (f.type === 'UNTYPED') throw new Error(`family ${f.name} has no TYPE line`);
    if (!f.help) throw new Error(`family ${f.name} has no HELP`);
    const series = new Set<string>();
    for (const m of f.metrics) {
      const key = JSON.stringify(Object.entries(m.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
      if (series.has(key)) throw new Error(`family ${f.name}: series ${key} appears twice`);
      series.add(key);
      const values = [m.value, m.count, m.sum, ...Object.values(m.quantiles ?? {}), ...Object.values(m.buckets ?? {})];
      for (const v of values) {
        if (v !== undefined && !FLOAT.test(v)) throw new Error(`family ${f.name}: value ${JSON.stringify(v)} is not a float`);
      }
      for (const k of Object.keys(m.labels ?? {})) {
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k)) throw new Error(`family ${f.name}: bad label name ${k}`);
      }
    }
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`. */
export function sampleValue(families: Families, name: string, labels: Record<string, string>): number | undefined {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m?.value === undefined ? undefined : Number(m.value);
}
