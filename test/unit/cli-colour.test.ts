import { describe, expect, it } from 'vitest';
import { parseColourWhen, resolveColourLevel } from '../../src/cli/output/colour.js';
import { normaliseArgv } from '../../src/cli/main.js';

describe('colour decision (DESIGN 3.3)', () => {
  it.each([
    // when, env, isTTY, level
    ['auto', {}, true, 1],
    ['auto', {}, false, 0],
    ['auto', { NO_COLOR: '1' }, true, 0],
    ['auto', { NO_COLOR: '' }, true, 1], // empty NO_COLOR does not count (no-color.org)
    ['auto', { FORCE_COLOR: '1' }, false, 1],
    ['auto', { FORCE_COLOR: '0' }, true, 0],
    ['auto', { FORCE_COLOR: '3' }, false, 3],
    ['auto', { NO_COLOR: '1', FORCE_COLOR: '1' }, false, 1], // FORCE_COLOR wins over NO_COLOR, as in Node
    ['auto', { TERM: 'dumb' }, true, 0],
    ['auto', { TERM: 'xterm-256color' }, true, 2],
    ['auto', { COLORTERM: 'truecolor' }, true, 3],
    ['always', { NO_COLOR: '1' }, false, 1], // an explicit flag beats the environment
    ['always', { TERM: 'dumb' }, false, 1],
    ['never', { FORCE_COLOR: '3' }, true, 0],
  ] as const)('--color %s with %j on a %s terminal → level %i', (when, env, isTTY, level) => {
    expect(resolveColourLevel({ when, env: { ...env }, isTTY })).toBe(level);
  });

  it('reads flag values', () => {
    expect(parseColourWhen(undefined)).toBe('auto');
    expect(parseColourWhen(true)).toBe('always');
    expect(parseColourWhen('never')).toBe('never');
    expect(parseColourWhen('false')).toBe('never');
  });
});

describe('argv normalisation (commander must never take a command name as the colour)', () => {
  it.each([
    [['--color', 'list'], ['--color=always', 'list']],
    [['--color', 'never', 'list'], ['--color=never', 'list']],
    [['list', '--no-color'], ['list', '--color=never']],
    [['--color=auto', 'list'], ['--color=auto', 'list']],
    [['worker', '--', 'cmd', '--color', 'x'], ['worker', '--', 'cmd', '--color', 'x']],
    // regression: a mistyped colour before the command is the colour (commander then names the valid ones), not the command
    [['--color', 'sometimes', 'list'], ['--color=sometimes', 'list']],
    [['--url', 'sqlite:x.db', '--color', 'ls'], ['--url', 'sqlite:x.db', '--color=always', 'ls']],
    // after the command word, the next word may be its argument
    [['inspect', '--color', 'job_01JD3K0000000000000000000A'], ['inspect', '--color=always', 'job_01JD3K0000000000000000000A']],
  ])('%j → %j', (input, expected) => {
    expect(normaliseArgv(input)).toEqual(expected);
  });
});
