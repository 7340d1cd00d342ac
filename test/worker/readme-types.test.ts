/**
 * The README's library example compiles as users write it, also under the strictest option
 * projects turn on: `exactOptionalPropertyTypes` (where `workerVersion: process.env.GIT_SHA`,
 * a `string | undefined`, did not fit an optional `string` field).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The diagnostics of `source` as one module, type-checked strict with exactOptionalPropertyTypes against this package's types. */
async function typeErrors(source: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'agentq-types-'));
  try {
    const file = join(dir, 'example.mts');
    await writeFile(file, source);
    const program = ts.createProgram([file], {
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
      skipLibCheck: true,
    });
    return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const AGENTQ = JSON.stringify(join(ROOT, 'src/index.js'));

it('the README library example type-checks with strict and exactOptionalPropertyTypes', async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Library API'));
  const example = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  expect(example).toContain("from 'agentq'");
  const source =
    'declare const billing: { createInvoice(o: { order: number; idempotencyKey: string }): Promise<{ id: string }> };\n' +
    example.replace("from 'agentq'", `from ${AGENTQ}`) +
    // and an options object built from optional values, as a config loader would
    'export const opts: Parameters<typeof createClient>[0] = { url: process.env.AGENTQ_URL, clock: undefined };\n';
  expect(await typeErrors(source)).toEqual([]);
}, 60_000);

// Regression: DlqFilter's fields and HandlerError's `retryable` took no `undefined`, so a filter or an
// error built from optional values (a CLI flag, a config field) did not compile under exactOptionalPropertyTypes;
// `classes` took no readonly list, and `cancel` needed a reason (null for none).
it('filters and errors built from optional values type-check with exactOptionalPropertyTypes', async () => {
  const source =
    `import { createClient, createWorker, HandlerError } from ${AGENTQ};\n` +
    'declare const flags: { queue?: string; codes?: string[]; grep?: string; expired?: boolean; retryable?: boolean; reason?: string };\n' +
    'const client = await createClient({});\n' +
    'await client.dlqList({ queue: flags.queue, errorCodes: flags.codes, grep: flags.grep, expired: flags.expired }, { limit: 10 });\n' +
    'await client.dlqRows({ queue: flags.queue }, { limit: 10 });\n' +
    // a cancel with the reason left out, or from an optional flag
    "await client.cancel('job_x');\nawait client.cancel('job_x', flags.reason);\n" +
    "export const e = new HandlerError('PROVIDER_429', 'rate limited', { retryable: flags.retryable });\n" +
    // classes from a constant list (`as const` makes it readonly)
    "const CLASSES = ['interactive', 'batch'] as const;\n" +
    "createWorker({ backend: client, queue: 'q', classes: CLASSES, handler: () => null });\n";
  expect(await typeErrors(source)).toEqual([]);
}, 60_000);
