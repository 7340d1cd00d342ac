import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { findProjectFile, findTrustedProjectFile, resolveConfig, resolveConfigLenient, userConfigPath, writeCurrentContext } from '../../src/cli/config.js';

let root: string;
let env: Record<string, string | undefined>;
let project: string;

const write = (path: string, value: unknown) => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
};
const userFile = () => join(root, 'config', 'agentq', 'config.json');

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'agentq-config-'));
  env = { XDG_CONFIG_HOME: join(root, 'config'), HOME: root };
  project = join(root, 'work', 'repo', 'sub', 'dir');
  mkdirSync(project, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('configuration precedence: flag > env > context/project > user > default', () => {
  it('uses the embedded default when nothing is configured', () => {
    const c = resolveConfig({ flags: {}, env, cwd: project });
    expect(c.url).toBeNull();
    expect(c.urlSource).toBe('default');
    expect(c.context).toBeNull();
  });

  it('walks each level', () => {
    write(userFile(), { url: 'sqlite:/user.db' });
    expect(resolveConfig({ flags: {}, env, cwd: project })).toMatchObject({ url: 'sqlite:/user.db', urlSource: 'user' });
    write(join(root, 'work', 'repo', '.agentq.json'), { url: 'sqlite:/project.db' });
    expect(resolveConfig({ flags: {}, env, cwd: project })).toMatchObject({ url: 'sqlite:/project.db', urlSource: 'project' });
    env.AGENTQ_URL = 'sqlite:/env.db';
    expect(resolveConfig({ flags: {}, env, cwd: project })).toMatchObject({ url: 'sqlite:/env.db', urlSource: 'env' });
    expect(resolveConfig({ flags: { url: 'sqlite:/flag.db' }, env, cwd: project })).toMatchObject({ url: 'sqlite:/flag.db', urlSource: 'flag' });
  });

  it('takes the current context from the project file over the user file, and --context over both', () => {
    write(userFile(), { currentContext: 'a', contexts: { a: { url: 'sqlite:/a.db' }, b: { url: 'sqlite:/b.db', queue: 'research' } } });
    expect(resolveConfig({ flags: {}, env, cwd: project }).context?.name).toBe('a');
    write(join(root, 'work', 'agentq.config.json'), { currentContext: 'b' });
    const c = resolveConfig({ flags: {}, env, cwd: project });
    expect(c).toMatchObject({ url: 'sqlite:/b.db', urlSource: 'context', context: { name: 'b', source: 'project', queue: 'research' } });
    expect(resolveConfig({ flags: { context: 'a' }, env, cwd: project })).toMatchObject({ url: 'sqlite:/a.db', context: { name: 'a', source: 'flag' } });
    env.AGENTQ_CONTEXT = 'a';
    expect(resolveConfig({ flags: {}, env, cwd: project }).context).toMatchObject({ name: 'a', source: 'env' });
  });

  it('an explicit --url or AGENTQ_URL without --context means no context', () => {
    write(userFile(), { currentContext: 'prod', contexts: { prod: { url: 'sqlite:/prod.db', readOnly: true } } });
    expect(resolveConfig({ flags: { url: 'sqlite:/mine.db' }, env, cwd: project }).context).toBeNull();
    expect(resolveConfig({ flags: {}, env: { ...env, AGENTQ_URL: 'sqlite:/mine.db' }, cwd: project }).context).toBeNull();
    // ... but an explicit context keeps its read-only guard even with another URL.
    const c = resolveConfig({ flags: { url: 'sqlite:/mine.db', context: 'prod' }, env, cwd: project });
    expect(c).toMatchObject({ url: 'sqlite:/mine.db', urlSource: 'flag', context: { name: 'prod', readOnly: true } });
  });

  it('project contexts override user contexts of the same name', () => {
    write(userFile(), { contexts: { x: { url: 'sqlite:/user-x.db' } } });
    write(join(project, '.agentq.json'), { contexts: { x: { url: 'sqlite:/project-x.db' } } });
    expect(resolveConfig({ flags: { context: 'x' }, env, cwd: project }).url).toBe('sqlite:/project-x.db');
  });

  it("a project file cannot make a user's read-only context writable (it can make one read-only)", () => {
    write(userFile(), { contexts: { prod: { url: 'sqlite:/prod.db', readOnly: true }, dev: { url: 'sqlite:/dev.db' } } });
    write(join(project, '.agentq.json'), { contexts: { prod: { url: 'sqlite:/prod.db' }, dev: { url: 'sqlite:/dev.db', readOnly: true } } });
    const prod = resolveConfig({ flags: { context: 'prod' }, env, cwd: project });
    // the entry is the project's; the refusal names the file where readOnly is set
    expect(prod.context).toMatchObject({ name: 'prod', readOnly: true, file: join(project, '.agentq.json'), readOnlyFrom: userFile() });
    expect(prod.contexts.get("prod")).toMatchObject({ readOnly: true });
    expect(resolveConfig({ flags: { context: 'dev' }, env, cwd: project }).context).toMatchObject({ name: 'dev', readOnly: true, file: join(project, '.agentq.json') });
  });
});

describe('context names that are also Object.prototype members', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

  it.each(NAMES)('a context named %s is a context like any other: its url and readOnly apply', (name) => {
    // Written as text: JSON.stringify({ __proto__: ... }) would not write the key.
    write(userFile(), `{ "currentContext": ${JSON.stringify(name)}, "contexts": { ${JSON.stringify(name)}: { "url": "sqlite:/${name}.db", "readOnly": true, "queue": "q1" } } }`);
    for (const c of [resolveConfig({ flags: {}, env, cwd: project }), resolveConfig({ flags: { context: name }, env, cwd: project })]) {
      expect(c).toMatchObject({ url: `sqlite:/${name}.db`, urlSource: 'context', context: { name, readOnly: true, queue: 'q1' } });
    }
    expect([...resolveConfig({ flags: {}, env, cwd: project }).contexts.keys()]).toEqual([name]);
  });

  it.each(NAMES)('%s is not a known context when no file defines it', (name) => {
    write(userFile(), { contexts: { dev: {} } });
    expect(() => resolveConfig({ flags: { context: name }, env, cwd: project })).toThrowError(/unknown context/);
    expect(() => resolveConfig({ flags: {}, env: { ...env, AGENTQ_CONTEXT: name }, cwd: project })).toThrowError(/unknown context/);
  });

  it('a user read-only __proto__ context stays read-only under a project entry of the same name', () => {
    write(userFile(), '{ "contexts": { "__proto__": { "url": "sqlite:/p.db", "readOnly": true } } }');
    write(join(project, '.agentq.json'), '{ "contexts": { "__proto__": { "url": "sqlite:/p.db" } } }');
    expect(resolveConfig({ flags: { context: '__proto__' }, env, cwd: project }).context).toMatchObject({ readOnly: true, readOnlyFrom: userFile() });
  });
});

