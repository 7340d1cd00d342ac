/**
 * `agentq context list|use|show`: kubectl-style contexts from the user and
 * project config files (see `../config.ts` for the file format and precedence).
 */
import { existsSync } from 'node:fs';
import { ConfigError } from '../../core/errors.js';
import { describeAdmission, describeTenantCaps } from '../../core/policy.js';
import type { CommandContext } from '../context.js';
import { writeCurrentContext } from '../config.js';
import { printObject, printRecords, isMachineFormat } from '../output/format.js';
import { redactCredentials } from '../output/redact.js';
import { fieldLines } from '../output/fields.js';
import { sanitize } from '../output/sanitize.js';

interface ContextRow {
  name: string;
  current: boolean;
  url: string | null;
  read_only: boolean;
  queue: string | null;
  /** The context's own `traceUrl` template (null without one; a top-level or env template is `context show`'s to explain). */
  trace_url: string | null;
  file: string;
}

export async function list(_opts: unknown, ctx: CommandContext): Promise<void> {
  // Works with an unknown current context (kubectl's does): this is where its hint sends you.
  const cfg = ctx.config({ unknownContextOk: true });
  if (cfg.unknownContext) ctx.warn(`${cfg.unknownContext.message}; ${cfg.unknownContext.hint ?? ''}`);
  const active = cfg.context?.name ?? null;
  const rows: ContextRow[] = [...cfg.contexts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, c]) => ({
      name,
      current: name === active,
      url: c.url === undefined ? null : redactCredentials(c.url),
      read_only: c.readOnly === true,
      queue: c.queue ?? null,
      trace_url: c.traceUrl ?? null,
      file: c.file,
    }));
  await printRecords(
    ctx.out,
    {
      empty: `no contexts defined; add them to ${cfg.userFilePath} or a .agentq.json in your project`,
      columns: [
        { header: 'current', get: (r) => (r.current ? '*' : '') },
        { header: 'name', get: (r) => r.name },
        { header: 'url', get: (r) => r.url ?? '(default)', flexible: true },
        { header: 'mode', get: (r) => (r.read_only ? 'read-only' : 'read-write') },
        { header: 'queue', get: (r) => r.queue },
        { header: 'file', get: (r) => r.file, wide: true, flexible: true },
        // wide only (a template is a long URL: the table stays one line per context), and last, so
        // plain output's earlier columns keep their places for scripts that cut them
        { header: 'trace url', get: (r) => r.trace_url, wide: true, flexible: true },
      ],
    },
    rows,
  );
}

export async function use(opts: { name: string }, ctx: CommandContext): Promise<void> {
  // A stale or mistyped current context must not stop you from choosing another one.
  const cfg = ctx.config({ unknownContextOk: true });
  if (!cfg.contexts.has(opts.name)) {
    const known = [...cfg.contexts.keys()];
    throw new ConfigError(
      `unknown context ${JSON.stringify(sanitize(opts.name))}`,
      known.length ? `Known contexts: ${known.map((k) => sanitize(k)).join(', ')}.` : `No contexts are defined; add one to ${cfg.userFilePath}.`,
    );
  }
  // The user file's currentContext is read everywhere; a context only this project defines would be
  // unknown (exit 78) in every other directory.
  if (!cfg.userFile?.contexts.has(opts.name)) {
    const where = cfg.contexts.get(opts.name)!.file;
    throw new ConfigError(
      `context ${JSON.stringify(sanitize(opts.name))} is defined only in ${where}: the user file ${cfg.userFilePath} cannot select it (it would be unknown outside this project)`,
      `Inside this project, set "currentContext" in ${where}, or use --context ${sanitize(opts.name)} / AGENTQ_CONTEXT=${sanitize(opts.name)}; or copy the context into ${cfg.userFilePath}.`,
    );
  }
  writeCurrentContext(cfg.userFilePath, opts.name);
  ctx.note(`current context is now ${sanitize(opts.name)} (in ${cfg.userFilePath})`);
  // The file's choice comes after the environment's: say so, or the switch looks like it did nothing.
  const fromEnv = ctx.env.AGENTQ_CONTEXT;
  if (fromEnv !== undefined && fromEnv !== '' && fromEnv !== opts.name) {
    ctx.warn(`AGENTQ_CONTEXT=${sanitize(fromEnv)} is set in this environment and still selects the context; unset it for the change to apply`);
  }
  if (cfg.projectFile?.currentContext && cfg.projectFile.currentContext !== opts.name) {
    ctx.warn(`${cfg.projectFile.path} sets currentContext ${sanitize(cfg.projectFile.currentContext)}, which wins inside this project`);
  }
}

export async function show(_opts: unknown, ctx: CommandContext): Promise<void> {
  const cfg = ctx.config();
  const url = redactCredentials(await ctx.backendUrl());
  const info = {
    context: cfg.context?.name ?? null,
    context_source: cfg.context?.source ?? null,
    url,
    url_source: cfg.urlSource,
    read_only: cfg.context?.readOnly === true,
    queue: ctx.defaultQueue(),
    // The context's scheduling policy as the file gives it (a worker's flags may add caps).
    fairness: cfg.context?.fairness ?? null,
    admission: cfg.context?.admission ?? null,
    // The template `inspect`, `dlq show` and the TUI make trace links with (null: they show none).
    trace_url: cfg.traceUrl ?? null,
    trace_url_source: cfg.traceUrlSource ?? null,
    project_file: cfg.projectFile?.path ?? null,
    user_file: cfg.userFilePath,
    // Where `context use` would write it, also before it exists: said apart, so that no one looks
    // in it for settings. (Asked of the path, not of the parsed file: a broken one that --url let
    // pass is there all the same.)
    user_file_exists: existsSync(cfg.userFilePath),
  };
  if (isMachineFormat(ctx.format)) {
    printObject(ctx.out, info);
    return;
  }
  const lines: Array<[string, string]> = [
    ['context', info.context === null ? '(none)' : `${info.context} (from ${info.context_source})`],
    ['url', `${info.url} (from ${info.url_source})`],
    // (a project file's entry of a context the user file makes read-only stays read-only: say where)
    ['mode', info.read_only ? `read-only${cfg.context?.readOnlyFrom ? ` (set in ${cfg.context.readOnlyFrom})` : ''}` : 'read-write'],
    ['queue', info.queue],
    ['tenant caps', describeTenantCaps(info.fairness ?? undefined) ?? 'none'],
    ['admission', describeAdmission(info.admission ?? undefined) ?? 'none'],
    ['trace url', info.trace_url === null ? 'none' : `${info.trace_url} (from ${info.trace_url_source})`],
    ['project file', info.project_file ?? '(none)'],
    ['user file', info.user_file_exists ? info.user_file : `${info.user_file} (not created)`],
  ];
  // `label:  value` aligned on a terminal, `label<TAB>value` in plain output, as `inspect` prints them.
  for (const l of fieldLines(lines.map(([k, v]) => [k, sanitize(v)] as const), ctx.format === 'plain')) ctx.out.write(`${l}\n`);
}
