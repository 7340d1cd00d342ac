/**
 * The script file a well-known interpreter is told to run, read from its arguments, for
 * `agentq worker -- node handler.js`, `-- python3 agent.py`, `-- ruby run.rb`, `-- deno run x.ts`,
 * `-- bun x.ts`. When the file is not there every job fails alike (node "Cannot find module",
 * python "can't open file": exit 1 or 2, which reads as the job's own failure), so the worker
 * checks it at start-up, as it checks a shell's script.
 *
 * Only what the arguments say for certain is judged. An option this reading does not know may
 * take the next word as its value, so both readings are kept: the file is called missing only
 * when every reading names a script and none of them is there. An option that moves where the
 * script is looked up (ruby -C/-S, bun --cwd), code given inline (-e, -c, -m) or from stdin, and
 * launchers that resolve names themselves (npx, uv, a package.json script) are not judged.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, resolve } from 'node:path';

/** How an option word reads: its value is the next word, there is no script file, or the reading stops. */
type OptionKind = 'flag' | 'valued' | 'noScript' | 'giveUp';

interface Syntax {
  /** How a long option (`--name`, without `=value`) reads; undefined when this reading does not know it. */
  long(name: string): OptionKind | undefined;
  /** How a short-option word (`-uB`, `-Wd`, `-r lib`) reads; undefined when unknown. */
  short(word: string): OptionKind | undefined;
  /** How the interpreter finds the file: the name exactly, or also with an extension added (node, bun). */
  lookup: 'exact' | 'withExtension';
  /** Only a word that looks like a file counts (bun and deno also run package scripts, tasks and URLs). */
  fileLike?: boolean;
}

/** What the interpreter's arguments name as its script: every candidate, all of which must be missing. */
export interface ScriptRef {
  candidates: string[];
  lookup: 'exact' | 'withExtension';
}

const set = (...words: string[]): ReadonlySet<string> => new Set(words);

/** Python's one-letter options (3.x): bundled as `-uB`, a value attached (`-Wd`) or next. */
function pythonShort(word: string): OptionKind | undefined {
  for (let i = 1; i < word.length; i++) {
    const c = word[i]!;
    if ('cm'.includes(c)) return 'noScript'; // -c CODE, -m MODULE: no script file
    if ('hV?'.includes(c)) return 'noScript';
    if ('WX'.includes(c)) return i === word.length - 1 ? 'valued' : 'flag';
    if (!'bBdEiIOPqsSuvxR'.includes(c)) return undefined;
  }
  return 'flag';
}

const PYTHON: Syntax = {
  long: (n) => (n === '--check-hash-based-pycs' ? 'valued' : set('--help', '--version', '--help-env', '--help-xoptions', '--help-all').has(n) ? 'noScript' : undefined),
  short: pythonShort,
  lookup: 'exact',
};

function rubyShort(word: string): OptionKind | undefined {
  for (let i = 1; i < word.length; i++) {
    const c = word[i]!;
    if ('eh'.includes(c)) return 'noScript';
    if ('CSx'.includes(c)) return 'giveUp'; // another directory, the PATH, or a script inside a file
    if ('rIE'.includes(c)) return i === word.length - 1 ? 'valued' : 'flag';
    if ('0FKTWi'.includes(c)) return 'flag'; // their values are attached only
    if (!'acdlnpsvwyU'.includes(c)) return undefined;
  }
  return 'flag';
}

const RUBY: Syntax = {
  long: (n) =>
    set('--help', '--version', '--copyright').has(n)
      ? 'noScript'
      : set('--enable', '--disable', '--encoding', '--external-encoding', '--internal-encoding', '--dump', '--backtrace-limit').has(n)
        ? 'valued'
        : set('--verbose', '--yydebug', '--jit', '--yjit', '--rjit').has(n) || /^--(enable|disable)-/.test(n)
          ? 'flag'
          : undefined,
  short: rubyShort,
  lookup: 'exact',
};