describe('configuration errors are ConfigError (exit 78) and say where', () => {
  it.each([
    ['not JSON', '{ nope', /is not valid JSON/],
    ['an array', '[]', /must hold a JSON object/],
    ['an unknown key', { curentContext: 'a' }, /unknown key "curentContext"/],
    ['a bad context', { contexts: { a: { url: 5 } } }, /context "a": url must be a non-empty string/],
    ['a bad readOnly', { contexts: { a: { readOnly: 'yes' } } }, /readOnly must be true or false/],
  ])('a user file with %s', (_what, content, message) => {
    write(userFile(), content);
    const err = (() => {
      try {
        resolveConfig({ flags: {}, env, cwd: project });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(78);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain(userFile());
  });

  it('an unknown context names the known ones', () => {
    write(userFile(), { contexts: { dev: {}, prod: {} } });
    expect(() => resolveConfig({ flags: { context: 'stagin' }, env, cwd: project })).toThrowError(ConfigError);
    try {
      resolveConfig({ flags: { context: 'stagin' }, env, cwd: project });
    } catch (e) {
      expect((e as ConfigError).message).toContain('"stagin"');
      expect((e as ConfigError).hint).toContain('dev, prod');
    }
  });

  // Regression: the hint said "Switch with: agentq context use NAME", which writes the user file:
  // the project file's currentContext still wins there, so the error stayed.
  it("an unknown currentContext in the project file points at that file, not at `context use`", () => {
    write(userFile(), { contexts: { dev: {} } });
    const projectFile = join(root, 'work', '.agentq.json');
    write(projectFile, { currentContext: 'gone' });
    const err = resolveConfigLenient({ flags: {}, env, cwd: project }).unknownContext!;
    expect(err.message).toBe(`unknown context "gone" (from currentContext in ${projectFile})`);
    expect(err.hint).toBe(`Known contexts: dev. Fix "currentContext" in ${projectFile}, or give --context NAME (\`agentq context use\` sets the user file's, which this project file's overrides).`);
    // The user file's own stale currentContext is mended by `context use`.
    write(projectFile, {});
    write(userFile(), { currentContext: 'gone', contexts: { dev: {} } });
    expect(resolveConfigLenient({ flags: {}, env, cwd: project }).unknownContext!.hint).toBe('Known contexts: dev. Switch with: agentq context use NAME');
  });
});

describe('files', () => {
  it('finds the nearest project file upward', () => {
    expect(findProjectFile(project)).toBeNull();
    write(join(root, 'work', '.agentq.json'), {});
    expect(findProjectFile(project)).toBe(join(root, 'work', '.agentq.json'));
    write(join(root, 'work', 'repo', 'agentq.config.json'), {});
    expect(findProjectFile(project)).toBe(join(root, 'work', 'repo', 'agentq.config.json'));
  });

  it('context use writes currentContext and keeps the rest of the file', () => {
    write(userFile(), { contexts: { a: { url: 'sqlite:/a.db' } } });
    writeCurrentContext(userFile(), 'a');
    expect(JSON.parse(readFileSync(userFile(), 'utf8'))).toEqual({ contexts: { a: { url: 'sqlite:/a.db' } }, currentContext: 'a' });
    const fresh = join(root, 'new', 'agentq', 'config.json');
    writeCurrentContext(fresh, 'b');
    expect(JSON.parse(readFileSync(fresh, 'utf8'))).toEqual({ currentContext: 'b' });
  });
});

const errorOf = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
};

describe('project files another user could have written are ignored (git safe.directory)', () => {
  it('in a world-writable directory without the sticky bit: ignored with a warning, the user file applies', () => {
    write(userFile(), { currentContext: 'mine', contexts: { mine: { url: 'sqlite:/mine.db' } } });
    const shared = join(root, 'shared');
    mkdirSync(join(shared, 'sub'), { recursive: true });
    write(join(shared, '.agentq.json'), { currentContext: 'theirs', contexts: { theirs: { url: 'sqlite:/theirs.db' } } });
    chmodSync(shared, 0o777);
    const c = resolveConfigLenient({ flags: {}, env, cwd: join(shared, 'sub') });
    expect(c).toMatchObject({ url: 'sqlite:/mine.db', projectFile: null, context: { name: 'mine' } });
    expect(c.warnings!.join('\n')).toContain(`project file ${join(shared, '.agentq.json')} ignored: its directory ${shared} is world-writable`);
    // The way out it names is the directory's, not the file's owner (the file is already ours).
    expect(c.warnings!.join('\n')).toContain(`(chmod o-w ${shared}, or move the file to a directory only you can write)`);
    // What it marks read-only stays read-only: ignoring a file must never make a context writable.
    write(userFile(), { currentContext: 'mine', contexts: { mine: { url: 'sqlite:/mine.db' }, prod: { url: 'sqlite:/prod.db' } } });
    write(join(shared, '.agentq.json'), { currentContext: 'theirs', contexts: { theirs: { url: 'sqlite:/theirs.db' }, prod: { url: 'sqlite:/x.db', readOnly: true } } });
    const guarded = resolveConfigLenient({ flags: { context: 'prod' }, env, cwd: join(shared, 'sub') });
    expect(guarded.context).toMatchObject({ name: 'prod', url: 'sqlite:/prod.db', readOnly: true, readOnlyFrom: join(shared, '.agentq.json') });
    // sticky (like /tmp) and ours: trusted
    write(join(shared, '.agentq.json'), { currentContext: 'theirs', contexts: { theirs: { url: 'sqlite:/theirs.db' } } });
    chmodSync(shared, 0o1777);
    expect(resolveConfigLenient({ flags: {}, env, cwd: join(shared, 'sub') })).toMatchObject({ url: 'sqlite:/theirs.db', warnings: [] });
  });

  it('owned by another user: ignored with a warning naming the owner, and the search goes on upward', () => {
    const outer = join(root, 'work', '.agentq.json');
    const inner = join(root, 'work', 'repo', '.agentq.json');
    write(outer, { url: 'sqlite:/outer.db' });
    write(inner, { url: 'sqlite:/inner.db' });
    const me = process.getuid!();
    let uid = me;
    if (me === 0) chownSync(inner, 65534, 65534); // as root (CI): a real file of nobody's
    else {
      uid = me + 1; // not root: we cannot chown, so look at our files as another user would
      chownSync(outer, me, -1);
    }
    const warnings: string[] = [];
    const found = findTrustedProjectFile(project, warnings, uid);
    if (me === 0) {
      expect(found).toBe(outer);
      expect(warnings).toEqual([expect.stringMatching(new RegExp(`^project file ${inner} ignored: it is owned by .*uid 65534.*, not by you`))]);
      expect(resolveConfigLenient({ flags: {}, env, cwd: project }).url).toBe('sqlite:/outer.db');
    } else {
      expect(found).toBeNull();
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(new RegExp(`^project file ${inner} ignored: it is owned by .*uid ${me}`));
    }
  });

  it("another user's symlink to one of our files is not trusted either", () => {
    const ours = join(root, 'ours.json');
    write(ours, { url: 'sqlite:/ours.db' });
    const link = join(project, '.agentq.json');
    symlinkSync(ours, link);
    const me = process.getuid!();
    if (me === 0) lchownSync(link, 65534, 65534);
    const warnings: string[] = [];
    // not root: look at our link as another user would (the target then is not theirs either: also refused)
    expect(findTrustedProjectFile(project, warnings, me === 0 ? 0 : me + 1)).toBeNull();
    expect(warnings[0]).toMatch(new RegExp(`^project file ${link} ignored: it is (a symlink )?owned by`));
  });
});

describe('relative sqlite: paths in a config file', () => {
  it('resolve against the file, from any subdirectory; on the command line against the cwd', () => {
    const repo = join(root, 'work', 'repo');
    write(join(repo, '.agentq.json'), { url: 'sqlite:./agentq.db', contexts: { local: { url: 'sqlite:data/q.db' }, mem: { url: 'sqlite::memory:' }, abs: { url: 'sqlite:/abs.db' }, home: { url: 'sqlite:~/h.db' } } });
    expect(resolveConfig({ flags: {}, env, cwd: project }).url).toBe(`sqlite:${join(repo, 'agentq.db')}`);
    expect(resolveConfig({ flags: {}, env, cwd: repo }).url).toBe(`sqlite:${join(repo, 'agentq.db')}`);
    expect(resolveConfig({ flags: { context: 'local' }, env, cwd: project }).url).toBe(`sqlite:${join(repo, 'data', 'q.db')}`);
    expect(resolveConfig({ flags: { context: 'mem' }, env, cwd: project }).url).toBe('sqlite::memory:');
    expect(resolveConfig({ flags: { context: 'abs' }, env, cwd: project }).url).toBe('sqlite:/abs.db');
    expect(resolveConfig({ flags: { context: 'home' }, env, cwd: project }).url).toBe('sqlite:~/h.db');
    expect(resolveConfig({ flags: { url: 'sqlite:./x.db' }, env, cwd: project }).url).toBe('sqlite:./x.db');
    // an SQS URL's SQLite job store is a path as well (only store= changes)
    write(join(repo, '.agentq.json'), { contexts: { sqs: { url: 'sqs://eu-west-1/p?endpoint=http%3A%2F%2F127.0.0.1%3A4566&store=sqlite%3Ajobs.db&wait=1' }, sqsabs: { url: 'sqs://eu-west-1/p?store=sqlite%3A%2Fj.db' } } });
    expect(resolveConfig({ flags: { context: 'sqs' }, env, cwd: project }).url).toBe(`sqs://eu-west-1/p?endpoint=http%3A%2F%2F127.0.0.1%3A4566&store=${encodeURIComponent(`sqlite:${join(repo, 'jobs.db')}`)}&wait=1`);
    expect(resolveConfig({ flags: { context: 'sqsabs' }, env, cwd: project }).url).toBe('sqs://eu-west-1/p?store=sqlite%3A%2Fj.db');
    expect(resolveConfig({ flags: {}, env: { ...env, AGENTQ_URL: 'sqlite:./x.db' }, cwd: project }).url).toBe('sqlite:./x.db');
    write(userFile(), { url: 'sqlite:user.db' });
    rmSync(join(repo, '.agentq.json'));
    expect(resolveConfig({ flags: {}, env, cwd: project }).url).toBe(`sqlite:${join(root, 'config', 'agentq', 'user.db')}`);
  });
});

describe('reading config files', () => {
  it('a FIFO or a device in place of a config file is refused at once, naming it', () => {
    mkdirSync(join(root, 'config', 'agentq'), { recursive: true });
    execFileSync('mkfifo', [userFile()]);
    const fifo = errorOf(() => resolveConfig({ flags: {}, env, cwd: project }));
    expect(fifo).toBeInstanceOf(ConfigError);
    expect(fifo.message).toBe(`config file ${userFile()}: is not a regular file (config files are read only from regular files)`);
    rmSync(userFile());
    symlinkSync('/dev/zero', userFile());
    expect(errorOf(() => resolveConfig({ flags: {}, env, cwd: project })).message).toContain('is not a regular file');
  });

  it('a file over 1 MiB is refused', () => {
    write(userFile(), `{ "url": "sqlite:/x.db", "contexts": {} ${' '.repeat(1024 * 1024)}}`);
    expect(errorOf(() => resolveConfig({ flags: {}, env, cwd: project })).message).toContain('is larger than 1048576 bytes');
  });

  it('a UTF-8 byte order mark is accepted', () => {
    write(userFile(), '\ufeff{ "url": "sqlite:/bom.db" }');
    expect(resolveConfig({ flags: {}, env, cwd: project }).url).toBe('sqlite:/bom.db');
  });

  it('a JSON error gives the line and column', () => {
    write(userFile(), '{\n  "contexts": {\n    "a": { "url": "sqlite:/a.db" },\n  }\n}');
    expect(errorOf(() => resolveConfig({ flags: {}, env, cwd: project })).message).toMatch(/is not valid JSON \(.* at line 4 column 3\)/);
  });

  it('two project files in one directory: the first is used, the other named in a warning', () => {
    write(join(project, '.agentq.json'), {});
    write(join(project, 'agentq.config.json'), { url: 'sqlite:/other.db' });
    const c = resolveConfigLenient({ flags: {}, env, cwd: project });
    expect(c.projectFile?.path).toBe(join(project, '.agentq.json'));
    expect(c.warnings).toEqual([`${join(project, 'agentq.config.json')} ignored: ${join(project, '.agentq.json')} in the same directory is used (keep one project file per directory)`]);
  });

  it("a context's queue must be a valid queue name, checked at load", () => {
    write(userFile(), { contexts: { a: { queue: 'bad\u0007name' } } });
    const e = errorOf(() => resolveConfig({ flags: {}, env, cwd: project }));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain(userFile());
    expect(e.message).toContain('context "a": queue "bad\\u0007name" must be 1-128 characters');
  });
});

describe('a broken config file with --url / AGENTQ_URL', () => {
  it('is only a warning when no context is asked for (the file decides nothing then)', () => {
    write(userFile(), '{ "contexts": ');
    const c = resolveConfigLenient({ flags: { url: 'sqlite:/x.db' }, env, cwd: project });
    expect(c.url).toBe('sqlite:/x.db');
    expect(c.warnings![0]).toMatch(new RegExp(`config file ${userFile()}: is not valid JSON .*; ignored: --url is given without a context`));
    expect(resolveConfigLenient({ flags: {}, env: { ...env, AGENTQ_URL: 'sqlite:/x.db' }, cwd: project }).warnings![0]).toContain('ignored: AGENTQ_URL is given');
    // with a context, the file is needed (its readOnly): still an error
    expect(errorOf(() => resolveConfig({ flags: { url: 'sqlite:/x.db', context: 'prod' }, env, cwd: project }))).toBeInstanceOf(ConfigError);
    expect(errorOf(() => resolveConfig({ flags: { url: 'sqlite:/x.db' }, env: { ...env, AGENTQ_CONTEXT: 'prod' }, cwd: project }))).toBeInstanceOf(ConfigError);
    expect((errorOf(() => resolveConfig({ flags: {}, env, cwd: project })) as ConfigError).hint).toContain('give --url or AGENTQ_URL (and no --context)');
  });
});

describe('context use writes the user file', () => {
  it('through a symlink: the link stays, the file it points at changes', () => {
    const real = join(root, 'dotfiles', 'agentq.json');
    write(real, { contexts: { a: {} } });
    mkdirSync(join(root, 'config', 'agentq'), { recursive: true });
    symlinkSync(real, userFile());
    writeCurrentContext(userFile(), 'a');
    expect(lstatSync(userFile()).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(real, 'utf8'))).toEqual({ contexts: { a: {} }, currentContext: 'a' });
  });

  it('a file that cannot be written is a ConfigError naming it, not an internal error', () => {
    const blocked = join(root, 'blocked');
    writeFileSync(blocked, 'a file where a directory should be');
    const e = errorOf(() => writeCurrentContext(join(blocked, 'agentq', 'config.json'), 'a'));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(new RegExp(`^cannot write the user config file ${join(blocked, 'agentq', 'config.json')}: E`));
    if (process.getuid!() !== 0) {
      // (root writes anywhere: a read-only directory only stops other users)
      write(userFile(), { contexts: { a: {} } });
      chmodSync(join(root, 'config', 'agentq'), 0o500);
      try {
        expect(errorOf(() => writeCurrentContext(userFile(), 'a')).message).toContain('EACCES');
      } finally {
        chmodSync(join(root, 'config', 'agentq'), 0o700);
      }
    }
  });

  it('a broken user file is reported, not overwritten', () => {
    write(userFile(), '{ broken');
    expect(errorOf(() => writeCurrentContext(userFile(), 'a'))).toBeInstanceOf(ConfigError);
    expect(readFileSync(userFile(), 'utf8')).toBe('{ broken');
  });
});

describe('traceUrl: the link from a job to its trace', () => {
  const grafana = 'https://grafana.example/explore?traceId={trace_id}';
  const jaeger = 'http://jaeger.internal:16686/trace/{trace_id}';
  const resolved = (e = env, flags: { url?: string; context?: string } = {}) => {
    const c = resolveConfig({ flags, env: e, cwd: project });
    return { traceUrl: c.traceUrl, traceUrlSource: c.traceUrlSource };
  };

  it('is none when nothing sets it', () => {
    expect(resolved()).toEqual({ traceUrl: null, traceUrlSource: null });
  });

  it('AGENTQ_TRACE_URL > the selected context > the project file > the user file', () => {
    write(userFile(), { traceUrl: 'https://user.example/{trace_id}', contexts: { prod: { url: 'sqlite:/p.db', traceUrl: grafana }, dev: {} } });
    expect(resolved()).toEqual({ traceUrl: 'https://user.example/{trace_id}', traceUrlSource: 'user' });
    write(join(root, 'work', 'repo', '.agentq.json'), { traceUrl: jaeger });
    expect(resolved()).toEqual({ traceUrl: jaeger, traceUrlSource: 'project' });
    expect(resolved(env, { context: 'prod' })).toEqual({ traceUrl: grafana, traceUrlSource: 'context' });
    // a context without one falls back to the files' top-level setting
    expect(resolved(env, { context: 'dev' })).toEqual({ traceUrl: jaeger, traceUrlSource: 'project' });
    const fromEnv = 'https://app.datadoghq.com/apm/trace/{trace_id}';
    expect(resolved({ ...env, AGENTQ_TRACE_URL: fromEnv }, { context: 'prod' })).toEqual({ traceUrl: fromEnv, traceUrlSource: 'env' });
    // empty is unset, as for AGENTQ_URL
    expect(resolved({ ...env, AGENTQ_TRACE_URL: '' }, { context: 'prod' })).toEqual({ traceUrl: grafana, traceUrlSource: 'context' });
    // --url without a context: no context, but the files' top-level setting still applies
    expect(resolved(env, { url: 'sqlite:/x.db' })).toEqual({ traceUrl: jaeger, traceUrlSource: 'project' });
  });

  it('a bad template in a file is exit 78 naming the file, the setting and the rule', () => {
    write(userFile(), { traceUrl: 'https://grafana.example/explore' });
    let e = errorOf(() => resolveConfig({ flags: {}, env, cwd: project })) as ConfigError;
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.exitCode).toBe(78);
    expect(e.message).toBe(`config file ${userFile()}: traceUrl must contain {trace_id}, where the trace id goes (got "https://grafana.example/explore")`);
    write(userFile(), { contexts: { prod: { traceUrl: 'javascript:alert({trace_id})' } } });
    e = errorOf(() => resolveConfig({ flags: {}, env, cwd: project })) as ConfigError;
    expect(e.message).toBe(`config file ${userFile()}: context "prod": traceUrl must be an http:// or https:// URL (got "javascript:alert({trace_id})")`);
    write(userFile(), { traceUrl: 5 });
    expect(errorOf(() => resolveConfig({ flags: {}, env, cwd: project })).message).toContain('traceUrl must be a non-empty string');
  });

  it('a bad AGENTQ_TRACE_URL is exit 78 naming the variable and the rule', () => {
    const e = errorOf(() => resolveConfig({ flags: {}, env: { ...env, AGENTQ_TRACE_URL: 'ftp://traces/{trace_id}' }, cwd: project })) as ConfigError;
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.exitCode).toBe(78);
    expect(e.message).toBe('AGENTQ_TRACE_URL must be an http:// or https:// URL (got "ftp://traces/{trace_id}")');
    expect(e.hint).toContain('AGENTQ_TRACE_URL');
  });
});

