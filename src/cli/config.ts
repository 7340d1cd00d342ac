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
 * `traceUrl` (top level or in a context; `AGENTQ_TRACE_URL` above both) is the
 * template of the link to a job's trace: see `trace-link.ts`.
 *
 * A relative `sqlite:` path in a file is relative to that file's directory
 * (`"url": "sqlite:./agentq.db"` next to `.agentq.json` is the same database
 * from any subdirectory); on the command line and in AGENTQ_URL it is relative
 * to the working directory, as a path typed there would be.
 *
 * A project file is trusted only if it is owned by the current user (or root)
 * and no other user can replace it (its directory is not world-writable, or is
 * sticky): like git's safe.directory, a `.agentq.json` another user dropped in
 * /tmp or a shared checkout must not choose the backend. An untrusted one is
 * skipped with a warning naming the file and its owner.
 *
 * Files are validated by hand (not zod) because this runs on every command's
 * start path; a broken file or an unknown context is a ConfigError (exit 78).
 * Only regular files up to 1 MiB are read (a FIFO or /dev/zero in their place
 * must not hang or exhaust agentq).
 */
import { chmodSync, closeSync, constants as fsConstants, fsyncSync, fstatSync, lstatSync, openSync, readSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync, mkdirSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { AdmissionLimits } from '../core/admission.js';
import type { FairnessOptions } from '../core/fairness.js';
import { NAME_RE, NAME_RULE } from '../core/model.js';
import { parseAdmission, parseFairness, PolicyRuleError } from '../core/policy.js';
import { checkTraceUrlTemplate } from './trace-link.js';

export const PROJECT_FILE_NAMES = ['.agentq.json', 'agentq.config.json'] as const;
const CONTEXT_KEYS = ['url', 'readOnly', 'queue', 'fairness', 'admission', 'traceUrl'];

export interface ContextEntry {
  url?: string;
  /** Mutations (submit, cancel, redrive, ...) are refused with exit 4. */
  readOnly?: boolean;
  /** The queue used when a command gets no `--queue`. */
  queue?: string;
  /** Per-tenant caps and weights the claims of this context's workers honour (see core/policy.ts). */
  fairness?: FairnessOptions;
  /** Backlog limits this context's submits honour. */
  admission?: AdmissionLimits;
  /** Link template to a job's trace (`https://…{trace_id}…`, see trace-link.ts). */
  traceUrl?: string;
}

export interface ConfigFile {
  path: string;
  currentContext?: string;
  url?: string;
  /** The trace link template used when the selected context has none. */
  traceUrl?: string;
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
export type TraceUrlSource = 'env' | 'context' | 'project' | 'user';

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
  /**
   * The trace link template (checked): `AGENTQ_TRACE_URL` > the selected context's `traceUrl` >
   * a top-level `traceUrl` in the project file > in the user file. Null (or absent, in a
   * configuration built by hand): no links are shown.
   */
  traceUrl?: string | null;
  traceUrlSource?: TraceUrlSource | null;
  context: ActiveContext | null;
  /** Every context known, project entries over user entries of the same name. */
  contexts: Map<string, ContextEntry & { file: string; readOnlyFrom?: string }>;
  projectFile: ConfigFile | null;
  userFile: ConfigFile | null;
  /** Where `context use` writes. */
  userFilePath: string;
  /** Said once on stderr by the caller: files skipped or shadowed, and why. */
  warnings?: string[];
  /**
   * The selected context is defined nowhere (a stale currentContext, a mistyped AGENTQ_CONTEXT).
   * Set only by `resolveConfigLenient`; `resolveConfig` throws it. `context list` and
   * `context use` work on regardless, so there is a way back through the CLI.
   */
  unknownContext?: ConfigError;
}

export interface ConfigInputs {
  flags: { url?: string; context?: string };
  env: Record<string, string | undefined>;
  cwd: string;
}

export function userConfigPath(env: Record<string, string | undefined>): string {
  // The XDG spec says a relative path there is invalid and must be ignored: taken as it is, it named
  // a file under the working directory, so a `context use` held in one directory and not below it
  // (as defaultDataUrl does for XDG_DATA_HOME). An empty HOME is no home either.
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'agentq', 'config.json');
}

/** A config file larger than this is refused: the real ones are a few hundred bytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The nearest project file from `cwd` upward, or null. (Ownership is not checked here: see `findTrustedProjectFile`.) */
export function findProjectFile(cwd: string): string | null {
  return projectCandidates(cwd).next().value ?? null;
}

