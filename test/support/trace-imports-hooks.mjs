// Module resolution hook (runs on the loader thread): append each resolved URL to a file.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(process.env.AGENTQ_TRACE_IMPORTS, `${result.url}\n`);
  return result;
}