// Regression: XDG_CONFIG_HOME=relcfg made the user file relcfg/agentq/config.json under the working
// directory, so a context set with `context use` applied in one directory and not in its
// subdirectories (the embedded store's XDG_DATA_HOME already ignored a relative path).
describe('the user config file path', () => {
  it('ignores a relative XDG_CONFIG_HOME, as the XDG spec says, and an empty HOME', () => {
    expect(userConfigPath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/u' })).toBe('/x/cfg/agentq/config.json');
    expect(userConfigPath({ XDG_CONFIG_HOME: 'relcfg', HOME: '/home/u' })).toBe('/home/u/.config/agentq/config.json');
    expect(userConfigPath({ XDG_CONFIG_HOME: './cfg', HOME: '/home/u' })).toBe('/home/u/.config/agentq/config.json');
    expect(userConfigPath({ XDG_CONFIG_HOME: '', HOME: '/home/u' })).toBe('/home/u/.config/agentq/config.json');
    const fallback = userConfigPath({ HOME: '' });
    expect(fallback.startsWith('/')).toBe(true);
    expect(fallback.endsWith('/.config/agentq/config.json')).toBe(true);
  });

  it('is the same file from every directory with a relative XDG_CONFIG_HOME', () => {
    write(join(root, '.config', 'agentq', 'config.json'), { currentContext: 'home', contexts: { home: { url: 'sqlite:/tmp/h.db' } } });
    write(join(project, 'relcfg', 'agentq', 'config.json'), { currentContext: 'rel', contexts: { rel: { url: 'sqlite:/tmp/r.db' } } });
    const relEnv = { XDG_CONFIG_HOME: 'relcfg', HOME: root };
    expect(resolveConfig({ flags: {}, env: relEnv, cwd: project }).context?.name).toBe('home');
    expect(resolveConfig({ flags: {}, env: relEnv, cwd: root }).context?.name).toBe('home');
  });
});