/** Each directory's project file from `cwd` upward; `shadowed` hears of a second one in the same directory. */
function* projectCandidates(cwd: string, shadowed?: (used: string, others: string[]) => void): Generator<string, void> {
  let dir = resolve(cwd);
  for (;;) {
    const here = PROJECT_FILE_NAMES.map((name) => join(dir, name)).filter((p) => statOrNull(p) !== null);
    if (here.length > 0) {
      if (here.length > 1) shadowed?.(here[0]!, here.slice(1));
      yield here[0]!;
    }
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/**
 * Why a project file may not be trusted, or null when it may: it must belong to us (or root),
 * and its directory must not let another user replace it (world-writable without the sticky
 * bit, or sticky but owned by someone else). Not checked where there are no uids (Windows).
 */
export function untrustedBecause(path: string, st: Stats, uid: number | undefined = process.getuid?.()): string | null {
  if (uid === undefined) return null;
  if (st.uid !== uid && st.uid !== 0) return `it is owned by ${ownerName(st.uid)}, not by you`;
  // A symlink's own owner counts too: another user's link must not pick which of our files is read.
  const link = lstatOrNull(path);
  if (link?.isSymbolicLink() && link.uid !== uid && link.uid !== 0) return `it is a symlink owned by ${ownerName(link.uid)}, not by you`;
  const dir = statOrNull(dirname(path));
  if (dir && (dir.mode & 0o002) !== 0) {
    const sticky = (dir.mode & 0o1000) !== 0;
    if (!sticky) return `its directory ${dirname(path)} is world-writable: anyone can replace the file`;
    // The owner of a sticky directory may still remove or rename anything in it.
    if (dir.uid !== uid && dir.uid !== 0) return `its directory ${dirname(path)} is world-writable and owned by ${ownerName(dir.uid)}`;
  }
  return null;
}

function ownerName(uid: number): string {
  // /etc/passwd is the only user database read without a native module; good enough for a warning.
  try {
    const line = readSmallFile('/etc/passwd', 4 * MAX_CONFIG_BYTES)
      .split('\n')
      .find((l) => l.split(':')[2] === String(uid));
    if (line) return `${line.split(':')[0]} (uid ${uid})`;
  } catch {
    // fall through
  }
  return `uid ${uid}`;
}

function fail(path: string, rule: string): never {
  throw new ConfigError(
    `config file ${path}: ${rule}`,
    'Fix the file. To run without the config files, give --url or AGENTQ_URL (and no --context): they are then not needed.',
  );
}

/**
 * The text of a regular file of at most `max` bytes. Opened non-blocking and checked with fstat
 * before reading, so a FIFO (which would block in open or read) or a device such as /dev/zero
 * (which never ends) is refused at once instead of hanging or eating memory.
 */
function readSmallFile(path: string, max: number): string {
  const fd = openSync(path, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('is not a regular file'), { code: 'ENOTREG' });
    if (st.size > max) throw Object.assign(new Error(`is larger than ${max} bytes`), { code: 'ETOOBIG' });
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > max) throw Object.assign(new Error(`is larger than ${max} bytes`), { code: 'ETOOBIG' });
      if (n === buf.length) break;
    }
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads and checks one config file. Missing → null; unreadable, not a regular file, too large or malformed → ConfigError. */
export function readConfigFile(path: string): ConfigFile | null {
  let text: string;
  try {
    text = readSmallFile(path, MAX_CONFIG_BYTES);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return null;
    if (err.code === 'ENOTREG') fail(path, 'is not a regular file (config files are read only from regular files)');
    if (err.code === 'ETOOBIG') fail(path, `is larger than ${MAX_CONFIG_BYTES} bytes (the limit for a config file)`);
    if (err.code === 'EISDIR') fail(path, 'is a directory, not a file');
    fail(path, `cannot be read (${err.code ?? err.message})`);
  }
  return parseConfigText(path, text);
}

export function parseConfigText(path: string, text: string): ConfigFile {
  // A UTF-8 byte order mark (some Windows editors write one) is not JSON, but it is not an error either.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    fail(path, `is not valid JSON (${withLineAndColumn((e as Error).message, text)})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(path, 'must hold a JSON object');
  const o = ownFields(raw as Record<string, unknown>);
  const known = new Set(['currentContext', 'url', 'traceUrl', 'contexts', '$schema']);
  for (const k of o.keys()) if (!known.has(k)) fail(path, `unknown key ${JSON.stringify(k)} (known: currentContext, url, traceUrl, contexts)`);
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
    file.url = resolveFileUrl(topUrl, path);
  }
  const topTraceUrl = traceUrlSetting(o.get('traceUrl'), (rule) => fail(path, `traceUrl ${rule}`));
  if (topTraceUrl !== undefined) file.traceUrl = topTraceUrl;
  if (contexts !== undefined) {
    if (contexts === null || typeof contexts !== 'object' || Array.isArray(contexts)) fail(path, 'contexts must be an object of name → { url, readOnly, queue, fairness, admission, traceUrl }');
    for (const [name, v] of ownFields(contexts as Record<string, unknown>)) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(path, `context ${JSON.stringify(name)} must be an object`);
      const c = ownFields(v as Record<string, unknown>);
      for (const k of c.keys()) if (!CONTEXT_KEYS.includes(k)) fail(path, `context ${JSON.stringify(name)}: unknown key ${JSON.stringify(k)} (known: ${CONTEXT_KEYS.join(', ')})`);
      const url = c.get('url');
      const readOnly = c.get('readOnly');
      const queue = c.get('queue');
      if (url !== undefined && (typeof url !== 'string' || url === '')) fail(path, `context ${JSON.stringify(name)}: url must be a non-empty string`);
      if (readOnly !== undefined && typeof readOnly !== 'boolean') fail(path, `context ${JSON.stringify(name)}: readOnly must be true or false`);
      if (queue !== undefined && (typeof queue !== 'string' || queue === '')) fail(path, `context ${JSON.stringify(name)}: queue must be a non-empty string`);
      // Checked here, so a bad name fails naming this file, not later at submit without a word of where it came from.
      if (queue !== undefined && !NAME_RE.test(queue as string)) fail(path, `context ${JSON.stringify(name)}: queue ${JSON.stringify(queue)} ${NAME_RULE}`);
      const policy = (key: 'fairness' | 'admission'): Partial<Pick<ContextEntry, 'fairness' | 'admission'>> => {
        const v = c.get(key);
        if (v === undefined) return {};
        try {
          return { [key]: key === 'fairness' ? parseFairness(v) : parseAdmission(v) };
        } catch (e) {
          if (e instanceof PolicyRuleError) fail(path, `context ${JSON.stringify(name)}: ${e.message}`);
          throw e;
        }
      };
      const traceUrl = traceUrlSetting(c.get('traceUrl'), (rule) => fail(path, `context ${JSON.stringify(name)}: traceUrl ${rule}`));
      file.contexts.set(name, {
        ...(url !== undefined ? { url: resolveFileUrl(url as string, path) } : {}),
        ...(traceUrl !== undefined ? { traceUrl } : {}),
        ...(readOnly !== undefined ? { readOnly: readOnly as boolean } : {}),
        ...(queue !== undefined ? { queue: queue as string } : {}),
        ...policy('fairness'),
        ...policy('admission'),
      });
    }
  }
  return file;
}

