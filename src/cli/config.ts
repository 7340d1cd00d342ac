/**
 * Where agentq connects, and as whom: kubectl-style contexts.
 *
 * A config file (user: `$XDG_CONFIG_HOME/agentq/config.json`; project:
 * `.agentq.json` or `agentq.config.json`, found upward from the working
 * directory) looks like:
 *
 *   { "currentContext": "prod",
 *     "contexts": { "prod": { "url": "redis://db:6379", "readOnly": true, "queue": "research" },
 *                   "local": { "url": "sqlite:/tmp/agentq.db" } } }
 *
 * Precedence, highest first: `--url` > `AGENTQ_URL` > the selected context's
 * url > a top-level `url` in the project file > the user file > the embedded
 * default. The context is selected by `--context` > `AGENTQ_CONTEXT` > the
 * project file's `currentContext` > the user file's. An explicit `--url` or
 * `AGENTQ_URL` without an explicit context means "no context": a URL typed
 * on purpose is not silently tied to a context's settings.
 *
 * Files are validated by hand (not zod) because this runs on every command's
 * start path; a broken file or an unknown context is a ConfigError (exit 78).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';

export const PROJECT_FILE_NAMES = ['.agentq.json', 'agentq.config.json'] as const;

export interface ContextEntry {
  url?: string;
  /** Mutations (submit, cancel, redrive, ...) are refused with exit 4. */
  readOnly?: boolean;
  /** The queue used when a command gets no `--queue`. */
  queue?: string;
}

export interface ConfigFile {
  path: string;
  currentContext?: string;
  url?: string;
  /**
   * A Map, not an object: a context may be called anything, `__proto__`,
   * `constructor` or `toString` included, and `contexts[name]` on an object
   * would find Object.prototype's members for those (a "known" context with
   * no url and no readOnly).
   */
  contexts: Map<string, ContextEntry>;
}

export type UrlSource = 'flag' | 'env' | 'context' | 'project' | 'user' | 'default';
export type ContextSource = 'flag' | 'env' | 'project' | 'user';

export interface ActiveContext extends ContextEntry {
  name: string;
  source: ContextSource;
  /** The file that defines it. */
  file: string;
  /** Where `readOnly` comes from when not from `file` (a user file's, kept over a project file's entry). */
  readOnlyFrom?: string;
}

export interface ResolvedConfig {
  /** Null means the embedded default (`defaultDataUrl`), decided when the backend opens. */
  url: string | null;
  urlSource: UrlSource;
  context: ActiveContext | null;
  /** Every context known, project entries over user entries of the same name. */
  contexts: Map<string, ContextEntry & { file: string; readOnlyFrom?: string }>;
  projectFile: ConfigFile | null;
  userFile: ConfigFile | null;
  /** Where `context use` writes. */
  userFilePath: string;
}

export interface ConfigInputs {
  flags: { url?: string; context?: string };
  env: Record<string, string | undefined>;
  cwd: string;
}

export function userConfigPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0 ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  return join(base, 'agentq', 'config.json');
}

/** The nearest project file from `cwd` upward, or null. */
export function findProjectFile(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    for (const name of PROJECT_FILE_NAMES) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function fail(path: string, rule: string): never {
  throw new ConfigError(`config file ${path}: ${rule}`, 'Fix the file, or point agentq elsewhere with --url / AGENTQ_URL.');
}

/** Reads and checks one config file. Missing → null; unreadable or malformed → ConfigError. */
export function readConfigFile(path: string): ConfigFile | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    fail(path, `cannot be read (${(e as Error).message})`);
  }
  return parseConfigText(path, text);
}

