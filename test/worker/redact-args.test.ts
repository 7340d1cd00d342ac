import { describe, expect, it } from 'vitest';
import { redactArgs, shownCommand } from '../../src/worker/redact-args.js';

describe('redactArgs: the handler command as the worker shows it', () => {
  it('redacts the values of secret-looking options, separate or =-joined, and env assignments', () => {
    expect(redactArgs(['--api-key', 'sk-1', '--apikey=sk-2', '--auth-token', 't', '--client_secret=s', '--db-password', 'p', 'GITHUB_TOKEN=ghp', '-passwd', 'x'])).toEqual([
      '--api-key', '***', '--apikey=***', '--auth-token', '***', '--client_secret=***', '--db-password', '***', 'GITHUB_TOKEN=***', '-passwd', '***',
    ]);
  });

  it('keeps what is not a secret: other options, words that only contain one, a flag followed by another flag', () => {
    expect(redactArgs(['--keyboard', 'us', '--tokenizer', 'bpe', '--model', 'opus', 'script.js', '--token', '--verbose', '--key'])).toEqual([
      '--keyboard', 'us', '--tokenizer', 'bpe', '--model', 'opus', 'script.js', '--token', '--verbose', '--key',
    ]);
  });

  it('redacts the password of URLs with user:password@, keeping user and host', () => {
    expect(redactArgs(['redis://app:pw@cache:6379/0', '--db=postgres://u:p%40ss@db/x', 'https://example.com/a:b@c', 'http://user@host/'])).toEqual([
      'redis://app:***@cache:6379/0', '--db=postgres://u:***@db/x', 'https://example.com/a:b@c', 'http://user@host/',
    ]);
    expect(shownCommand('./agent.sh', ['--api-key', 'sk-1', 'input.txt'])).toBe('./agent.sh --api-key *** input.txt');
  });
});