/** A `traceUrl` value from a file: undefined when absent; a bad one goes to `bad` with the rule it breaks. */
function traceUrlSetting(v: unknown, bad: (rule: string) => never): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') bad('must be a non-empty string (a URL with {trace_id} in it)');
  const why = checkTraceUrlTemplate(v as string);
  if (why !== null) bad(why);
  return v as string;
}

/** JSON.parse's "... at position 70" with the line and column an editor shows (Node 20 gives only the position). */
function withLineAndColumn(message: string, text: string): string {
  const m = /at position (\d+)/.exec(message);
  if (!m || /line \d+/.test(message)) return message;
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${message.replace(/ in JSON at position \d+/, '')} at line ${line} column ${column}`;
}

/**
 * A relative `sqlite:` path in a file, made absolute against the file's directory (other URLs as
 * they are). `sqlite:~/x`, `sqlite:/abs`, `sqlite:///abs` and `sqlite::memory:` are not relative.
 */
export function resolveFileUrl(url: string, file: string): string {
  // An SQS URL's job store (`store=sqlite%3A.%2Fjobs.db`) is a path too: only that parameter's text changes.
  if (/^sqs:/i.test(url)) {
    return url.replace(/([?&]store=)([^&#]*)/i, (all, key: string, value: string) => {
      let store: string;
      try {
        store = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {
        return all; // parseSqsUrl reports it
      }
      const resolved = resolveFileUrl(store, file);
      return resolved === store ? all : `${key}${encodeURIComponent(resolved)}`;
    });
  }
  const m = /^sqlite:(.*)$/is.exec(url);
  if (!m) return url;
  let rest = m[1]!;
  if (rest === ':memory:' || rest === '') return url;
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest.startsWith('~/') || isAbsolute(rest)) return url;
  return `sqlite:${resolve(dirname(file), rest)}`;
}

/**
 * A parsed JSON object's own members as a Map. JSON.parse makes `"__proto__"` an own property,
 * but reading `o.url` or `o[name]` would still fall through to Object.prototype for names like
 * `constructor` or `toString`: only own members count.
 */
function ownFields(o: Record<string, unknown>): Map<string, unknown> {
  return new Map(Object.keys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)!.value as unknown]));
}

