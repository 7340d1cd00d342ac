import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { findProjectFile, resolveConfig, writeCurrentContext } from '../../src/cli/config.js';

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