const NODE_VALUED = set(
  '--require', '--import', '--loader', '--experimental-loader', '--conditions', '--input-type', '--title', '--env-file',
  '--env-file-if-exists', '--disable-warning', '--watch-path', '--redirect-warnings', '--report-dir', '--report-directory',
  '--report-filename', '--report-signal', '--diagnostic-dir', '--heapsnapshot-signal', '--icu-data-dir', '--openssl-config',
  '--unhandled-rejections', '--dns-result-order', '--experimental-policy', '--experimental-config-file',
  '--experimental-default-type', '--experimental-specifier-resolution', '--heap-prof-dir', '--heap-prof-name',
  '--cpu-prof-dir', '--cpu-prof-name', '--localstorage-file', '--snapshot-blob', '--trace-event-categories',
  '--trace-event-file-pattern', '--secure-heap', '--secure-heap-min', '--tls-cipher-list', '--tls-keylog', '--inspect-port',
  '--debug-port', '--stack-trace-limit', '--max-http-header-size', '--test-reporter', '--test-reporter-destination',
);
const NODE_NO_SCRIPT = set('--eval', '--print', '--interactive', '--version', '--help', '--test', '--run', '--v8-options', '--completion-bash', '--experimental-sea-config', '--prof-process', '--build-snapshot');

/**
 * Node options known to take no value (one that takes an optional value takes it after `=`). Any
 * other is read both ways: a valued option read as a flag would make its value the script.
 */
const NODE_FLAG_RE = new RegExp(
  '^--(no-[a-z-]+|inspect|inspect-brk|inspect-wait|watch|watch-preserve-output|preserve-symlinks|preserve-symlinks-main|' +
    'enable-source-maps|enable-fips|force-fips|expose-gc|expose-internals|abort-on-uncaught-exception|frozen-intrinsics|' +
    'pending-deprecation|throw-deprecation|trace-warnings|trace-deprecation|trace-uncaught|trace-exit|trace-sigint|' +
    'trace-sync-io|trace-tls|report-on-signal|report-uncaught-exception|report-on-fatalerror|report-compact|jitless|prof|' +
    'cpu-prof|heap-prof|use-openssl-ca|use-bundled-ca|zero-fill-buffers|insecure-http-parser|permission|check|' +
    'experimental-(strip-types|transform-types|vm-modules|wasm-modules|import-meta-resolve|require-module|detect-module|' +
    'permission|sqlite|websocket|eventsource|network-inspection|shadow-realm|global-webcrypto|global-customevent|' +
    'test-coverage|test-module-mocks|test-snapshots|addon-modules|print-required-tla|json-modules))$',
);

const NODE: Syntax = {
  long: (n) =>
    NODE_VALUED.has(n)
      ? 'valued'
      : NODE_NO_SCRIPT.has(n)
        ? 'noScript'
        : NODE_FLAG_RE.test(n)
          ? 'flag'
          : undefined,
  short: (w) => (set('-r', '-C').has(w) ? 'valued' : set('-e', '-p', '-i', '-v', '-h', '-pe').has(w) ? 'noScript' : w === '-c' ? 'flag' : undefined),
  lookup: 'withExtension',
};

const DENO: Syntax = {
  long: (n) =>
    set('--config', '--import-map', '--lock', '--cert', '--location', '--seed', '--ext', '--log-level', '--preload').has(n)
      ? 'valued'
      : set('--help', '--version').has(n)
        ? 'noScript'
        : /^--(allow-[a-z-]+|deny-[a-z-]+|no-[a-z-]+|unstable(-[a-z-]+)?|reload|check|cached-only|quiet|watch|inspect|inspect-brk|inspect-wait|node-modules-dir|frozen|v8-flags)$/.test(n)
          ? 'flag'
          : undefined,
  short: (w) => (set('-c', '-L').has(w) ? 'valued' : set('-A', '-q', '-r', '-P').has(w) ? 'flag' : set('-h', '-V').has(w) ? 'noScript' : undefined),
  lookup: 'exact',
  fileLike: true,
};

const BUN: Syntax = {
  long: (n) =>
    set('--preload', '--env-file', '--tsconfig-override', '--define', '--loader', '--conditions', '--main-fields', '--extension-order', '--jsx-factory', '--jsx-fragment', '--jsx-import-source').has(n)
      ? 'valued'
      : n === '--cwd'
        ? 'giveUp'
        : set('--help', '--version', '--revision', '--eval', '--print').has(n)
          ? 'noScript'
          : set('--watch', '--hot', '--smol', '--bun', '--no-clear-screen', '--silent', '--no-install', '--prefer-offline', '--prefer-latest', '--no-macros', '--no-deprecation', '--throw-deprecation').has(n)
            ? 'flag'
            : undefined,
  short: (w) => (w === '-r' ? 'valued' : w === '-b' ? 'flag' : set('-e', '-p', '-h', '-v').has(w) ? 'noScript' : undefined),
  lookup: 'withExtension',
  fileLike: true,
};