/** As `resolveConfigLenient`, but an unknown selected context is a ConfigError (exit 78). */
export function resolveConfig(inputs: ConfigInputs): ResolvedConfig {
  const cfg = resolveConfigLenient(inputs);
  if (cfg.unknownContext) throw cfg.unknownContext;
  return cfg;
}

export function resolveConfigLenient({ flags, env, cwd }: ConfigInputs): ResolvedConfig {
  // `--url "$URL"` with the variable unset: said as such, not as "unsupported backend URL " (nothing after it).
  if (flags.url === '') {
    throw new ConfigError('--url is empty: give a backend URL', 'Use sqlite:PATH, redis://HOST:PORT or sqs://REGION/PREFIX, or leave --url out to use AGENTQ_URL, the context or the embedded default.');
  }
  const warnings: string[] = [];
  const envUrl = nonEmpty(env.AGENTQ_URL);
  const explicitUrl = flags.url !== undefined || envUrl !== undefined;
  const explicitContext = flags.context !== undefined || nonEmpty(env.AGENTQ_CONTEXT) !== undefined;
  // With --url / AGENTQ_URL and no explicit context the files decide nothing (no context is
  // selected, so no readOnly or queue applies either way): a broken file is then only a warning,
  // which is what makes "give --url" a real way out of a broken config file.
  const read = (path: string): ConfigFile | null => {
    try {
      return readConfigFile(path);
    } catch (e) {
      if (!(e instanceof ConfigError) || !explicitUrl || explicitContext) throw e;
      warnings.push(`${e.message}; ignored: ${flags.url !== undefined ? '--url' : 'AGENTQ_URL'} is given without a context`);
      return null;
    }
  };

  const userFilePath = userConfigPath(env);
  const userFile = read(userFilePath);
  const untrusted: string[] = [];
  const projectPath = findTrustedProjectFile(cwd, warnings, undefined, untrusted);
  const projectFile = projectPath ? read(projectPath) : null;

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
  // An untrusted project file chooses nothing, but what it marks read-only stays read-only: that can
  // only restrict, and a shared checkout owned by a deploy user that protects `prod` must keep doing so.
  for (const path of untrusted) {
    let f: ConfigFile | null;
    try {
      f = readConfigFile(path);
    } catch {
      continue; // unreadable or broken: already named in the warnings as ignored
    }
    for (const [name, c] of f?.contexts ?? []) {
      const entry = contexts.get(name);
      if (c.readOnly && entry && !entry.readOnly) contexts.set(name, { ...entry, readOnly: true, readOnlyFrom: path });
    }
  }

  let selected: { name: string; source: ContextSource } | null = null;
  if (flags.context !== undefined) selected = { name: flags.context, source: 'flag' };
  else if (nonEmpty(env.AGENTQ_CONTEXT) !== undefined) selected = { name: env.AGENTQ_CONTEXT!, source: 'env' };
  else if (!explicitUrl && projectFile?.currentContext) selected = { name: projectFile.currentContext, source: 'project' };
  else if (!explicitUrl && userFile?.currentContext) selected = { name: userFile.currentContext, source: 'user' };

  let context: ActiveContext | null = null;
  let unknownContext: ConfigError | undefined;
  if (selected) {
    const entry = contexts.get(selected.name);
    if (!entry) {
      const known = [...contexts.keys()];
      const where = selected.source === 'flag' ? '--context' : selected.source === 'env' ? 'AGENTQ_CONTEXT' : `currentContext in ${selected.source === 'project' ? projectFile!.path : userFile!.path}`;
      // The way out depends on where the name came from: `context use` changes only the file.
      // (`context use` writes the user file, whose currentContext a project file's overrides)
      const switchWith =
        selected.source === 'flag'
          ? 'Give --context one of them'
          : selected.source === 'env'
            ? 'Unset AGENTQ_CONTEXT or set it to one of them'
            : selected.source === 'project'
              ? `Fix "currentContext" in ${projectFile!.path}, or give --context NAME (\`agentq context use\` sets the user file's, which this project file's overrides).`
              : 'Switch with: agentq context use NAME';
      unknownContext = new ConfigError(
        `unknown context ${JSON.stringify(selected.name)} (from ${where})`,
        known.length ? `Known contexts: ${known.join(', ')}. ${switchWith}` : `No contexts are defined; add one to ${userFilePath}.`,
      );
    } else {
      const { file, ...rest } = entry;
      context = { name: selected.name, source: selected.source, file, ...rest };
    }
  }

  let url: string | null = null;
  let urlSource: UrlSource = 'default';
  if (flags.url !== undefined) [url, urlSource] = [flags.url, 'flag'];
  else if (envUrl !== undefined) [url, urlSource] = [envUrl, 'env'];
  else if (context?.url) [url, urlSource] = [context.url, 'context'];
  else if (projectFile?.url) [url, urlSource] = [projectFile.url, 'project'];
  else if (userFile?.url) [url, urlSource] = [userFile.url, 'user'];

  const envTraceUrl = nonEmpty(env.AGENTQ_TRACE_URL);
  let traceUrl: string | null = null;
  let traceUrlSource: TraceUrlSource | null = null;
  if (envTraceUrl !== undefined) {
    const why = checkTraceUrlTemplate(envTraceUrl);
    if (why !== null) throw new ConfigError(`AGENTQ_TRACE_URL ${why}`, 'Fix or unset AGENTQ_TRACE_URL (such as https://grafana.example/explore?traceId={trace_id}).');
    [traceUrl, traceUrlSource] = [envTraceUrl, 'env'];
  } else if (context?.traceUrl) [traceUrl, traceUrlSource] = [context.traceUrl, 'context'];
  else if (projectFile?.traceUrl) [traceUrl, traceUrlSource] = [projectFile.traceUrl, 'project'];
  else if (userFile?.traceUrl) [traceUrl, traceUrlSource] = [userFile.traceUrl, 'user'];

  return { url, urlSource, traceUrl, traceUrlSource, context, contexts, projectFile, userFile, userFilePath, warnings, ...(unknownContext ? { unknownContext } : {}) };
}