export function parseConfigText(path: string, text: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    fail(path, `is not valid JSON (${(e as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(path, 'must hold a JSON object');
  const o = ownFields(raw as Record<string, unknown>);
  const known = new Set(['currentContext', 'url', 'contexts', '$schema']);
  for (const k of o.keys()) if (!known.has(k)) fail(path, `unknown key ${JSON.stringify(k)} (known: currentContext, url, contexts)`);
  const file: ConfigFile = { path, contexts: new Map() };
  const currentContext = o.get('currentContext');
  const topUrl = o.get('url');
  const contexts = o.get('contexts');
  if (currentContext !== undefined) {
    if (typeof currentContext !== 'string' || currentContext === '') fail(path, 'currentContext must be a non-empty string');
    file.currentContext = currentContext;
  }
  if (topUrl !== undefined) {
    if (typeof topUrl !== 'string' || topUrl === '') fail(path, 'url must be a non-empty string');
    file.url = topUrl;
  }
  if (contexts !== undefined) {
    if (contexts === null || typeof contexts !== 'object' || Array.isArray(contexts)) fail(path, 'contexts must be an object of name → { url, readOnly, queue }');
    for (const [name, v] of ownFields(contexts as Record<string, unknown>)) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(path, `context ${JSON.stringify(name)} must be an object`);
      const c = ownFields(v as Record<string, unknown>);
      for (const k of c.keys()) if (!['url', 'readOnly', 'queue'].includes(k)) fail(path, `context ${JSON.stringify(name)}: unknown key ${JSON.stringify(k)} (known: url, readOnly, queue)`);
      const url = c.get('url');
      const readOnly = c.get('readOnly');
      const queue = c.get('queue');
      if (url !== undefined && (typeof url !== 'string' || url === '')) fail(path, `context ${JSON.stringify(name)}: url must be a non-empty string`);
      if (readOnly !== undefined && typeof readOnly !== 'boolean') fail(path, `context ${JSON.stringify(name)}: readOnly must be true or false`);
      if (queue !== undefined && (typeof queue !== 'string' || queue === '')) fail(path, `context ${JSON.stringify(name)}: queue must be a non-empty string`);
      file.contexts.set(name, { ...(url !== undefined ? { url: url as string } : {}), ...(readOnly !== undefined ? { readOnly: readOnly as boolean } : {}), ...(queue !== undefined ? { queue: queue as string } : {}) });
    }
  }
  return file;
}

/**
 * A parsed JSON object's own members as a Map. JSON.parse makes `"__proto__"` an own property,
 * but reading `o.url` or `o[name]` would still fall through to Object.prototype for names like
 * `constructor` or `toString`: only own members count.
 */
function ownFields(o: Record<string, unknown>): Map<string, unknown> {
  return new Map(Object.keys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)!.value as unknown]));
}

export function resolveConfig({ flags, env, cwd }: ConfigInputs): ResolvedConfig {
  const userFilePath = userConfigPath(env);
  const userFile = readConfigFile(userFilePath);
  const projectPath = findProjectFile(cwd);
  const projectFile = projectPath ? readConfigFile(projectPath) : null;

  const contexts: ResolvedConfig['contexts'] = new Map();
  for (const f of [userFile, projectFile]) {
    if (!f) continue;
    for (const [name, c] of f.contexts) {
      // A project file (any cloned repository may carry one) can make a context read-only, never
      // writable again: a user's read-only context stays read-only. The entry is the project's
      // (its file, its URL); refusals name the user file, where the read-only setting is.
      const user = contexts.get(name);
      contexts.set(name, user?.readOnly && !c.readOnly ? { ...c, readOnly: true, file: f.path, readOnlyFrom: user.readOnlyFrom ?? user.file } : { ...c, file: f.path });
    }
  }

  const envUrl = nonEmpty(env.AGENTQ_URL);
  const explicitUrl = flags.url !== undefined || envUrl !== undefined;
  let selected: { name: string; source: ContextSource } | null = null;
  if (flags.context !== undefined) selected = { name: flags.context, source: 'flag' };
  else if (nonEmpty(env.AGENTQ_CONTEXT) !== undefined) selected = { name: env.AGENTQ_CONTEXT!, source: 'env' };
  else if (!explicitUrl && projectFile?.currentContext) selected = { name: projectFile.currentContext, source: 'project' };
  else if (!explicitUrl && userFile?.currentContext) selected = { name: userFile.currentContext, source: 'user' };

  let context: ActiveContext | null = null;
  if (selected) {
    const entry = contexts.get(selected.name);
    if (!entry) {
      const known = [...contexts.keys()];
      const where = selected.source === 'flag' ? '--context' : selected.source === 'env' ? 'AGENTQ_CONTEXT' : `currentContext in ${selected.source === 'project' ? projectFile!.path : userFile!.path}`;
      throw new ConfigError(
        `unknown context ${JSON.stringify(selected.name)} (from ${where})`,
        known.length ? `Known contexts: ${known.join(', ')}. See: agentq context list` : `No contexts are defined; add one to ${userFilePath}.`,
      );
    }
    const { file, ...rest } = entry;
    context = { name: selected.name, source: selected.source, file, ...rest };
  }

  let url: string | null = null;
  let urlSource: UrlSource = 'default';
  if (flags.url !== undefined) [url, urlSource] = [flags.url, 'flag'];
  else if (envUrl !== undefined) [url, urlSource] = [envUrl, 'env'];
  else if (context?.url) [url, urlSource] = [context.url, 'context'];
  else if (projectFile?.url) [url, urlSource] = [projectFile.url, 'project'];
  else if (userFile?.url) [url, urlSource] = [userFile.url, 'user'];

  return { url, urlSource, context, contexts, projectFile, userFile, userFilePath };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/** Sets `currentContext` in the user file, keeping everything else in it. Written atomically (rename). */
export function writeCurrentContext(userFilePath: string, name: string): void {
  const existing = readTextOrNull(userFilePath);
  const raw = existing === null ? {} : (JSON.parse(existing) as Record<string, unknown>);
  raw.currentContext = name;
  mkdirSync(dirname(userFilePath), { recursive: true });
  const tmp = `${userFilePath}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(raw, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, userFilePath);
}

function readTextOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