/** Which syntax an interpreter's name says (its file name, with a version: python3.12, ruby3.3). */
function syntaxOf(command: string): Syntax | null {
  const name = basename(command);
  if (/^python(\d+(\.\d+)*)?$/.test(name)) return PYTHON;
  if (/^ruby(\d+(\.\d+)*)?$/.test(name)) return RUBY;
  if (name === 'node' || name === 'nodejs') return NODE;
  if (name === 'deno') return DENO;
  if (name === 'bun') return BUN;
  return null;
}

/** A path to a script file, not a URL (`https://…`, `npm:x`, `jsr:x`) or a package script name. */
function looksLikeFile(word: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:/i.test(word)) return false;
  return word.includes('/') || /\.(m|c)?(j|t)sx?$/.test(word);
}

/**
 * The script `command args` runs, when the command is a well-known interpreter and its arguments
 * name one for certain (see the module comment); null when there is none or it cannot be told.
 */
export function interpreterScript(command: string, args: readonly string[]): ScriptRef | null {
  const syntax = syntaxOf(command);
  if (syntax === null) return null;
  let words = [...args];
  const name = basename(command);
  // deno runs a file through `deno run` (or bare, from Deno 2); bun through `bun run` or bare
  if (name === 'deno' || name === 'bun') {
    const first = words.findIndex((w) => !w.startsWith('-'));
    if (first >= 0 && words[first] === 'run') words = words.slice(first + 1);
    else if (first < 0 || !looksLikeFile(words[first]!)) return null;
  }
  const candidates: string[] = [];
  let ambiguous = false; // the word before was an option this reading does not know
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-') return null; // the script from stdin
    if (w === '--') {
      const script = words[i + 1];
      if (script === undefined) return null;
      candidates.push(script);
      return finish(candidates, syntax);
    }
    if (w.startsWith('-')) {
      const [bare, value] = w.startsWith('--') ? splitLong(w) : [w, undefined];
      const kind = w.startsWith('--') ? syntax.long(bare) : syntax.short(w);
      if (kind === 'noScript' || kind === 'giveUp') return null;
      if (kind === 'valued' && value === undefined) {
        i++; // its value
        ambiguous = false;
        continue;
      }
      ambiguous = kind === undefined && value === undefined;
      continue;
    }
    // (`node inspect script.js` starts the debugger: a subcommand, not a file named inspect)
    if (syntax === NODE && w === 'inspect' && candidates.length === 0) return null;
    candidates.push(w);
    // An unknown option before: this word may be its value, and the script come later.
    if (!ambiguous) return finish(candidates, syntax);
    ambiguous = false;
  }
  // One reading ran out of words: no script (a REPL, stdin). Nothing can be said.
  return null;
}

function splitLong(w: string): [string, string | undefined] {
  const eq = w.indexOf('=');
  return eq < 0 ? [w, undefined] : [w.slice(0, eq), w.slice(eq + 1)];
}

function finish(candidates: string[], syntax: Syntax): ScriptRef | null {
  if (syntax.fileLike && !candidates.every(looksLikeFile)) return null;
  return { candidates, lookup: syntax.lookup };
}

/**
 * Whether the interpreter would find no script by any of the candidate names, relative to `cwd`.
 * With `withExtension` (node, bun), a name is found with an extension added or swapped too
 * (`handler` → handler.js; a loader such as tsx turns `x.js` into x.ts): only a name with nothing
 * by its stem is missing.
 */
export function scriptMissing(ref: ScriptRef, cwd: string): boolean {
  return ref.candidates.every((c) => !present(isAbsolute(c) ? c : resolve(cwd, c), ref.lookup));
}

function present(path: string, lookup: 'exact' | 'withExtension'): boolean {
  if (exists(path)) return true;
  if (lookup === 'exact') return false;
  const stems = new Set([basename(path), basename(path, extname(path))]);
  try {
    return readdirSync(dirname(path)).some((f) => [...stems].some((s) => f.startsWith(`${s}.`)));
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