/**
 * The nearest project file from `cwd` upward that may be trusted (see the header). Untrusted
 * ones are skipped (the search goes on upward) and two files in one directory noted, in `warnings`.
 */
export function findTrustedProjectFile(cwd: string, warnings: string[], uid: number | undefined = process.getuid?.(), skipped: string[] = []): string | null {
  const shadowed = (used: string, others: string[]): void => {
    warnings.push(`${others.join(' and ')} ignored: ${used} in the same directory is used (keep one project file per directory)`);
  };
  for (const path of projectCandidates(cwd, shadowed)) {
    const st = statOrNull(path);
    if (!st) continue;
    const why = untrustedBecause(path, st, uid);
    if (why === null) return path;
    skipped.push(path);
    const fix = why.startsWith('its directory') ? `chmod o-w ${dirname(path)}, or move the file to a directory only you can write` : 'chown it to yourself, or remove it';
    warnings.push(`project file ${path} ignored: ${why} (${fix})`);
  }
  return null;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/**
 * Sets `currentContext` in the user file, keeping everything else in it. Written atomically
 * (a file aside, then rename) next to the real file: a symlinked config file (dotfiles
 * managers do that) stays a symlink and the file it points at is the one changed.
 * Any failure is a ConfigError naming the file, never an internal error.
 */
export function writeCurrentContext(userFilePath: string, name: string): void {
  let target = userFilePath;
  try {
    target = realpathSync(userFilePath);
  } catch {
    // does not exist yet (or a dangling link: written where the link is)
  }
  let raw: Record<string, unknown> = {};
  let text: string | null = null;
  // A new file is the owner's alone (contexts may hold credentials); an existing one keeps its mode.
  let mode = 0o600;
  try {
    mode = statSync(target).mode & 0o777;
    text = readSmallFile(target, MAX_CONFIG_BYTES);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') fail(userFilePath, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (text !== null) {
    parseConfigText(userFilePath, text); // a broken file is reported, not overwritten
    raw = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as Record<string, unknown>;
  }
  raw.currentContext = name;
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(target), { recursive: true });
    // flushed before the rename: a crash then leaves the old file or the new one, never an empty one
    const fd = openSync(tmp, 'w', mode);
    try {
      writeFileSync(fd, JSON.stringify(raw, null, 2) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, mode); // the umask may have taken bits off
    renameSync(tmp, target);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // never written
    }
    throw new ConfigError(
      `cannot write the user config file ${userFilePath}${target !== userFilePath ? ` (→ ${target})` : ''}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      `Check the permissions of ${dirname(target)}, or select the context per command with --context or AGENTQ_CONTEXT.`,
    );
  }
}
