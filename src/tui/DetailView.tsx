import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean } from './text.js';

/** One entry, scrolled; the lines were sanitised when they were built (`detail.ts`). */
export function DetailView({ state }: { state: TriageState }) {
  const d = state.detail;
  if (d === null) return null;
  const title = <Text bold wrap="truncate-end">{`Entry ${clean(d.jobId)}`}</Text>;
  if (d.lines === undefined) return <>{title}<Text>  loading…</Text></>;
  if (d.lines === null) {
    return (
      <>
        {title}
        <Text wrap="truncate-end">{d.error === null ? '  this job is no longer in the DLQ' : `  could not load it: ${clean(d.error)}`}</Text>
      </>
    );
  }
  const shown = d.lines.slice(d.scroll, d.scroll + state.pageSize);
  const more = d.lines.length - (d.scroll + shown.length);
  return (
    <>
      <Text bold wrap="truncate-end">
        {`Entry ${clean(d.jobId)}  (lines ${d.scroll + 1}-${d.scroll + shown.length} of ${d.lines.length}${more > 0 ? ', j/PgDn for more' : ''})`}
      </Text>
      {shown.map((line, i) => (
        <Text key={`${d.scroll + i}`} wrap="truncate-end">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </>
  );
}
